"""Threads started under the emulated ``torch.cuda`` run on the emulated device too.

torch keeps its dispatch modes per thread, so the device mode pushed by ``emulate_cuda()`` is not
seen by a thread started inside it: there ``torch.ones(2, device="cuda")`` would reach torch's CUDA
kernels (absent from a CPU build) and a kernel on a captured tensor would escape the capture's
checks. Engines start threads (output copiers, thread pools), so every ``threading.Thread`` started
while ``torch.cuda`` is emulated runs its target under a device mode of its own. A thread started
before ``emulate_cuda()`` is entered is not changed (docs/torch-cuda.md, known gaps).
"""

from __future__ import annotations

import threading
from typing import Any

from seam.torch_cuda.dispatch import DeviceMode

_bootstrap_inner = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]


def bootstrap_inner(self: threading.Thread) -> None:
    """``Thread._bootstrap_inner`` (which calls ``run``) under a device mode of this thread's own."""
    with DeviceMode():
        _bootstrap_inner(self)


#: (owner, name, replacement) for ``install``'s table.
THREAD_PATCHES: list[tuple[Any, str, Any]] = [(threading.Thread, "_bootstrap_inner", bootstrap_inner)]
