"""The device mode's fast path (no ``device=``, no capture open on any stream, nothing to note) skips
only what has nothing to do: a capture open on ANOTHER stream still routes and refuses work on a stream
that is not capturing, work on the capturing stream is still recorded, two devices in one kernel are
still refused, new results are still device memory, and the device storages by address (the weak
registry ``torch._C._construct_storage_from_data_pointer`` reads) still find the live ones after their
dead neighbours were dropped."""

from __future__ import annotations

import pytest
import torch

from seam.torch_cuda import addresses, kinds

NOT_PERMITTED = "operation not permitted when stream is capturing"
INVALIDATED = "operation failed due to a previous error during capture"


def test_work_on_the_default_stream_while_a_side_stream_captures_is_refused(emulated: None) -> None:
    x = torch.ones(4, device="cuda")
    side = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    if torch.cuda.current_stream() == side:
        raise RuntimeError("the current stream must differ from the capturing one, otherwise the test is meaningless")
    with torch.cuda.stream(side):
        g.capture_begin()  # global mode: CUDA refuses an allocation on any other stream
    try:
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError("the default stream must not be capturing, otherwise the test is meaningless")
        with pytest.raises(RuntimeError, match=NOT_PERMITTED):
            x + x  # a plain pointwise op: the fast path's case, but a capture is open elsewhere
    finally:
        with torch.cuda.stream(side), pytest.raises(RuntimeError, match=INVALIDATED):
            g.capture_end()


def test_a_plain_op_on_the_capturing_stream_is_recorded_not_run(emulated: None) -> None:
    x = torch.ones(2, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x.mul_(3)
        y = x + 1
    assert x.tolist() == [1.0, 1.0]  # the capture ran nothing
    g.replay()
    assert x.tolist() == [3.0, 3.0] and y.tolist() == [4.0, 4.0]


def test_a_device_and_a_host_tensor_in_one_kernel_are_refused_outside_any_capture(emulated: None) -> None:
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ones(2, device="cuda") + torch.ones(2)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.cat([torch.ones(2, device="cuda"), torch.ones(2)])
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.cat([torch.ones(2), torch.ones(2, device="cuda")])  # the device tensor second in the list


def test_device_tensors_seen_only_in_a_list_argument_make_device_results(emulated: None) -> None:
    x = torch.ones(2, device="cuda")
    assert torch.cat([x, x]).is_cuda and torch.stack([x, x]).is_cuda
    assert torch.cat([torch.ones(2), torch.ones(2)]).device == torch.device("cpu")


def test_new_results_are_device_memory_and_host_work_stays_on_the_host(emulated: None) -> None:
    x = torch.ones(2, 3, device="cuda")
    assert (x + x).is_cuda and x.t().is_cuda and torch.layer_norm(x, [3]).is_cuda
    assert torch.randn(2, device="cuda").is_cuda and torch.rand_like(x).is_cuda
    host = torch.ones(2, 3)
    assert not (host + host).is_cuda and (host + host).device == torch.device("cpu")


def test_a_live_device_storage_is_found_by_address_after_its_dead_neighbours_are_dropped(
        emulated: None, monkeypatch: pytest.MonkeyPatch) -> None:
    prunings = []
    prune = kinds._prune
    monkeypatch.setattr(kinds, "_prune", lambda: (prunings.append(1), prune()))
    monkeypatch.setattr(kinds, "_PRUNE_FLOOR", 16)
    monkeypatch.setattr(kinds, "_PRUNE_AT", 16)
    kept = torch.ones(16, device="cuda")
    before = torch.cuda.memory_allocated()
    for _ in range(5):
        batch = [torch.ones(16 + n, device="cuda") for n in range(40)]  # live together: 40 addresses
        del batch
    assert prunings, "the registry was never pruned: the test is meaningless"
    # the registry is keyed by the CPU address; data_ptr() says the allocator model's (addresses.py)
    assert kinds.storage_at(addresses.real_storage_ptr(kept.untyped_storage())) is kept.untyped_storage()
    assert addresses.storage_at(kept.data_ptr()) is kept.untyped_storage()
    assert torch.cuda.memory_allocated() == before
    assert len(kinds._BY_ADDRESS) <= kinds._PRUNE_AT  # the dead are dropped: the registry does not grow forever
    alias = torch._C._construct_storage_from_data_pointer(kept.data_ptr(), kept.device, kept.untyped_storage().nbytes())
    assert alias.data_ptr() == kept.data_ptr()
