"""A project whose folder is a link (a shared data or vendored folder, the subjects of this repository's own sweep)
is copied with its link, and a file the copy rules include under it is not copied again through the link.

Before, ``materialize`` copied the link, then each included file under it to the same path: through the link, onto
the file itself (``shutil.SameFileError``, a traceback and "this is a bug in seamgate" from ``seamgate sweep``; found
when session 22's sweep ran in a clone whose ``.subjects`` was a link).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.project_copy import materialize


def test_an_included_file_under_a_linked_folder_is_reached_through_the_copys_link(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "lib.py").write_text("VALUE = 1\n")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n\n[tool.seamgate]\ncopy_include = ['vendored/*.py']\n")
    (project / "vendored").symlink_to(shared, target_is_directory=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    before = (shared / "lib.py").stat().st_mtime_ns
    copy = materialize(project, tmp_path / "copy", None)
    assert (copy / "vendored").is_symlink() and (copy / "vendored" / "lib.py").read_text() == "VALUE = 1\n"
    assert (shared / "lib.py").stat().st_mtime_ns == before and sorted(p.name for p in shared.iterdir()) == ["lib.py"]
