"""A pytest plugin for issue 24's One seam step (``-p scripts.one_seam_plugin``): the ``backend`` fixture's
``cpu-emulated`` instance is a ``CudaBackend``, so with the whole process emulated the seam's suites run on
the ``torch.cuda`` API on the emulator. docs/torch-cuda.md ("One seam: where it stands") was measured with:

    SEAM_EMULATE_CUDA=1 SEAM_ARMS=cpu-emulated .venv/bin/python -m pytest -q -p no:cacheprovider -p scripts.one_seam_plugin tests/seam tests/drivers
"""

from __future__ import annotations

import seam.pytest_plugin as arms

_make_backend = arms.make_backend


def make_backend(arm: str):  # noqa: ANN201 - the fixture's factory, as seam.pytest_plugin has it
    from seam import CudaBackend

    return CudaBackend() if arm == "cpu-emulated" else _make_backend(arm)


arms.make_backend = make_backend
