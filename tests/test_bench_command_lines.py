"""The benchmarks say what they do before they take minutes: `bench_sweep.py --help` gives every default and
how long each mode runs, and `bench_suite.py` measures COLD runs unless `--reuse` asks (issue 27, item 8)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    if spec is None or spec.loader is None:
        raise AssertionError(f"bench/{name}.py cannot be imported")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_sweep_help_gives_every_default_and_how_long_each_mode_takes(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        _bench("bench_sweep").main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: seam/step_input.py)" in text and "(default: 2)" in text
    assert "tests/seam/test_step_input.py" in text  # --tests' default, given when none is named
    for mode in ("default mode", "--real", "--real --all-killers"):
        assert f"{mode}: about" in text and "min" in text, f"--help must say how long {mode!r} takes"


def _argvs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str) -> list[list[str]]:
    """The `seamgate run` command lines `bench_suite.py ARGS` starts (each answered with a one-gate report)."""
    suite = _bench("bench_suite")
    seen: list[list[str]] = []

    def fake(argv: list[str], **_: object) -> object:
        seen.append(argv)
        report = Path(argv[argv.index("--json") + 1])
        report.write_text(json.dumps({"outcomes": [{"gate": "g", "arm": "cpu-emulated", "verdict": "PASS",
                                                     "runs": []}]}))
        return type("Done", (), {"stdout": "", "returncode": 0})()

    monkeypatch.setattr(suite.subprocess, "run", fake)
    assert suite.main(["--out", str(tmp_path), *args]) == 0
    return seen


def test_bench_suite_measures_cold_runs_by_default_and_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]):
    argvs = _argvs(monkeypatch, tmp_path)
    assert len(argvs) == 2 and all("--no-reuse" in argv for argv in argvs)
    assert "measured: cold" in capsys.readouterr().out


def test_bench_suite_with_reuse_measures_warm_runs_and_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]):
    argvs = _argvs(monkeypatch, tmp_path, "--reuse")
    assert len(argvs) == 2 and not any("--no-reuse" in argv for argv in argvs)
    assert "measured: warm" in capsys.readouterr().out
