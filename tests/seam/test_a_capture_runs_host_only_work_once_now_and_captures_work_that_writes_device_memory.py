"""A capture runs host-only work once, now, whole; work that writes device memory is captured.

Host memory is not part of a CUDA graph: an op in the captured body whose tensors are all host
memory runs ONCE, at capture, with every argument it was given (keywords included), and a replay
never repeats it (H200 ``host_op_in_body``). What makes an op device work is any device tensor it
touches, an ``out=`` buffer included: ``linspace(a, b, 4, out=d)`` with host 0-dim ``a``, ``b`` and a
device ``d`` is a kernel of the graph (H200, measured for this file with ``torch.linspace``: ``d``
keeps its value through the capture, the first replay writes ``[0, 1, 2, 3]``, and a later change of
the host ``b`` is not seen: the host scalars were read at capture). The test issues the aten
overload itself (``aten.linspace.Tensor_Tensor_out``), as a traced or compiled program does.
"""

from __future__ import annotations

import torch

from seam import EmulatedBackend

from .conftest import capture_full


def test_a_host_op_with_a_keyword_argument_in_the_body_runs_once_now_with_it(emu: EmulatedBackend) -> None:
    host, step = torch.ones(2), torch.full((2,), 10.0)
    x = emu.to_device(torch.zeros(2))

    def body() -> None:
        host.add_(step, alpha=2)
        x.add_(1)

    g, _ = capture_full(emu, body)
    assert host.tolist() == [21.0, 21.0]
    g.replay()
    g.replay()
    assert host.tolist() == [21.0, 21.0] and x.tolist() == [2.0, 2.0]


def test_an_op_from_host_scalars_into_a_device_out_buffer_is_captured_with_the_scalars_baked(emu: EmulatedBackend) -> None:
    d = emu.to_device(torch.full((4,), -1.0))
    start, end = torch.tensor(0.0), torch.tensor(3.0)
    g, _ = capture_full(emu, lambda: torch.ops.aten.linspace.Tensor_Tensor_out(start, end, 4, out=d))
    assert d.tolist() == [-1.0] * 4  # nothing ran at capture
    g.replay()
    assert d.tolist() == [0.0, 1.0, 2.0, 3.0]
    end.fill_(6.0)
    d.zero_()
    g.replay()
    assert d.tolist() == [0.0, 1.0, 2.0, 3.0]
