"""A blocking copy between host and device, and a host read of a device value, wait for the work the stream has
queued, as CUDA's synchronous copies do; a non-blocking copy does not.

PyTorch's ``test_to_non_blocking`` and ``test_to_cpu_blocking_by_default`` check it behind a ``torch.cuda._sleep``:
``query()`` is True after a blocking ``to()`` and False after a non-blocking one. The emulated device ran every copy
at once, so a blocking copy left the stream busy (both failed emulated, passed on the H100 at dfdac4d).
"""

from __future__ import annotations

import pytest
import torch

from tests.torch_cuda.sleeps import cycles_per_ms


@pytest.fixture
def busy(torch_cuda: str):
    """A function that queues a 100 ms sleep on the current stream and gives the stream back."""
    per_ms = cycles_per_ms()

    def sleep() -> torch.cuda.Stream:
        torch.cuda.synchronize()
        torch.cuda._sleep(int(100 * per_ms))
        return torch.cuda.current_stream()
    return sleep


@pytest.mark.parametrize("non_blocking", [False, True], ids=["blocking", "non-blocking"])
def test_a_host_to_device_copy_waits_for_the_stream_only_when_blocking(busy, non_blocking: bool) -> None:
    host = torch.arange(1000.0).pin_memory()
    stream = busy()
    device = host.to("cuda", non_blocking=non_blocking)
    assert stream.query() is (not non_blocking)
    stream.synchronize()
    assert torch.equal(device.cpu(), host)


@pytest.mark.parametrize("non_blocking", [False, True], ids=["blocking", "non-blocking"])
def test_a_device_to_host_copy_waits_for_the_stream_only_when_blocking(busy, non_blocking: bool) -> None:
    device = torch.arange(1000.0, device="cuda")
    stream = busy()
    host = device.to("cpu", non_blocking=non_blocking)
    assert stream.query() is (not non_blocking)
    stream.synchronize()
    assert host.is_pinned() is non_blocking
    assert host.tolist() == list(range(1000))


def test_copy_into_a_device_tensor_waits_only_when_blocking(busy) -> None:
    device = torch.zeros(4, device="cuda")
    stream = busy()
    device.copy_(torch.ones(4).pin_memory(), non_blocking=True)
    assert not stream.query()
    device.copy_(torch.ones(4))
    assert stream.query()


def test_reading_a_device_value_on_the_host_waits_for_the_stream(busy) -> None:
    value = torch.tensor(3.0, device="cuda")
    stream = busy()
    assert value.item() == 3.0
    assert stream.query()
