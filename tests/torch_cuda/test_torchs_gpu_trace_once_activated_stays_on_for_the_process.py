"""``torch._C._activate_gpu_trace()`` turns torch's GPU trace on for the whole process, for good.

A library activates it once (breakable- and piecewise-cuda-graphs' debug mode keeps a module flag,
``_gpu_trace_initialized``) and registers its callbacks once; every later capture in the process
relies on them firing. Two ``emulate_cuda()`` blocks one after the other each start on a fresh emulated
device (``pytest --emulate-cuda`` keeps one device for the session), so the trace must outlive the device
that was current when it was activated, as it outlives any test on a GPU. The check runs in a child: turning the trace on cannot be undone in the process that does it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import torch
    from torch.cuda import _gpu_trace
    from seam.torch_cuda import emulate_cuda

    seen = []
    with emulate_cuda():
        torch._C._activate_gpu_trace()
        _gpu_trace.register_callback_for_event_record(lambda event, stream: seen.append("record"))
        _gpu_trace.register_callback_for_memory_allocation(lambda address: seen.append("alloc"))
    with emulate_cuda():  # a fresh device, as the next test of a session gets
        torch.cuda.Event().record(torch.cuda.current_stream())
        torch.empty(4, device="cuda")
    print(" ".join(seen))
""")


@pytest.mark.slow
def test_callbacks_registered_under_one_emulated_device_fire_under_the_next() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the child failed with {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.split() == ["record", "alloc"]
