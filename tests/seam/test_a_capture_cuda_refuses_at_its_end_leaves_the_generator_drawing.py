"""A capture that CUDA refuses at its end leaves the device's random generator drawing, through the seam.

torch's ``CUDAGraph.capture_end`` runs its generators' ``capture_epilogue`` only after ``cudaStreamEndCapture``
succeeds (torch 2.11), so after a refused end the default CUDA generator still counts itself capturing, and every
eager draw on the device raises "Offset increment outside graph capture encountered unexpectedly." for the rest of
the process (``tests/torch_cuda/test_a_refused_capture_end_leaves_the_generator_capturing.py``). Found on the H100
(session 23): after tests/seam's invalidated-capture test, every ``torch.randn(device="cuda")`` of its pytest process
failed. ``CudaBackend`` ends the generator's capture itself when CUDA refuses an end, so an engine that falls back to
eager after a failed capture still samples. Both arms, each refusal in a fresh child (as the allocator's test).
"""

from __future__ import annotations

import json

import pytest

from .conftest import REFUSED_ENDS, refused_then, run_child

CHILD = """
torch.manual_seed(0)
drawn = torch.randn(3, device="cuda")
graph = BreakableGraph(backend, CaptureMode.FULL)
with GraphCaptureScope(backend, q, graph):  # and the seam still captures afterwards
    y = x * 2
print(json.dumps([list(drawn.shape), backend.capturing]))
"""


@pytest.mark.parametrize("refused", sorted(REFUSED_ENDS))
def test_after_a_refused_end_an_eager_draw_on_the_device_works(torch_cuda: str, refused: str) -> None:
    done = run_child(refused_then(REFUSED_ENDS[refused], CHILD))
    assert done.returncode == 0, done.stderr[-1500:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[3], False]
