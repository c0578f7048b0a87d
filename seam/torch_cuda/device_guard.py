"""A CUDA device guard for a CPU-only build of torch while the emulation is on: compiled code indexes device tensors.

torch's C++ opens a device guard on a tensor's device before some operations (Python indexing, ``x[1:3]``, opens one
in ``THPVariable_getitem``). The emulated device's own tensors are CPU tensors to C++ and never ask, but
torch.compile traces with fake tensors whose device is ``cuda:0``, and a CPU-only build registers no guard for CUDA:
every such trace raised "PyTorch is not linked with support for cuda devices" and dynamo refused the graph.

torch has the guard a fake CUDA tensor needs (``c10::impl::FakeGuardImpl``, set by
``torch._C._ensureCUDADeviceGuardSet``, which ``FakeTensorMode`` calls), but sets it only where a CUDA build found
no device: it replaces a registered CUDA guard whose device count is 0 and leaves an empty slot empty. So for that
one call the CUDA slot of c10's registry (``device_guard_impl_registry``, read through ``ctypes``) holds another
registered guard whose device count is 0 (the lazy-tensor backend's, with no lazy backend registered), and torch
puts its fake CUDA guard in its place. Leaving the emulation empties the slot again; entering it again puts the same
guard back. torch keeps that guard alive in a thread-local of the thread that asked for it, so a thread of ours that
lives as long as the process asks (a guard made on a test's thread would die with that thread, under the registry).

A CUDA build registers its own guard (on a machine without a GPU torch's call above replaces it), so nothing is done
there, and nothing where c10's registry or torch's call is not found: tracing then fails as before.

Side effect, for the process: autograd's engine makes one worker thread per device of every registered guard at its
first backward; a first backward inside the emulation also makes one per device the fake guard counts (idle: the
emulated device's tensors are CPU tensors to the engine, and its backward runs on the calling thread). To count them:
``len(os.listdir("/proc/self/task"))`` before and after ``(torch.ones(3, device="cuda", requires_grad=True) * 2).sum()
.backward()`` in a fresh process inside ``emulate_cuda()`` (3 and 11 threads with torch 2.13, session 32).
"""

from __future__ import annotations

import ctypes
import functools
import threading
from pathlib import Path
from typing import Any, Callable

import torch

#: c10's registry of device guards, an array of atomic pointers indexed by ``c10::DeviceType``.
REGISTRY = "_ZN3c104impl26device_guard_impl_registryE"
#: ``c10::DeviceType::CUDA``.
CUDA = 1
#: The device types every torch 2 knows (``PrivateUse1`` is 20); the registry has at least as many slots.
SLOTS = 21

_lock = threading.Lock()
#: The address of torch's fake CUDA guard once made (0: not made yet; None: it cannot be made here).
_fake: int | None = 0


@functools.cache
def torch_library(name: str) -> ctypes.CDLL:
    """One of torch's own shared libraries (``lib/`` beside its package), opened once; OSError where it is not."""
    return ctypes.CDLL(str(Path(torch.__file__).resolve().parent / "lib" / name))


@functools.cache
def _registry() -> Any:
    """c10's registry as a ctypes array of its first ``SLOTS`` slots, or None where it is not found (looked up once:
    each ``emulate_cuda()`` entry asks)."""
    try:
        return (ctypes.c_void_p * SLOTS).in_dll(torch_library("libc10.so"), REGISTRY)
    except (OSError, ValueError, AttributeError):
        return None


def _ask_torch(slots: Any) -> int | None:
    """Have torch set its fake CUDA guard (the module docstring says how); its address, the slot emptied again."""
    ensure = getattr(torch._C, "_ensureCUDADeviceGuardSet", None)
    made = None
    if ensure is not None:
        for index in range(SLOTS):
            candidate = slots[index]
            if index == CUDA or not candidate:
                continue
            slots[CUDA] = candidate
            ensure()
            if slots[CUDA] != candidate:
                made = slots[CUDA]
                break
    slots[CUDA] = None
    return made


def _fake_guard(slots: Any) -> int | None:
    """torch's fake CUDA guard, made once per process on a thread that never ends."""
    global _fake
    if _fake == 0:
        made: list[int | None] = []
        asked = threading.Event()

        def keep() -> None:
            made.append(_ask_torch(slots))
            asked.set()
            threading.Event().wait()  # torch's guard lives in this thread's thread-local storage

        threading.Thread(target=keep, name="seamgate-cuda-device-guard", daemon=True).start()
        asked.wait()
        _fake = made[0]
    return _fake


def install() -> Callable[[], None]:
    """Put a CUDA device guard in c10's registry where a CPU-only torch has none; what takes it out again."""
    with _lock:
        slots = _registry()
        if slots is None or slots[CUDA]:
            return _nothing
        guard = _fake_guard(slots)
        if guard is None:
            return _nothing
        slots[CUDA] = guard

    def remove() -> None:
        with _lock:
            if slots[CUDA] == guard:
                slots[CUDA] = None

    return remove


def _nothing() -> None:
    return None
