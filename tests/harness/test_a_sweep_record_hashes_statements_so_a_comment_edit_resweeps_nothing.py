"""The CI sweep's records (scripts/sweep_judges.py) hash a Python file by its statements: a mutant and the cases
that kill it are statements, so editing a comment or a docstring of a swept file sweeps nothing again, and editing a
statement does. A record written before (raw bytes, no ``"hash"`` key) is read as it was written, and ``--rehash``
rewrites it by statements only while every file is still as it recorded."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("sweep_judges_statements", ROOT / "scripts" / "sweep_judges.py")
assert _SPEC is not None and _SPEC.loader is not None
judges = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(judges)

JUDGE = '''"""A judge."""


def verdict(red: int) -> str:
    # red cases decide
    return "FAIL" if red else "PASS"  # the verdict
'''
#: A reviewed equivalent of ``verdict``'s mutants (not a true one: what matters here is the line it pins).
EQUIVALENTS = '''version: 1
equivalent:
  - mutant: pkg.judge.x_verdict__mutmut_4
    line: 'return "fail" if red else "PASS"  # the verdict'
    reason: r
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> "judges.Group":
    """A project of one swept file and its one test, with the script pointed at it."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "judge.py").write_text(JUDGE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_judge.py").write_text("from pkg.judge import verdict\n\n\ndef test_red():\n"
                                                      "    assert verdict(1) == 'FAIL'\n")
    (tmp_path / "tests" / "equivalent_mutants.yaml").write_text(EQUIVALENTS)
    monkeypatch.setattr(judges, "ROOT", tmp_path)
    return judges.Group(name="one", files=("pkg/judge.py",), tests=("tests/test_judge.py",), record="record.json")


def edit(group: "judges.Group", old: str, new: str) -> None:
    path = judges.ROOT / group.files[0]
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def bytes_record(group: "judges.Group") -> dict[str, str]:
    """The record as the script wrote it before statements: no "hash" key, raw bytes."""
    hashes = {rel: judges.sha(rel, group, judges.BYTES) for rel in (*group.files, *group.everything)}
    (judges.ROOT / group.record).write_text(json.dumps({"sha256": hashes}))
    return hashes


def swept(group: "judges.Group") -> tuple[list[str], str]:
    record = judges.read_record(group)
    return judges.to_sweep(record.sha256, group, record.reading, record.pins)


def test_a_comment_or_docstring_edit_sweeps_nothing_and_a_statement_edit_sweeps_the_file(project) -> None:
    judges.write_record(project)
    assert judges.read_record(project).reading == judges.STATEMENTS and swept(project) == ([], "")
    edit(project, "# red cases decide", "# the red cases decide the verdict")
    edit(project, '"""A judge."""', '"""A judge, reworded."""')
    assert swept(project) == ([], "")
    edit(project, 'return "FAIL" if red else "PASS"', 'return "FAIL" if red > 1 else "PASS"')
    files, why = swept(project)
    assert files == ["pkg/judge.py"] and "pkg/judge.py" in why


def test_an_inline_comment_on_a_line_an_equivalence_entry_pins_sweeps_the_file(project) -> None:
    """The pinned line is the mutant's whole line, its comment included: the next sweep would call the entry
    STALE and the survivor unexplained, so the statements alone cannot say "nothing to sweep"."""
    judges.write_record(project)
    edit(project, "# the verdict", "# the verdict, said once")
    files, why = swept(project)
    assert files == ["pkg/judge.py"] and "equivalence entry pins" in why


def test_a_record_of_raw_bytes_is_read_as_written_so_a_comment_edit_still_sweeps(project) -> None:
    bytes_record(project)
    assert judges.read_record(project).reading == judges.BYTES and swept(project) == ([], "")
    edit(project, "# red cases decide", "# the red cases decide the verdict")
    assert swept(project)[0] == ["pkg/judge.py"]


def test_rehash_rewrites_a_record_of_raw_bytes_by_statements_while_every_file_is_as_recorded(project) -> None:
    bytes_record(project)
    assert judges.rehash(project) == 0
    assert json.loads((judges.ROOT / project.record).read_text())["hash"] == judges.STATEMENTS
    edit(project, "# red cases decide", "# the red cases decide the verdict")
    assert swept(project) == ([], "")
    assert judges.rehash(project) == 0  # already by statements: nothing to do


def test_rehash_refuses_and_changes_nothing_when_a_file_differs_from_the_record(project, capsys) -> None:
    bytes_record(project)
    before = (judges.ROOT / project.record).read_bytes()
    edit(project, "# red cases decide", "# the red cases decide the verdict")
    assert judges.rehash(project) == judges.REHASH_REFUSED
    assert (judges.ROOT / project.record).read_bytes() == before
    assert "pkg/judge.py" in capsys.readouterr().out


def test_rehash_without_a_record_refuses(project) -> None:
    assert judges.rehash(project) == judges.REHASH_REFUSED
    assert not (judges.ROOT / project.record).exists()
