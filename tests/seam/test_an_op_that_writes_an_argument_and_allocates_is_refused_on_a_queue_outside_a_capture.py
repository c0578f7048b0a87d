"""Work that writes an argument AND allocates its results is refused on a queue outside a capture.

A training batch norm updates its running statistics in place and allocates its results. On a queue
outside an open capture CUDA refuses that allocation whenever its cache cannot serve it (H200:
"operation not permitted when stream is capturing"), so the seam refuses it always, as it does any
allocating work there (``CaptureStateError``), and the capture ends invalidated even when the body
swallows the error. The guard counted an op that writes an argument as not allocating and let it
through (docs/seam.md, "Known gaps", 4).
"""

from __future__ import annotations

import pytest
import torch

from seam import Backend, BreakableGraph, CaptureInvalidatedError, CaptureStateError, GraphCaptureScope

OPS = {
    "batch_norm_with_update": lambda x, mean, var, noise: torch.ops.aten._batch_norm_with_update(x, None, None, mean, var, 0.1, 1e-5),
    "native_batch_norm_legit": lambda x, mean, var, noise: torch.ops.aten._native_batch_norm_legit(x, None, None, mean, var, True, 0.1, 1e-5),
    "rrelu_with_noise": lambda x, mean, var, noise: torch.ops.aten.rrelu_with_noise(x, noise, 0.1, 0.3, True),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_it_is_refused_and_the_capture_ends_invalidated_naming_it(backend: Backend, op: str) -> None:
    x = backend.to_device(torch.tensor([[1.0], [3.0]]))
    mean, var, noise = backend.to_device(torch.zeros(1)), backend.to_device(torch.ones(1)), backend.to_device(torch.ones(2, 1))
    side = backend.new_queue()
    refused = []
    with pytest.raises(CaptureInvalidatedError, match="allocated outside the capture"), torch.no_grad():
        with GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
            x.mul_(1)
            with backend.use_queue(side):
                try:
                    OPS[op](x, mean, var, noise)
                except CaptureStateError as err:
                    refused.append(str(err))
    assert len(refused) == 1 and "allocates device memory" in refused[0]
