"""A small model's replay equals its eager forward bit-exactly (G1 on the seam's own model)."""

from __future__ import annotations

import torch

from seam import Backend, CaptureMode, capture_one, get_graph_break_stats

from seam.testing import TinyModel


def test_a_small_models_replay_equals_its_eager_forward_over_four_replays_with_changing_inputs(backend: Backend) -> None:
    model = TinyModel(backend)
    static_x = backend.alloc((4, 16))  # [B, H]
    with torch.no_grad():
        done = capture_one(lambda: model.forward(static_x), backend=backend, graph=CaptureMode.FULL)
        assert get_graph_break_stats().segments_captured > 0, "capture really happened"
        differing = 0
        for step in range(6):
            x = torch.randn(4, 16, generator=torch.Generator().manual_seed(100 + step))
            backend.copy(static_x, x, backend.default_queue())
            done.graph.replay()
            backend.synchronize()
            eager = model.forward(backend.to_device(x))
            differing += int((done.output != eager).sum())
            assert not torch.equal(done.output, torch.zeros_like(done.output))
    assert differing == 0
    assert get_graph_break_stats().replays == 6
