"""Every way engines make a tensor on "cuda" gives a tensor that reports ``cuda:0`` and ``is_cuda``."""

from __future__ import annotations

import threading

import pytest
import torch

CUDA0 = torch.device("cuda", 0)


def _made_under(device: object) -> torch.Tensor:
    with torch.device(device):  # the default device for factories, as model code sets it
        return torch.ones(2)


def _module_made_under(device: object) -> torch.Tensor:
    with torch.device(device):
        return torch.nn.Linear(2, 2).weight


MAKERS = {
    "factory_device_string": lambda: torch.zeros(3, device="cuda"),
    "factory_device_object": lambda: torch.ones(3, device=torch.device("cuda", 0)),
    "randn": lambda: torch.randn(2, 2, device="cuda"),
    "arange": lambda: torch.arange(4, device="cuda"),
    "full": lambda: torch.full((2,), 7.0, device="cuda"),
    "tensor_from_data": lambda: torch.tensor([1.0, 2.0], device="cuda"),
    "as_tensor": lambda: torch.as_tensor([1, 2], device="cuda"),
    "dot_cuda": lambda: torch.ones(3).cuda(),
    "to_string": lambda: torch.ones(3).to("cuda"),
    "to_non_blocking": lambda: torch.ones(3).pin_memory().to("cuda", non_blocking=True),
    "to_keyword": lambda: torch.ones(3).to(device="cuda", dtype=torch.float16),
    "new_zeros": lambda: torch.ones(2, device="cuda").new_zeros(5),
    "empty_like": lambda: torch.empty_like(torch.ones(2, device="cuda")),
    "zeros_like_to_device": lambda: torch.zeros_like(torch.ones(2), device="cuda"),
    "result_of_an_op": lambda: torch.ones(2, device="cuda") * 3,
    "view": lambda: torch.ones(4, device="cuda")[1:],
    "module_cuda": lambda: torch.nn.Linear(2, 2).cuda().weight,
    "module_to": lambda: torch.nn.Linear(2, 2).to("cuda").bias,
    # a bare ordinal, as engines write it (``device=torch.cuda.current_device()``)
    "factory_device_ordinal": lambda: torch.empty(2, device=torch.cuda.current_device()),
    "like_device_ordinal": lambda: torch.zeros_like(torch.ones(2), device=0),
    "new_ones_device_ordinal": lambda: torch.ones(2).new_ones(3, device=0),
    "to_ordinal": lambda: torch.ones(3).to(0),
    "to_keyword_ordinal": lambda: torch.ones(3).to(device=0),
    "module_to_ordinal": lambda: torch.nn.Linear(2, 2).to(0).weight,
    "torch_device_ordinal": lambda: torch.ones(2, device=torch.device(0)),
    "default_device_context": lambda: _made_under("cuda"),
    "default_device_context_ordinal": lambda: _made_under(0),
    "module_made_under_the_device_context": lambda: _module_made_under("cuda"),
}


@pytest.mark.parametrize("how", sorted(MAKERS))
def test_a_tensor_made_on_cuda_reports_cuda_0(emulated: None, how: str) -> None:
    t = MAKERS[how]()
    assert t.device == CUDA0
    assert t.is_cuda
    assert t.get_device() == 0


def test_an_ordinal_past_the_one_device_is_refused_in_cudas_words(emulated: None) -> None:
    with pytest.raises(torch.AcceleratorError, match="CUDA error: invalid device ordinal"):
        torch.ones(2, device=1)


def test_a_thread_started_inside_runs_on_the_emulated_device_too(emulated: None) -> None:
    seen: dict[str, object] = {}

    def work() -> None:
        x = torch.ones(2, device="cuda")
        seen["made"], seen["computed"] = x.device, (x + 1).device
        seen["values"] = (x * 3).tolist()

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert seen == {"made": CUDA0, "computed": CUDA0, "values": [3.0, 3.0]}


def test_the_values_are_computed_on_the_cpu(emulated: None) -> None:
    a = torch.arange(4.0, device="cuda")
    assert (a * 2 + 1).tolist() == [1.0, 3.0, 5.0, 7.0]
    assert (a @ a).item() == 14.0


def test_a_host_tensor_stays_on_the_cpu_and_moving_back_copies(emulated: None) -> None:
    h = torch.ones(3)
    assert h.device == torch.device("cpu") and not h.is_cuda
    d = h.cuda()
    back = d.cpu()
    assert back.device == torch.device("cpu")
    back.add_(1)
    assert d.tolist() == [1.0, 1.0, 1.0]  # a copy, not the device memory


def test_moving_a_device_tensor_to_the_device_returns_itself(emulated: None) -> None:
    d = torch.ones(3, device="cuda")
    assert d.cuda() is d
    assert d.to("cuda") is d
    assert d.to("cuda", copy=True) is not d


def test_two_devices_in_one_kernel_are_refused_as_torch_refuses_them(emulated: None) -> None:
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ones(3, device="cuda") + torch.ones(3)
    # a host 0-dim tensor is a scalar CUDA accepts
    assert (torch.ones(3, device="cuda") + torch.tensor(2.0)).is_cuda


def test_pinned_memory_is_a_host_kind_of_its_own(emulated: None) -> None:
    p = torch.ones(3).pin_memory()
    assert p.is_pinned() and not p.is_cuda
    assert not torch.ones(3).is_pinned()
    assert torch.empty(3, pin_memory=True).is_pinned()


def test_numpy_of_a_device_tensor_is_refused_in_torchs_words(emulated: None) -> None:
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        torch.ones(2, device="cuda").numpy()


def test_gradients_of_device_parameters_are_on_the_device(emulated: None) -> None:
    w = torch.ones(3, device="cuda", requires_grad=True)
    (w * 3).sum().backward()
    assert w.grad is not None and w.grad.is_cuda and w.grad.tolist() == [3.0, 3.0, 3.0]


def test_the_device_is_queried_as_one_emulated_gpu(emulated: None) -> None:
    assert torch.cuda.is_available() and torch.cuda.device_count() == 1
    assert torch.cuda.current_device() == 0
    assert "emulated" in torch.cuda.get_device_name(0)
    major, minor = torch.cuda.get_device_capability()
    assert isinstance(major, int) and isinstance(minor, int)
    assert torch.cuda.get_device_properties(0).total_memory > 0
    before = torch.cuda.memory_allocated()
    keep = torch.empty(1 << 18, device="cuda")
    assert torch.cuda.memory_allocated() - before == keep.numel() * 4
    free, total = torch.cuda.mem_get_info()
    assert 0 <= free <= total


def test_torch_accelerator_routes_to_the_emulated_device(emulated: None) -> None:
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is None:
        pytest.skip("this torch has no torch.accelerator")
    assert accelerator.is_available()
    assert accelerator.current_accelerator().type == "cuda"
