"""`seamgate init`: the scaffold's first gate passes on an empty pytest project; it never overwrites anything."""

from __future__ import annotations

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
           "seamgate_example/test_seamgate_example.py"]


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
