"""Threads started under the emulated ``torch.cuda`` run on the emulated device too.

torch keeps its dispatch modes per thread, so the device mode pushed by ``emulate_cuda()`` is not
seen by a thread started inside it: there ``torch.ones(2, device="cuda")`` would reach torch's CUDA
kernels (absent from a CPU build) and a kernel on a captured tensor would escape the capture's
checks. Engines start threads (output copiers, thread pools), so every ``threading.Thread`` started
while ``torch.cuda`` is emulated runs its target under a device mode of its own.

A thread started BEFORE ``emulate_cuda()`` is entered (a pool made at import) is already running, and
Python 3.11 has no way to run code in it. The common case is covered: a ``ThreadPoolExecutor`` worker
runs each work item through ``_WorkItem.run``, so while ``torch.cuda`` is emulated that method runs the
item under a device mode of its own, pushed and popped around it (not pushed again in a thread that
has one). A raw thread started before, looping on its own queue, is not changed (docs/torch-cuda.md,
known gaps).
"""

from __future__ import annotations

import threading
from concurrent.futures import thread as futures_thread
from typing import Any

from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

from seam.torch_cuda.dispatch import DeviceMode

_bootstrap_inner = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]
_work_item_run = futures_thread._WorkItem.run


def bootstrap_inner(self: threading.Thread) -> None:
    """``Thread._bootstrap_inner`` (which calls ``run``) under a device mode of this thread's own."""
    with DeviceMode():
        _bootstrap_inner(self)


def work_item_run(self: Any, *args: Any) -> None:
    """``_WorkItem.run`` (a pool's work item) under a device mode, unless this thread has one already."""
    if any(isinstance(mode, DeviceMode) for mode in _get_current_dispatch_mode_stack()):
        return _work_item_run(self, *args)
    with DeviceMode():
        return _work_item_run(self, *args)


#: (owner, name, replacement) for ``install``'s table.
THREAD_PATCHES: list[tuple[Any, str, Any]] = [(threading.Thread, "_bootstrap_inner", bootstrap_inner),
                                              (futures_thread._WorkItem, "run", work_item_run)]
