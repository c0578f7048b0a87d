"""pytest 9.1 drops a sub-folder's conftest fixtures for its files given after a file of an ancestor
folder (pytest-dev/pytest#14964, #14971, #14997; fixed in 9.2): `pytest tests/seam/a.py tests/top.py
tests/seam/b.py` runs b WITHOUT tests/seam/conftest.py's autouse fixtures. A gate's selection (or the
union of several) can interleave like that, so seamgate hands pytest its selection grouped by folder:
every entry under one folder stays contiguous, folders and entries otherwise in the order given.
Seen on the H200 machine (pytest 9.1.1): a shuffled whole-suite order ran tests/seam/test_inert.py
with no counter reset, and it read the counters of the tests before it."""

from __future__ import annotations

from pathlib import Path

from harness.rows.executor import Run, pytest_argv
from harness.plan.matrix import grouped_by_folder


def test_a_file_of_an_ancestor_folder_never_sits_between_files_of_a_sub_folder():
    assert grouped_by_folder(("tests/seam/a.py", "tests/top.py", "tests/seam/b.py::test_x[cuda-1]")) == (
        "tests/seam/a.py", "tests/seam/b.py::test_x[cuda-1]", "tests/top.py")


def test_folders_and_entries_keep_the_order_they_were_given_in():
    given = ("tests/drivers", "tests/seam/z.py", "tests/harness/x.py::t", "tests/seam/a.py", "tests/drivers2/b.py",
             "tests/harness/x.py::s")
    assert grouped_by_folder(given) == ("tests/drivers", "tests/seam/z.py", "tests/seam/a.py", "tests/harness/x.py::t",
                                        "tests/harness/x.py::s", "tests/drivers2/b.py")
    assert grouped_by_folder(("b.py", "a/c.py", "a.py")) == ("b.py", "a/c.py", "a.py")
    assert grouped_by_folder(()) == ()


def test_the_pytest_command_line_of_a_run_carries_its_selection_grouped(tmp_path: Path):
    argv = pytest_argv(Run("r", tmp_path, ("tests/seam/a.py", "tests/top.py", "tests/seam/b.py")),
                       tmp_path / "j.xml", tmp_path / "c.json")
    assert argv[:3] == ["tests/seam/a.py", "tests/seam/b.py", "tests/top.py"]
