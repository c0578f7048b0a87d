"""`seamgate mutations reds --ref GITREF`: the red set of a selection at a git ref, with the working
tree's tests laid over it (the source state of a red-first gate), printed as that gate's block."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode
from tests.reports.fixture_projects import CALC, git, write_project

NEW = "tests/test_mul_zero.py"
OLD_MUL = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b + (1 if b == 0 else 0)\n"
NEW_TEST = ("from calc.ops import mul\n\n\n"
            "def test_mul_by_zero():\n    assert mul(3, 0) == 0\n\n\n"
            "def test_mul_by_one():\n    assert mul(3, 1) == 3\n")
PRINTED = (
    f"# ref pre: 1 red case(s) over {NEW} (cpu-emulated, every case run; {NEW} laid over the ref)\n"
    f"source: {{ref: pre, overlay: [{NEW}]}}\n"
    f"select: [{NEW}]\n"
    "expect:\n"
    "  red:\n"
    "    nodeids:\n"
    f"      - \"{NEW}::test_mul_by_zero\"\n"
    "  counts: {cases: 1, passed: 0, failed: 1}\n"
    "  green_after: true\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Two commits: `pre` with mul wrong at zero; then mul fixed, with the new test that shows it."""
    root = write_project(tmp_path / "repo", {**CALC, "calc/ops.py": OLD_MUL, "pyproject.toml": "[tool.seamgate]\n"})
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "old")
    git(root, "tag", "pre")
    write_project(root, {"calc/ops.py": CALC["calc/ops.py"], NEW: NEW_TEST})
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "mul fixed at zero, with its test")
    return root


def reds(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["--project", str(root), "mutations", "reds", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_reds_of_a_ref_prints_the_red_first_block_and_a_gate_made_of_it_passes(repo: Path, capsys) -> None:
    code, out, err = reds(repo, capsys, "--ref", "pre", "--select", NEW)
    assert (code, out) == (ExitCode.OK, PRINTED), err
    block = "".join(f"    {line}\n" for line in out.splitlines()[1:])
    (repo / "gates").mkdir()
    (repo / "gates" / "rf.yaml").write_text("version: 1\ngates:\n  - id: rf\n    kind: red-first\n    title: rf\n"
                                            "    arms: [cpu-emulated]\n" + block)
    code = main(["--project", str(repo), "run", "--gate", "rf"])
    out, _ = capsys.readouterr()
    assert code == ExitCode.OK and f"rf [cpu-emulated] PASS: red-first against ref pre: reds exactly {NEW}::test_mul_by_zero" in out


def test_reds_of_a_ref_without_select_takes_what_the_red_first_gates_on_that_ref_select(repo: Path, capsys) -> None:
    (repo / "gates").mkdir()
    (repo / "gates" / "g.yaml").write_text(
        "version: 1\ngates:\n"
        f"  - {{id: rf, kind: red-first, source: {{ref: pre, overlay: [{NEW}]}}, select: [{NEW}],\n"
        f"     expect: {{red: {{count: 1}}}}}}\n")
    code, out, err = reds(repo, capsys, "--ref", "pre")
    assert (code, out) == (ExitCode.OK, PRINTED), err


def test_an_unknown_ref_is_a_usage_error_naming_it_without_a_traceback(repo: Path, capsys) -> None:
    code, out, err = reds(repo, capsys, "--ref", "no-such-ref", "--select", NEW)
    assert code == ExitCode.USAGE_ERROR and out == ""
    assert "no commit named 'no-such-ref'" in err and "Traceback" not in err
    assert not (repo / ".seamgate").exists()  # refused before anything ran


def test_a_ref_in_a_project_outside_git_is_an_environment_error(tmp_path: Path, capsys) -> None:
    root = write_project(tmp_path / "plain", {**CALC, "pyproject.toml": "[tool.seamgate]\n"})
    code, out, err = reds(root, capsys, "--ref", "HEAD~1", "--select", "tests")
    assert code == ExitCode.ENVIRONMENT and out == ""
    assert "not a git repository" in err and "Traceback" not in err


def test_reds_wants_a_mutation_id_or_a_ref_but_not_both(repo: Path, capsys) -> None:
    code, _, err = reds(repo, capsys, "--select", NEW)
    assert code == ExitCode.USAGE_ERROR and "name a mutation ID or --ref GITREF" in err
    code, _, err = reds(repo, capsys, "some-id", "--ref", "pre", "--select", NEW)
    assert code == ExitCode.USAGE_ERROR and "not both" in err


def test_a_selected_path_missing_from_the_working_tree_is_a_usage_error(repo: Path, capsys) -> None:
    code, _, err = reds(repo, capsys, "--ref", "pre", "--select", "tests/test_gone.py")
    assert code == ExitCode.USAGE_ERROR and "tests/test_gone.py" in err and "Traceback" not in err
