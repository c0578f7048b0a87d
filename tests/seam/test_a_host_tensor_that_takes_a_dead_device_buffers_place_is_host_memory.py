"""A host tensor that takes a dead device buffer's place is host memory, and its copy in a capture is refused.

The emulator knows device memory by its storage. When device buffers die, CPython hands the storage
objects made next the addresses they had: host tensors made while the device buffers lived and
looked at right after they died are where a stale entry would read as device memory. On CUDA a host
tensor is host memory whatever died before it, so copying it into a device buffer inside a capture
is refused as the pageable copy it is (H200 ``pageable_copy``).
"""

from __future__ import annotations

import sys

import pytest
import torch

from seam import BreakableGraph, CaptureMode, EmulatedBackend, GraphCaptureScope, PageableCopyError


@pytest.fixture(autouse=True)
def ignored_errors(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What Python would print as "Exception ignored in ...", kept as words only: a hook that kept the
    error itself would keep its frames, and with them the dying buffers, alive."""
    said: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: said.append(f"{u.exc_type.__name__}: {u.exc_value}"))
    return said


def _hosts_made_while_device_buffers_die(emu: EmulatedBackend, n: int) -> list[torch.Tensor]:
    devices = [emu.to_device(torch.tensor([1.0, 2.0])) for _ in range(n)]
    hosts = [torch.full((2,), 5.0) for _ in range(3 * n)]  # made while the device buffers live
    del devices  # every device storage dies here
    for h in hosts:
        h.untyped_storage()  # each host storage object is made now, in the dead ones' places
    return hosts


def test_no_host_tensor_reads_as_device_memory_after_the_device_buffers_before_it_died(ignored_errors: list[str]) -> None:
    emu = EmulatedBackend()
    hosts = _hosts_made_while_device_buffers_die(emu, 100)
    assert [emu.registry.kind_of(h) for h in hosts].count("device") == 0
    assert ignored_errors == []  # forgetting a dead buffer raises nothing behind the user's back


def test_a_copy_from_each_such_host_tensor_into_a_device_buffer_is_refused_in_a_capture() -> None:
    emu = EmulatedBackend()
    target = emu.alloc((2,))
    hosts = _hosts_made_while_device_buffers_die(emu, 4)
    refused = 0
    for host in hosts:
        try:
            with torch.no_grad(), GraphCaptureScope(emu, emu.default_queue(), BreakableGraph(emu, CaptureMode.FULL)):
                target.copy_(host, non_blocking=True)
        except PageableCopyError:
            refused += 1
    assert refused == len(hosts)
    assert target.tolist() == [0.0, 0.0]  # no refused copy ever ran
