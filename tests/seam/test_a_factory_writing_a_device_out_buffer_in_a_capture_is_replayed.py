"""A factory given a device ``out=`` buffer inside a capture is a kernel of the graph; a host one runs now.

``torch.arange(4, out=d)`` writes device memory: CUDA captures it, so ``d`` keeps its contents
through the capture and every replay writes it again (H200: ``torch.linspace`` with ``out=``,
measured for the file on host scalars into an out buffer). The emulator made every factory called
without ``device=`` host memory, now, ``out=`` or not, so such a write ran once at capture and never
at a replay (docs/seam.md, "Known gaps", 2). A factory writing into a HOST buffer still runs once,
now, as any host work in the body does (H200 ``host_op_in_body``).
"""

from __future__ import annotations

import torch

from seam import EmulatedBackend

from .conftest import capture_full


def test_factories_into_device_buffers_write_nothing_at_capture_and_write_again_at_every_replay() -> None:
    emu = EmulatedBackend()
    r, f, s = emu.to_device(torch.full((4,), 9.0)), emu.to_device(torch.full((2,), 9.0)), emu.to_device(torch.full((3,), 9.0))
    g, _ = capture_full(emu, lambda: (torch.arange(4, out=r), torch.full((2,), 5.0, out=f), torch.linspace(0.0, 1.0, 3, out=s)))
    assert r.tolist() == [9.0] * 4 and f.tolist() == [9.0] * 2 and s.tolist() == [9.0] * 3
    g.replay()
    assert r.tolist() == [0.0, 1.0, 2.0, 3.0] and f.tolist() == [5.0, 5.0] and s.tolist() == [0.0, 0.5, 1.0]
    for t in (r, f, s):
        t.zero_()
    g.replay()
    assert r.tolist() == [0.0, 1.0, 2.0, 3.0] and f.tolist() == [5.0, 5.0] and s.tolist() == [0.0, 0.5, 1.0]


def test_a_factory_into_a_host_buffer_in_the_body_runs_once_now() -> None:
    emu = EmulatedBackend()
    host = torch.full((4,), 9.0)
    x = emu.to_device(torch.zeros(1))
    g, _ = capture_full(emu, lambda: (torch.arange(4, out=host), x.add_(1)))
    assert host.tolist() == [0.0, 1.0, 2.0, 3.0]
    host.fill_(7.0)
    g.replay()
    assert host.tolist() == [7.0] * 4 and x.tolist() == [1.0]
