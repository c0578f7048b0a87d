"""`seamgate mutations list|show|check` end to end on a fixture project."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode

SCOPE = "def close(scope):\n    scope.join()\n    scope.end()\n"
CATALOG = (
    "version: 1\nmutations:\n"
    "  - id: seam-no-auto-join\n    title: drop the join before close\n    target: seam/scope.py\n"
    "    delete: \"    scope.join()\\n\"\n"
    "  - id: seam-end-twice\n    title: end the scope twice\n    target: seam/scope.py\n"
    "    insert-after: {anchor: \"    scope.end()\\n\", text: \"    scope.end()\\n\"}\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {"pyproject.toml": "[tool.seamgate]\n", "seam/scope.py": SCOPE, "mutations/catalog/core.yaml": CATALOG}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def cli(project: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["--project", str(project), "mutations", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_prints_a_table_with_id_target_op_and_title(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(project, capsys, "list")
    assert code == ExitCode.OK
    row = next(line for line in out.splitlines() if "seam-end-twice" in line)
    assert "seam/scope.py" in row and "insert-after" in row and "end the scope twice" in row


def test_show_prints_the_unified_diff_of_the_mutated_target(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(project, capsys, "show", "seam-no-auto-join")
    assert code == ExitCode.OK
    assert out == ("--- a/seam/scope.py\n+++ b/seam/scope.py\n@@ -1,3 +1,2 @@\n"
                   " def close(scope):\n-    scope.join()\n     scope.end()\n")


def test_show_of_an_unknown_id_is_a_usage_error_with_a_suggestion(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(project, capsys, "show", "seam-no-autojoin")
    assert code == ExitCode.USAGE_ERROR
    assert "unknown mutation 'seam-no-autojoin' — did you mean 'seam-no-auto-join'?" in err


def test_check_prints_each_diff_stat_and_exits_ok(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(project, capsys, "check")
    assert code == ExitCode.OK
    assert "ok    seam-no-auto-join  seam/scope.py  +0 -1" in out
    assert "ok    seam-end-twice  seam/scope.py  +1 -0" in out


def test_check_names_a_rotted_mutation_and_exits_gate_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "seam/scope.py").write_text(SCOPE.replace("    scope.join()\n", ""))
    code, out, err = cli(project, capsys, "check")
    assert code == ExitCode.GATE_ERROR
    assert "ROT   seam-no-auto-join  seam/scope.py  mutation 'seam-no-auto-join' no longer applies: anchor not found" in out
    assert "1 of 2 mutations do not apply cleanly: seam-no-auto-join" in err


def test_check_reports_an_anchor_that_now_matches_twice(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "seam/scope.py").write_text(SCOPE + SCOPE.replace("close", "split"))
    code, out, _ = cli(project, capsys, "check", "seam-no-auto-join")
    assert code == ExitCode.GATE_ERROR and "matches 2 times" in out and "add `occurrence:`" in out


def test_check_reports_mutated_code_that_does_not_compile(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "seam/scope.py").write_text("def close(scope):\n    scope.join()\n")
    code, out, _ = cli(project, capsys, "check", "seam-no-auto-join")
    assert code == ExitCode.GATE_ERROR
    assert "NO-COMPILE seam-no-auto-join" in out and "does not compile" in out


def test_a_patch_that_no_longer_applies_is_rot(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "mutations/catalog/patch.yaml").write_text(
        "version: 1\nmutations:\n  - {id: p, title: t, target: seam/scope.py, patch: p.diff}\n")
    (project / "mutations/catalog/p.diff").write_text(
        "--- a/seam/scope.py\n+++ b/seam/scope.py\n@@ -2 +2 @@\n-    scope.fork()\n+    pass\n")
    code, out, _ = cli(project, capsys, "check", "p")
    assert code == ExitCode.GATE_ERROR and "patch p.diff on seam/scope.py: hunk 1" in out
