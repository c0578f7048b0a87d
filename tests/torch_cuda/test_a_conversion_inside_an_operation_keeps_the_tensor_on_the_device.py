"""torch's C++ converts a tensor inside some operations with the tensor's own options (``softmax(dtype=)``,
``log_softmax(dtype=)``, ``type_as``: ``self.to(options)``), which on the emulated device name the CPU the
memory really lives on. On a GPU the result stays on ``cuda``; the emulator made it host memory, and the
next operation with a device tensor failed with a mixed-device error no GPU gives (a sampler's
``logits.softmax(-1, dtype=torch.float32)``, a rotary embedding's ``freqs.type_as(x)``). An explicit host
copy (``.cpu()``, ``.to("cpu")``, a CPU tensor type) still leaves the device, and so does ``_to_copy`` called by name
from Python with the CPU named: an AOTAutograd graph's ``x.cpu()`` (``torch.ops.aten._to_copy.default(x, ...,
device=cpu)``) stayed on the device, so ``torch.compile(backend="aot_eager")`` of ``x.cpu() * 3`` returned a
``cuda:0`` tensor (PyTorch's test/dynamo/test_cudagraphs.py ``test_dtoh`` under verify_correctness, session 34)."""

from __future__ import annotations

import torch


def test_conversions_inside_operations_stay_on_the_device(torch_cuda: str) -> None:
    x = torch.randn(4, 4, device="cuda")
    other = torch.ones(1, dtype=torch.float64, device="cuda")
    results = {
        "softmax_dtype": torch.softmax(x, -1, dtype=torch.float64),
        "F_softmax_dtype": torch.nn.functional.softmax(x, -1, dtype=torch.float64),
        "method_softmax_dtype": x.softmax(-1, dtype=torch.float64),
        "log_softmax_dtype": torch.log_softmax(x, -1, dtype=torch.float64),
        "type_as_device": x.type_as(other),
    }
    assert {name: str(t.device) for name, t in results.items()} == dict.fromkeys(results, "cuda:0")
    assert {name: t.dtype for name, t in results.items()} == dict.fromkeys(results, torch.float64)
    # the next operation with a device tensor runs (it raised a mixed-device error on the emulator)
    assert (results["softmax_dtype"] + other).device.type == "cuda"
    assert torch.allclose(results["softmax_dtype"].sum(-1).cpu(), torch.ones(4, dtype=torch.float64))


def test_explicit_host_copies_still_leave_the_device(torch_cuda: str) -> None:
    x = torch.randn(4, 4, device="cuda")
    host = torch.ones(1, dtype=torch.float64)
    copies = {
        "cpu": x.cpu(),
        "to_cpu_dtype": x.to("cpu", torch.float64),
        "to_host_tensor": x.to(host),
        "type_as_host": x.type_as(host),
        "cpu_type_string": x.type("torch.DoubleTensor"),
    }
    assert {name: str(t.device) for name, t in copies.items()} == dict.fromkeys(copies, "cpu")
    assert (copies["type_as_host"] + host).device.type == "cpu"


def test_to_copy_called_by_name_with_the_cpu_named_leaves_the_device(torch_cuda: str) -> None:
    """As an FX graph calls it: the overload, and its packet; a composite operation called by name that converts
    inside with the tensor's options still stays on the device."""
    x = torch.randn(4, device="cuda")
    cpu = torch.device("cpu")
    copies = {
        "overload": torch.ops.aten._to_copy.default(x, dtype=torch.float32, layout=torch.strided, device=cpu),
        "packet": torch.ops.aten._to_copy(x, device=cpu),
    }
    assert {name: str(t.device) for name, t in copies.items()} == dict.fromkeys(copies, "cpu")
    assert (copies["overload"] * 3).device.type == "cpu"
    assert torch.ops.aten.softmax.int(x, 0, torch.float64).device.type == "cuda"


def test_a_compiled_device_to_host_copy_returns_a_host_tensor(torch_cuda: str) -> None:
    import torch._dynamo

    torch._dynamo.reset()
    x = torch.randn(3, device="cuda")
    for backend in ("eager", "aot_eager"):
        out = torch.compile(lambda t: t.cpu() * 3, backend=backend)(x)
        assert out.device.type == "cpu", backend
        assert torch.equal(out, x.cpu() * 3)
        torch._dynamo.reset()
