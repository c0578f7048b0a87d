"""Work fingerprints of a driver run: the lane's SHAPE (copies, launches) and a digest of its values.

Copies and launches are per-operation work that no memory pool can absorb, so two runs of the same
lane give the same fingerprint whichever ran first (seed 000: counting allocations measured the
ORDER of the runs instead). The digest lets a lane-identity check say "values identical" in the same
breath as "work different".
"""

from __future__ import annotations

import hashlib
from typing import Iterable

import torch

from seam import Backend, CudaBackend, EagerBackend


def emulated_cuda_backend() -> CudaBackend:
    """The ``cpu-emulated`` arm's backend: the ``cuda`` arm's ``CudaBackend``, on the emulated ``torch.cuda``
    (issue 24, One seam). Outside ``emulate_cuda()`` it turns the emulation on for the rest of this process
    (``seam.torch_cuda.activate``): a lane side runs in a child of its own (``harness/judge/lane.py``)."""
    from seam.torch_cuda import activate, is_emulating

    if not is_emulating():
        activate()
    return CudaBackend()


BACKENDS = {"eager": EagerBackend, "cpu-emulated": emulated_cuda_backend, "cuda": CudaBackend}


def backend_by_name(name: str) -> Backend:
    """A fresh backend for a lane/arm name: ``eager``, ``cpu-emulated`` or ``cuda``."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}")
    return BACKENDS[name]()


def output_digest(outputs: Iterable[torch.Tensor]) -> str:
    """sha256 over the raw bytes of every output, in order."""
    digest = hashlib.sha256()
    for t in outputs:
        digest.update(t.detach().to("cpu").contiguous().numpy().tobytes())
    return digest.hexdigest()


def work_fingerprint(backend: Backend, lane: str, outputs: Iterable[torch.Tensor]) -> dict[str, object]:
    """``{copies, launches, lane, output_digest}`` of everything ``backend`` did so far."""
    return {
        "copies": backend.stats.copies,
        "launches": backend.stats.launches,
        "lane": lane,
        "output_digest": output_digest(outputs),
    }
