"""`seamgate init`: the scaffold's first gate passes on an empty pytest project; it never overwrites anything."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.config import load_config
from harness.exit_codes import ExitCode
from harness.gates.gatefile import load_gate_files
from harness.project import Project
from harness.cli import scaffold
from reports.outcome import Verdict
from tests.reports.fixture_projects import run_quietly, tree_digest

PYTEST_ONLY = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
WRITTEN = ["gates/seamgate_example.yaml", "mutations/seamgate_example.yaml",
           "seamgate_example/test_seamgate_example.py", "seamgate_example/conftest.py"]


def empty_project(root: Path, pyproject: str | None = PYTEST_ONLY) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject)
    return root


def init(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["init", str(root)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_on_an_empty_pytest_project_the_scaffolds_first_gate_passes_under_seamgate_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = empty_project(tmp_path / "proj")
    code, out, _ = init(root, capsys)
    assert code == ExitCode.OK, out
    project = Project.locate(root)
    catalog = project.catalog()
    gates = load_gate_files(project.gate_paths(), project_root=root, catalog=catalog)
    assert [g.id for g in gates] == [scaffold.GATE_ID]
    report, code, text = run_quietly(root, gates, catalog)
    verdicts = {o.arm: o.verdict for o in report.outcomes}
    assert set(verdicts) == {"cpu-emulated", "cuda"}, text  # (on the H200 at 0b7a720 neither came back: owed)
    assert verdicts["cpu-emulated"] is Verdict.PASS, text
    assert verdicts["cuda"] in (Verdict.OWED, Verdict.PASS), text  # OWED here; PASS on a GPU machine
    [emulated] = [o for o in report.outcomes if o.arm == "cpu-emulated"]
    assert [c.nodeid for c in emulated.runs[0].red] == [
        "seamgate_example/test_seamgate_example.py::test_the_step_is_captured_once_and_replayed_for_every_value"
        "[cpu-emulated]"], text
    assert code == ExitCode.OK, text


def test_init_prints_what_it_wrote_and_the_next_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = empty_project(tmp_path)
    code, out, _ = init(root, capsys)
    assert code == ExitCode.OK
    for path in ["pyproject.toml", *WRITTEN]:
        assert path in out and (root / path).is_file(), path
    for command in ("seamgate validate", f"seamgate mutations reds {scaffold.MUTATION_ID}", "seamgate run",
                    'pip install "seamgate[seam]"', "echo .seamgate/ >> .gitignore"):
        assert command in out, command


def test_a_second_init_refuses_lists_what_exists_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = empty_project(tmp_path)
    assert init(root, capsys)[0] == ExitCode.OK
    before = tree_digest(root)
    code, out, err = init(root, capsys)
    assert code == ExitCode.USAGE_ERROR and out == ""
    for thing in ("gates/ already exists", "mutations/ already exists", "seamgate_example/ already exists",
                  "pyproject.toml already has a [tool.seamgate] table", "nothing was written"):
        assert thing in err, thing
    assert "Traceback" not in err
    assert tree_digest(root) == before


def test_a_project_that_already_has_tool_seamgate_is_refused_and_nothing_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = empty_project(tmp_path, "[project]\nname = 'x'\n\n[tool.seamgate]\njobs = 2\n")
    before = tree_digest(root)
    code, _, err = init(root, capsys)
    assert code == ExitCode.USAGE_ERROR
    assert "pyproject.toml already has a [tool.seamgate] table" in err and "gates/" not in err
    assert tree_digest(root) == before and sorted(p.name for p in root.iterdir()) == ["pyproject.toml"]


@pytest.mark.parametrize("existing", ["gates", "mutations", "seamgate_example", "a dangling link named gates"])
def test_one_existing_folder_is_enough_to_refuse_everything(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], existing: str) -> None:
    root = empty_project(tmp_path)
    if existing.startswith("a dangling link"):
        existing = "gates"
        (root / existing).symlink_to(root / "nowhere")
    else:
        (root / existing).mkdir()
    before = tree_digest(root), sorted(p.name for p in root.iterdir())
    code, _, err = init(root, capsys)
    assert code == ExitCode.USAGE_ERROR and f"{existing}/ already exists" in err
    assert (tree_digest(root), sorted(p.name for p in root.iterdir())) == before


def test_the_table_is_appended_and_every_byte_before_it_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    original = ("# my project\r\n[project]\r\nname    =   'odd-spacing'   # a comment\r\n\r\n"
                "[tool.black]\r\nline-length=99").encode()
    root = tmp_path
    (root / "pyproject.toml").write_bytes(original)
    assert init(root, capsys)[0] == ExitCode.OK
    after = (root / "pyproject.toml").read_bytes()
    assert after.startswith(original + b"\r\n\r\n[tool.seamgate]\r\n")
    assert b"\n" not in after.replace(b"\r\n", b"")  # the file's own line endings, throughout
    data = tomllib.loads(after.decode())
    assert data["tool"]["black"] == {"line-length": 99} and data["project"]["name"] == "odd-spacing"
    config = load_config(root)
    assert (config.gates, config.catalog) == (("gates",), ("mutations",))


def test_without_a_pyproject_init_creates_one_holding_only_the_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = empty_project(tmp_path, pyproject=None)
    (root / "pytest.ini").write_text("[pytest]\n")
    code, out, _ = init(root, capsys)
    assert code == ExitCode.OK and "new, holding only [tool.seamgate]" in out
    assert list(tomllib.loads((root / "pyproject.toml").read_text())) == ["tool"]
    assert (root / "pytest.ini").read_text() == "[pytest]\n"


@pytest.mark.parametrize("pyproject, why", [
    ("tool = {black = {line-length = 99}}\n", "would not stay valid TOML"),
    ("[project\nname = 'x'\n", "cannot be read as TOML"),
])
def test_a_pyproject_that_cannot_take_the_table_is_refused_with_the_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], pyproject: str, why: str) -> None:
    root = empty_project(tmp_path, pyproject)
    code, _, err = init(root, capsys)
    assert code == ExitCode.USAGE_ERROR and why in err
    assert sorted(p.name for p in root.iterdir()) == ["pyproject.toml"]
    assert (root / "pyproject.toml").read_text() == pyproject


def test_a_folder_that_does_not_exist_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = init(tmp_path / "nowhere", capsys)
    assert code == ExitCode.USAGE_ERROR and "no such folder" in err
    assert not (tmp_path / "nowhere").exists()


def test_a_write_that_fails_half_way_removes_what_it_wrote_and_restores_the_pyproject(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = empty_project(tmp_path)
    before = tree_digest(root), sorted(p.name for p in root.iterdir())
    real_open = open
    written: list[str] = []

    def failing_open(path, *args, **kwargs):  # the third file cannot be written (a full disk, say)
        written.append(str(path))
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(OSError):
        scaffold.init(root)
    monkeypatch.undo()
    assert len(written) == 3
    assert (tree_digest(root), sorted(p.name for p in root.iterdir())) == before


def test_where_torch_is_missing_init_says_the_examples_tests_need_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    code, out, _ = init(empty_project(tmp_path), capsys)
    assert code == ExitCode.OK and "torch is not installed here" in out
    monkeypatch.undo()
    code, out, _ = init(empty_project(tmp_path / "with"), capsys)
    assert code == ExitCode.OK and "torch is not installed here" not in out


#: A user's own project as cachetools and python-dateutil lay theirs out: a package, its tests, warnings as errors.
OWN_FILES = {
    "pkg/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_pkg.py": "from pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


def plain_pytest(root: Path, hide_torch: Path | None) -> tuple[int, str]:
    """The user's own ``pytest -q`` in ``root`` (a child; no cache, no bytecode); ``hide_torch``: a folder
    whose ``torch`` package raises ModuleNotFoundError, first on the path, as on a machine without torch."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if hide_torch is not None:
        env["PYTHONPATH"] = str(hide_torch)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    summary = [line for line in done.stdout.splitlines() if line.strip()][-1:]
    return done.returncode, re.sub(r" in [0-9.]+s", "", (summary or [done.stderr[-300:]])[0])


@pytest.mark.parametrize("testpaths", [True, False], ids=["testpaths", "no-testpaths"])
@pytest.mark.parametrize("torch_here", [True, False], ids=["torch", "no-torch"])
def test_init_leaves_the_projects_own_plain_pytest_exactly_as_green_as_before(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], testpaths: bool, torch_here: bool) -> None:
    ini = '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n' + ('testpaths = ["tests"]\n' if testpaths else "")
    root = empty_project(tmp_path / "proj", ini)
    for name, text in OWN_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    hide = None
    if not torch_here:
        hide = tmp_path / "no-torch"
        (hide / "torch").mkdir(parents=True)
        (hide / "torch" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    before = plain_pytest(root, hide)
    assert before[0] == 0 and "1 passed" in before[1], before
    code, out, _ = init(root, capsys)
    assert code == ExitCode.OK, out
    assert plain_pytest(root, hide) == before
