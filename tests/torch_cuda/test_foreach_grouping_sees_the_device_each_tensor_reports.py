"""torch's grouping of tensor lists by device and dtype (``torch._C._group_tensors_by_device_and_dtype``, under every
foreach and fused optimizer) sees the device each tensor reports.

Its C++ reads a tensor's real device, so on the emulated device a device tensor and a host one fell into one
group keyed ``cpu``; the fused SGD step then moved its grad scale ``.to("cpu")`` inside a capture, a copy to pageable
host memory that the capture refuses (PyTorch's ``test_graph_scaling_fused_optimizers`` for SGD). On a GPU the
groups are keyed by each tensor's own device.
"""

from __future__ import annotations

import torch
from torch.utils._foreach_utils import _group_tensors_by_device_and_dtype


def test_tensors_group_by_the_device_and_dtype_of_the_first_list(torch_cuda: str) -> None:
    a, b, c = torch.ones(2, device="cuda"), torch.ones(2), torch.ones(2, device="cuda", dtype=torch.float16)
    steps = [torch.zeros(()), torch.zeros(()), torch.zeros((), device="cuda")]  # float steps may stay on the host
    groups = _group_tensors_by_device_and_dtype([[a, b, c], [a * 2, b * 2, c * 2], steps, []], with_indices=True)
    cuda = torch.device("cuda", 0)
    assert set(groups) == {(cuda, torch.float32), (torch.device("cpu"), torch.float32), (cuda, torch.float16)}
    (lists, indices) = groups[(cuda, torch.float32)]
    assert indices == [0] and lists[0][0] is a and lists[2][0] is steps[0] and lists[3] == []
    assert groups[(cuda, torch.float16)][1] == [2]
    assert _group_tensors_by_device_and_dtype([[a, c]], with_indices=False)[(cuda, torch.float16)][1] == []


def test_a_fused_sgd_step_with_a_grad_scaler_captures_and_replays_as_eager(torch_cuda: str) -> None:
    params = [torch.randn(5, 5, device="cuda") for _ in range(2)]
    grads = [[torch.randn_like(p) for p in params] for _ in range(4)]
    results = []
    for graphed in (False, True):
        ps = [p.clone() for p in params]
        opt = torch.optim.SGD(ps, lr=0.1, momentum=0.9, fused=True)
        scaler = torch.amp.GradScaler("cuda", init_scale=128.0)
        scaler._lazy_init_scale_growth_tracker(torch.device("cuda"))
        for i in range(2):
            for p, g in zip(ps, grads[i]):
                p.grad = g.clone()
            scaler.step(opt)
            scaler.update()
        if graphed:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                scaler.step(opt)
                scaler.update()
        for i in range(2, 4):
            for p, grad in zip(ps, grads[i]):
                if graphed:
                    p.grad.copy_(grad)
                else:
                    p.grad = grad.clone()
            if graphed:
                g.replay()
            else:
                scaler.step(opt)
                scaler.update()
        torch.cuda.synchronize()
        results.append([p.clone() for p in ps])
    for eager, replayed in zip(*results):
        assert torch.allclose(eager, replayed)
