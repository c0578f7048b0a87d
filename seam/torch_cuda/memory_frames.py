"""The stack frames the memory history keeps of each allocation and free on the emulated device.

``torch.cuda.memory._record_memory_history(context=..., stacks=...)`` asks for them.

torch gathers a ``CapturedTraceback`` at the allocator's call: the Python frames of the caller, and with
``stacks="all"`` the C++ frames too. Here the allocator is Python called from the device mode, so the Python
stack holds the emulation's own frames below the caller's; they are dropped (a GPU has none of them), with the
frames of torch's Python that the emulation called. What is kept, innermost first as torch's are, each
``{"name", "filename", "line"}``:

- with ``stacks="all"``, one C++ frame for the caching allocator's ``malloc`` (or ``free``) and one per operation
  the device mode is running (``at::_ops::<name>::call``, the dispatcher's entry torch's C++ stack shows), file
  ``??`` and line 0 (no debug information);
- the Python frames outside the emulation, innermost first.

Which events carry frames (torch's ``RecordContext``): ``context="state"`` the live blocks of a snapshot only;
``"alloc"`` also the trace's entries, each a free's with the frames of its block's allocation; ``"all"`` the
frees with their own frames; ``None`` none. A ``segment_free`` carries none (torch 2.11 on the H100 gathers none
for ``empty_cache``: PyTorch's ``test_memory_plots_free_segment_stack`` fails there). A storage made before
``"all"`` began records its free with its allocation's frames (its death callback was set when it was made).
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: The emulation's own source files: their frames are not a GPU's.
_MACHINERY = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: torch's own Python that the device mode calls into (an operation's overload, the dispatch helpers): inside
#: the emulation's frames, dropped with them.
_TORCH_GLUE = (os.sep + os.path.join("torch", "_ops.py"), os.sep + os.path.join("torch", "utils", "_python_dispatch.py"),
               os.sep + os.path.join("torch", "_decomp") + os.sep, os.sep + os.path.join("torch", "_refs") + os.sep,
               os.sep + os.path.join("torch", "_prims") + os.sep, os.sep + os.path.join("torch", "_prims_common") + os.sep)
#: The contexts under which the trace's entries carry frames (a snapshot's live blocks carry them under any).
TRACES = frozenset({"alloc", "all"})
CONTEXTS = (None, "state", "alloc", "all")
STACKS = ("python", "all")


def _machinery(filename: str) -> bool:
    return filename.startswith(_MACHINERY)


def gather(stacks: str, allocator_call: str = "malloc") -> list[dict[str, Any]]:
    """The frames of the current call, as torch's allocator would record them (innermost first)."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    # the emulation's run: from the innermost frame to its outermost own frame before the first frame that is
    # neither its own nor torch's Python it calls (the caller's); torch's Python between the two is the caller's
    first_outside = next((i for i, f in enumerate(frames) if not _machinery(f.f_code.co_filename)
                          and not any(glue in f.f_code.co_filename for glue in _TORCH_GLUE)), len(frames))
    run_end = max((i for i in range(first_outside) if _machinery(frames[i].f_code.co_filename)), default=-1)
    python = [{"name": f.f_code.co_name, "filename": f.f_code.co_filename, "line": f.f_lineno}
              for f in frames[run_end + 1:] if not _machinery(f.f_code.co_filename)]
    if stacks != "all":
        return python
    ops = [getattr(f.f_locals.get("func"), "_opname", None) for f in frames
           if f.f_code.co_name == "__torch_dispatch__" and _machinery(f.f_code.co_filename)]
    cpp = [{"name": f"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::{allocator_call}",
            "filename": "??", "line": 0}]
    cpp += [{"name": f"at::_ops::{name}::call", "filename": "??", "line": 0} for name in ops if name is not None]
    return cpp + python


def check(context: Any, stacks: Any) -> None:
    """torch's refusal of a context or stacks it does not know, in its words."""
    if context not in CONTEXTS:
        raise RuntimeError("expected context to be 'state', 'alloc', 'all', or None")
    if stacks not in STACKS:
        raise RuntimeError("expected stacks to be 'python', or 'all'")
