"""The real subjects (docs/subjects.md): ``breakable-cuda-graphs`` and ``piecewise-cuda-graphs`` 0.1.0, unmodified.

``scripts/setup.sh`` installs both, pinned, into the git-ignored ``.subjects/`` of the project (and
``pip install -e '.[test]'`` into the environment). ``.subjects`` goes FIRST on ``sys.path`` here, so
that in an off-tree copy made for a named mutation of their code (``[tool.seamgate] copy_include``
carries ``.subjects/*.py``) the tests import the copy's mutated module, never the environment's.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Iterator

import pytest

SUBJECTS = Path(__file__).resolve().parents[2] / ".subjects"
MODULES = ("breakable_cuda_graphs", "piecewise_cuda_graphs")

if SUBJECTS.is_dir():
    if str(SUBJECTS) in sys.path:
        sys.path.remove(str(SUBJECTS))
    sys.path.insert(0, str(SUBJECTS))
    for _name in MODULES:
        _loaded = sys.modules.get(_name)
        if _loaded is not None and Path(_loaded.__file__ or "").resolve().parent != SUBJECTS:
            del sys.modules[_name]  # imported from the environment before this conftest: take .subjects' copy


@pytest.fixture(autouse=True)
def _no_garbage_from_earlier_tests() -> Iterator[None]:
    """Collect earlier tests' garbage before this one captures: a CUDA graph released by the collector
    while a capture is open invalidates that capture, on the H200 as on the emulator."""
    gc.collect()
    yield
