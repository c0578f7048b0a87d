"""A project that never imports torch pays no torch import (issue 26: nothing a real project does makes the
sweep quietly slower): its fork server does not preload torch and its runs' zygotes fork without it (each
imported torch beside ITS session: cachetools' sweep took 38.5 s instead of 22 s). A project that names or
imports torch, or a package of its family, keeps both (``harness/rows/preload.py``). A sweep that reuses
every outcome does not ask at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.rows import executor as executor_module
from harness.rows import preload
from harness.rows.executor import Run
from harness.rows.forkserver import PRELOAD, ForkServer, launcher
from tests.reports.fixture_projects import write_project

PLAIN = {"pyproject.toml": "[project]\nname = 'calc'\ndependencies = ['blowtorch-docs', 'my.torch']\n",
         "calc/__init__.py": "", "calc/ops.py": "def add(a, b):\n    return a + b\n",
         "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
         # an environment inside the project is never read
         ".venv/lib/site.py": "import torch\n"}


def test_a_project_that_neither_names_nor_imports_torch_does_not_use_it(tmp_path: Path) -> None:
    assert preload.uses_torch(write_project(tmp_path / "p", PLAIN)) is False


@pytest.mark.parametrize("where, text", [
    ("pyproject.toml", "[project]\nname = 'calc'\ndependencies = ['torch>=2.4']\n"),
    ("requirements-dev.txt", "torch==2.11.0\n"),
    ("setup.cfg", "[options]\ninstall_requires =\n    torch\n"),
    ("tests/test_model.py", "import os\nfrom torch import nn\n"),
    ("calc/model.py", "def f():\n    import torch\n    return torch.ones(1)\n"),
    # a package of torch's family imports torch itself
    ("pyproject.toml", "[project]\nname = 'calc'\ndependencies = ['torchvision==0.26']\n"),
    ("requirements.txt", "pytorch-lightning\n"),
    ("tests/test_model.py", "from torchvision import transforms\n"),
    ("calc/train.py", "import pytorch_lightning as pl\n"),
])
def test_a_project_that_names_or_imports_torch_uses_it(tmp_path: Path, where: str, text: str) -> None:
    assert preload.uses_torch(write_project(tmp_path / "p", {**PLAIN, where: text})) is True


def test_a_project_too_large_to_read_counts_as_using_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preload, "SCAN_LIMIT", 2)
    many = {f"calc/m{n}.py": "x = 1\n" for n in range(4)}
    assert preload.uses_torch(write_project(tmp_path / "p", {**PLAIN, **many})) is True


def test_the_answer_is_read_once_and_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Path] = []
    monkeypatch.setattr(preload, "uses_torch", lambda root: asked.append(root) or True)
    use = preload.TorchUse(tmp_path)
    assert asked == []
    assert bool(use) is True and bool(use) is True
    assert asked == [tmp_path]


def test_a_run_of_a_project_without_torch_tells_its_zygote_to_import_nothing(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_env.py").write_text(
        "import os, sys\n\n\ndef test_env():\n"
        "    print('PRELOAD=' + repr(os.environ.get('SEAMGATE_ZYGOTE_PRELOAD')))\n")
    seen = []
    for torch in (False, True):
        server = launcher(True, torch=torch)
        try:
            outcome = executor_module.Executor(server, tmp_path / f"w{torch}", torch=torch).execute(
                Run(label="r", tree=tmp_path, select=("tests", "-s")))
        finally:
            server.close()
        seen.append((tmp_path / f"w{torch}" / "runs").glob("*/stdout.txt").__next__().read_text())
        assert outcome.end == "completed", outcome
    assert "PRELOAD=''" in seen[0] and "PRELOAD=None" in seen[1], seen


def test_the_server_of_a_project_without_torch_does_not_preload_it(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, ...]] = []
    monkeypatch.setattr(ForkServer, "start", lambda self: seen.append(self.preload) or self)
    launcher(True, torch=False)
    launcher(True)
    assert seen == [tuple(m for m in PRELOAD if not m.startswith("torch")), PRELOAD]


@pytest.mark.slow
def test_a_sweep_of_a_project_without_torch_runs_without_torch(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")
    from harness.sweep.sweep import Sweep, SweepOptions

    zygotes: list[bool] = []
    original = executor_module.Executor.__init__

    def recording(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - Executor.__init__'s shape
        zygotes.append(bool(kwargs.get("torch", True)))
        original(self, *args, **kwargs)

    monkeypatch.setattr(executor_module.Executor, "__init__", recording)
    root = write_project(tmp_path / "calc", {**PLAIN, "pyproject.toml": "[tool.seamgate]\n"})
    result = Sweep(root, SweepOptions(paths=(str(root / "calc"),), jobs=1, progress="off")).run()
    assert zygotes == [False]
    assert {m.status for m in result.mutants} == {"killed"}, [(m.id, m.status) for m in result.mutants]


@pytest.mark.slow
def test_a_sweep_that_reuses_every_outcome_does_not_ask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")
    from harness.sweep import sweep as sweep_module

    asked: list[Path] = []
    answer = preload.uses_torch

    def counting(root: Path) -> bool:
        asked.append(root)
        return answer(root)

    monkeypatch.setattr(preload, "uses_torch", counting)  # TorchUse asks through the module
    root = write_project(tmp_path / "calc", {**PLAIN, "pyproject.toml": "[tool.seamgate]\n"})
    options = sweep_module.SweepOptions(paths=(str(root / "calc"),), jobs=1, progress="off")
    first = sweep_module.Sweep(root, options).run()
    assert len(asked) == 1 and first.facts["ran"] > 0, (asked, first.facts)
    second = sweep_module.Sweep(root, options).run()
    assert second.facts["ran"] == 0 and [m.status for m in second.mutants] == [m.status for m in first.mutants]
    assert len(asked) == 1, asked
