"""torch's GPU trace (``torch.cuda._gpu_trace``, what CUDA sanitizers and PyTorch's ``test_cuda_trace.py`` listen to)
fires each callback where a GPU build fires it, with the same arguments.

Measured against PyTorch's own ``test/test_cuda_trace.py`` (12 tests) emulated: 7 failed. An event said nothing of
itself to ``ctypes`` (``Event._as_parameter_``, which the tests read the event's handle through), an event's
creation fired when the object was made where CUDA makes the event at its first record (and only a made event's
deletion fires; its handle is none until then), a device block's free fired nothing, and a synchronizing operation (``nonzero``, ``item()``, a
blocking copy to the host) fired no stream synchronization, where torch's C++ fires one wherever it warns in sync
debug mode (``c10::cuda::stream_synchronize``, ``memcpy_and_sync``).

Activating the trace cannot be undone in a process, so the program runs in a child of its own (on the emulated arm
the child is emulated: ``SEAM_EMULATE_CUDA=1``, set inside the block).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import gc, json
    import torch
    from torch.cuda import _gpu_trace

    torch._C._activate_gpu_trace()
    seen = []
    for name in ("event_creation", "event_deletion", "event_record", "event_wait", "event_synchronization",
                 "memory_allocation", "memory_deallocation", "stream_synchronization", "device_synchronization"):
        getattr(_gpu_trace, "register_callback_for_" + name)(lambda *args, name=name: seen.append([name, *args]))
    x = torch.rand(5, device="cuda")
    names = {torch.cuda.default_stream().cuda_stream: "default stream"}
    steps = {}

    def step(label, act):
        seen.clear()
        act()
        steps[label] = [list(call) for call in seen]

    events = []
    step("Event()", lambda: events.append(torch.cuda.Event()))
    unmade = [events[0]._as_parameter_.value, repr(events[0])]  # CUDA makes the event at its first record
    step("wait before a record", lambda: events[0].wait())
    step("record", lambda: events[0].record())
    names[events[0]._as_parameter_.value] = "event"
    step("wait", lambda: events[0].wait())
    step("synchronize the event", lambda: events[0].synchronize())
    step("del the event", lambda: (events.clear(), gc.collect()))
    held = []
    step("empty(10, 4)", lambda: held.append(torch.empty(10, 4, device="cuda")))
    names[held[0].data_ptr()] = "the block"
    step("del the tensor", lambda: (held.clear(), gc.collect()))
    for label, act in (("nonzero", lambda: x.nonzero()), ("item", lambda: x[0].item()),
                       ("cpu", lambda: x.cpu()), ("add", lambda: x + 1)):
        step(label, act)
        steps[label] = [call for call in steps[label] if call[0] == "stream_synchronization"]
    side = torch.cuda.Stream()
    names[side.cuda_stream] = "side stream"
    step("synchronize a stream", lambda: side.synchronize())
    step("synchronize the device", lambda: torch.cuda.synchronize())
    # handles and addresses by name, once every one is known
    steps = {label: [[names.get(a, a) if isinstance(a, int) else a for a in call] for call in calls]
             for label, calls in steps.items()}
    steps["unmade"] = unmade
    print(json.dumps(steps))
""")

EXPECTED = {
    "Event()": [],
    "unmade": [None, "<torch.cuda.Event uninitialized>"],
    "wait before a record": [],
    "record": [["event_creation", "event"], ["event_record", "event", "default stream"]],
    "wait": [["event_wait", "event", "default stream"]],
    "synchronize the event": [["event_synchronization", "event"]],
    "del the event": [["event_deletion", "event"]],
    "empty(10, 4)": [["memory_allocation", "the block"]],
    "del the tensor": [["memory_deallocation", "the block"]],
    "nonzero": [["stream_synchronization", "default stream"]],
    "item": [["stream_synchronization", "default stream"]],
    "cpu": [["stream_synchronization", "default stream"]],
    "add": [],
    "synchronize a stream": [["stream_synchronization", "side stream"]],
    "synchronize the device": [["device_synchronization"]],
}


def test_each_gpu_trace_callback_fires_where_a_gpu_build_fires_it(torch_cuda: str) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ))
    assert done.returncode == 0, f"the child failed with {done.returncode}: {done.stderr[-3000:]}"
    steps = json.loads(done.stdout.strip().splitlines()[-1])
    assert {label: steps.get(label) for label in EXPECTED} == EXPECTED


def test_a_death_whose_id_another_owner_had_fires_no_free_of_that_owners_address() -> None:
    """The trace hears a block's free as its owner dies (``CachingAllocator._death_traced``); an owner of no live block
    whose ``id`` a dead owner of a freed private-pool block had is not that owner: no deallocation fires for it."""
    from seam.torch_cuda.allocator import CachingAllocator

    class Owner:
        pass

    allocator = CachingAllocator()
    freed: list[int] = []
    allocator.trace_frees(freed.append)
    earlier, now = Owner(), Owner()
    allocator.last_address[id(now)] = (earlier, 0x7F0000000200)  # as if ``earlier`` had died and ``now`` took its id
    allocator._death_traced(now)
    assert freed == []
    allocator.last_address[id(now)] = (now, 0x7F0000000400)
    allocator._death_traced(now)
    assert freed == [0x7F0000000400]
