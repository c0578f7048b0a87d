"""The fidelity corpus: short capture programs written once against the seam, with what CUDA does.

Each program takes a ``Probe`` and is run on every arm by the ``backend`` fixture. ``EXPECTED`` holds
the signature real CUDA gives (measured on the H200 through the seam's ``CudaBackend``, with the raw
``torch.cuda.CUDAGraph`` witness of ``tests/fidelity/raw_cuda.py`` named in ``RAW`` where one exists);
the CPU emulator must give the same. ``EXCEPTIONS`` lists the rows where it cannot, with the reason
and the signature it gives instead: they are documented, never deleted.
"""

from __future__ import annotations

import gc

import torch

from seam import BreakableGraph, CaptureMode, GraphCaptureScope, PersistentStepInput, break_point, capture_one

from .probe import Probe

PROGRAMS: dict[str, object] = {}
EXPECTED: dict[str, str] = {}
#: program -> the raw-CUDA witness program (``tests/fidelity/raw_cuda.py``) that shows the same thing.
RAW: dict[str, str] = {}
#: program -> (the emulator's signature, why it cannot match CUDA).
EXCEPTIONS: dict[str, tuple[str, str]] = {}
#: program -> the class of behaviour it pins (the rows of docs/fidelity-seam.md are grouped by it).
CLASS: dict[str, str] = {}


def program(expected: str, cls: str, raw: str | None = None):
    def register(fn):
        PROGRAMS[fn.__name__] = fn
        EXPECTED[fn.__name__] = expected
        CLASS[fn.__name__] = cls
        if raw:
            RAW[fn.__name__] = raw
        return fn
    return register


def _batch_stats(p: Probe) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A batch-norm input and its running statistics, on the device: x [[1], [3]] (refreshed to
    [[5], [9]] by the programs that replay: batch mean 7, biased variance 4, unbiased 8; momentum 0.5
    from running (0, 1) gives (3.5, 4.5))."""
    return p.dev([[1.0], [3.0]]), p.dev([0.0]), p.dev([1.0])  # input [N=2, C=1], running mean, running var


# -- refusals inside the capture -----------------------------------------------------------------
@program("CaptureSyncError @ capture", "refusal", "item")
def item_in_capture(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    with p.capture():
        x.sum().item()


@program("CaptureSyncError @ capture", "refusal", "cpu")
def cpu_in_capture(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    with p.capture():
        x.cpu()


@program("CaptureSyncError @ capture", "refusal", "tolist")
def tolist_in_capture(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    with p.capture():
        x.tolist()


@program("CaptureSyncError @ capture", "refusal", "cpu")
def numpy_in_capture(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    with p.capture():
        x.cpu().numpy()


@program("CaptureSyncError @ capture", "refusal")
def truth_value_in_capture(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    with p.capture():
        if x.sum() > 0:
            x.add_(1)


@program("CaptureSyncError @ capture", "refusal", "bool_mask")
def bool_mask_index_in_capture(p: Probe) -> None:
    x = p.dev([1.0, -2.0, 3.0])
    with p.capture():
        x[x > 0]


@program("CaptureSyncError @ capture", "refusal")
def bool_mask_assign_in_capture(p: Probe) -> None:
    x = p.dev([1.0, -2.0, 3.0])
    with p.capture():
        x[x < 0] = 0.0


@program("CaptureSyncError @ capture", "refusal", "nonzero_in_capture")
def nonzero_in_capture(p: Probe) -> None:
    x = p.dev([1.0, 0.0, 3.0])
    with p.capture():
        torch.nonzero(x)


@program("CaptureSyncError @ capture", "refusal")
def masked_select_in_capture(p: Probe) -> None:
    x = p.dev([1.0, 0.0, 3.0])
    with p.capture():
        torch.masked_select(x, x > 0)


@program("PageableCopyError @ capture", "refusal", "tensor_from_data")
def tensor_from_data_in_capture(p: Probe) -> None:
    with p.capture():
        torch.tensor([1.0, 2.0], device=p.b.device)


@program("PageableCopyError @ capture", "refusal", "pageable_copy")
def pageable_copy_in_capture(p: Probe) -> None:
    x = p.dev([0.0, 0.0])
    host = torch.ones(2)
    with p.capture():
        x.copy_(host, non_blocking=True)


@program("PageableCopyError @ capture", "refusal", "pageable_copy")
def pageable_backend_copy_in_capture(p: Probe) -> None:
    x = p.dev([0.0, 0.0])
    with p.capture():
        p.b.copy(x, torch.ones(2), p.q)


@program("CaptureSyncError @ capture", "refusal")
def device_to_pageable_copy_in_capture(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    host = torch.zeros(2)
    with p.capture():
        host.copy_(x)


@program("CaptureSyncError @ capture", "refusal", "synchronize_device")
def synchronize_in_capture(p: Probe) -> None:
    with p.capture():
        p.b.synchronize()


@program("CaptureSyncError @ capture", "global capture mode", "event_synchronize_other")
def event_synchronize_of_another_queue_in_capture(p: Probe) -> None:
    side = p.b.new_queue()
    ev = p.b.record_event(side)
    with p.capture():
        p.b.event_synchronize(ev)


@program("CaptureSyncError @ capture", "global capture mode", "synchronize_other_stream")
def synchronize_of_another_backend_in_capture(p: Probe) -> None:
    other = type(p.b)()
    with p.capture():
        other.synchronize()


@program("CaptureSyncError @ capture", "global capture mode", "item_on_other_stream")
def host_read_on_a_queue_outside_the_capture(p: Probe) -> None:
    total = p.b.alloc(1)  # device memory made before: only the READ happens in the capture
    torch.sum(p.dev([1.0, 2.0]), 0, keepdim=True, out=total)
    side = p.b.new_queue()
    with p.capture():
        with p.b.use_queue(side):
            total.item()


@program("CaptureSyncError @ capture", "global capture mode", "d2h_pageable_copy_on_other_stream")
def device_to_pageable_copy_on_a_queue_outside_the_capture(p: Probe) -> None:
    w = p.dev([1.0, 2.0])
    host = torch.zeros(2)  # pageable host memory made before the capture
    side = p.b.new_queue()
    with p.capture():
        with p.b.use_queue(side):
            host.copy_(w)


@program("CaptureStateError @ capture", "global capture mode", "zeros_on_other_stream_in_capture")
def allocating_work_on_a_queue_outside_the_capture(p: Probe) -> None:
    w = p.dev([1.0, 2.0])
    side = p.b.new_queue()
    with p.capture():
        with p.b.use_queue(side):
            w * 2


@program("CaptureStateError @ capture", "global capture mode", "batch_norm_on_other_stream_in_capture")
def training_batch_norm_on_a_queue_outside_the_capture(p: Probe) -> None:
    x, mean, var = _batch_stats(p)
    side = p.b.new_queue()
    with p.capture():
        with p.b.use_queue(side):
            torch.nn.functional.batch_norm(x, mean, var, training=True)


@program("CaptureStateError @ capture", "global capture mode", "batch_norm_with_update_on_other_stream_in_capture")
def batch_norm_with_update_on_a_queue_outside_the_capture(p: Probe) -> None:
    # The op writes the running statistics AND allocates its results: the allocation is refused.
    x, mean, var = _batch_stats(p)
    side = p.b.new_queue()
    with p.capture():
        with p.b.use_queue(side):
            torch.ops.aten._batch_norm_with_update(x, None, None, mean, var, 0.1, 1e-5)


@program("CaptureSyncError @ capture", "refusal")
def blocking_copy_from_pinned_memory_in_capture(p: Probe) -> None:
    x = p.dev([0.0, 0.0])
    pinned = p.b.alloc_pinned(2)
    with p.capture():
        x.copy_(pinned)


@program("CaptureInvalidatedError @ capture_end", "global capture mode")
def an_unsafe_call_the_body_swallows_still_invalidates(p: Probe) -> None:
    x = p.dev([1.0])
    with p.capture():
        x.add_(1)
        try:
            p.b.synchronize()
        except Exception:  # noqa: BLE001 - the point: swallowing it does not un-invalidate the capture
            pass


@program("CaptureDependencyError @ capture", "refusal", "wait_pre_capture_event")
def wait_on_an_event_recorded_before_the_capture(p: Probe) -> None:
    side = p.b.new_queue()
    ev = p.b.record_event(side)
    with p.capture():
        p.b.wait_event(p.q, ev)


@program("CaptureStateError @ capture", "refusal", "zeros_on_other_stream_in_capture")
def alloc_while_capturing_on_another_queue(p: Probe) -> None:
    side = p.b.new_queue()
    with p.capture(queue=side):
        p.b.alloc(4)


# -- forks and joins -----------------------------------------------------------------------------
@program("UnjoinedForkError @ capture_end", "forks", "unjoined_fork_with_work")
def unjoined_fork_with_work(p: Probe) -> None:
    x = p.dev([1.0])
    side = p.b.new_queue()
    with p.capture():
        p.b.wait_event(side, p.b.record_event(p.q))
        with p.b.use_queue(side):
            x.add_(1)


@program("ok (2.0,)", "forks", "empty_fork_unjoined")
def fork_with_no_work_left_unjoined(p: Probe) -> None:
    x = p.dev([0.0])
    side = p.b.new_queue()
    with p.capture():
        p.b.wait_event(side, p.b.record_event(p.q))
        x.add_(1)
    p.replay(); p.replay()
    p.read(x)


@program("ok (2.0,)", "forks", "transitive_join")
def fork_joined_back_transitively(p: Probe) -> None:
    x = p.dev([0.0])
    a, b = p.b.new_queue(), p.b.new_queue()
    with p.capture():
        p.b.wait_event(a, p.b.record_event(p.q))
        p.b.wait_event(b, p.b.record_event(a))
        with p.b.use_queue(b):
            x.add_(1)
        p.b.wait_event(a, p.b.record_event(b))
        p.b.wait_event(p.q, p.b.record_event(a))
    p.replay(); p.replay()
    p.read(x)


@program("ok (4.0,)", "forks")
def fork_the_scope_joins(p: Probe) -> None:
    x = p.dev([0.0])
    side = p.b.new_queue()
    with p.capture() as scope:
        p.b.wait_event(side, p.b.record_event(p.q))
        with p.b.use_queue(side):
            x.add_(2)
        scope.note_fork(side)
    p.replay(); p.replay()
    p.read(x)


@program("UnjoinedForkError @ capture_end", "forks")
def fork_joined_before_its_last_work(p: Probe) -> None:
    x = p.dev([0.0])
    side = p.b.new_queue()
    with p.capture():
        p.b.wait_event(side, p.b.record_event(p.q))
        with p.b.use_queue(side):
            x.add_(1)
        p.b.wait_event(p.q, p.b.record_event(side))
        with p.b.use_queue(side):
            x.add_(1)


@program("ok (2.0,)", "forks", "kernel_on_other_stream")
def work_on_a_queue_outside_the_capture_runs_now(p: Probe) -> None:
    w = p.dev([1.0])
    x = p.dev([0.0])
    side = p.b.new_queue()
    with p.capture():
        x.add_(1)
        with p.b.use_queue(side):
            w.add_(1)
    p.read(w)


@program("ok (1.0, 1.0)", "forks", "pageable_copy_on_other_stream")
def pageable_copy_on_a_queue_outside_the_capture_runs_now(p: Probe) -> None:
    w = p.dev([0.0, 0.0])
    x = p.dev([0.0])
    side = p.b.new_queue()
    with p.capture():
        x.add_(1)
        p.b.copy(w, torch.ones(2), side)
    p.read(w)


# -- graph lifecycle and the collector (global capture mode) --------------------------------------
def _old_graph(p: Probe) -> BreakableGraph:
    y = p.dev([1.0])
    g = BreakableGraph(p.b)
    with torch.no_grad(), GraphCaptureScope(p.b, p.q, g):
        y * 2
    return g


@program("ok (2.0,)", "lifecycle", "reset_other_graph")
def destroy_another_graph_inside_a_capture(p: Probe) -> None:
    old = _old_graph(p)
    x = p.dev([1.0])
    with p.capture():
        x.add_(1)
        old.destroy()
    p.replay()
    p.read(x)


@program("ok (2.0,)", "lifecycle", "gc_other_graph_in_cycle")
def collect_another_graph_inside_a_capture(p: Probe) -> None:
    old = _old_graph(p)
    cycle: list[object] = [old]
    cycle.append(cycle)
    del old, cycle
    x = p.dev([1.0])
    with p.capture():
        x.add_(1)
        gc.collect()
    p.replay()
    p.read(x)


@program("ok (2.0,)", "lifecycle", "del_other_graph")
def drop_another_graph_inside_a_capture(p: Probe) -> None:
    holder = [_old_graph(p)]
    x = p.dev([1.0])
    with p.capture():
        x.add_(1)
        holder.clear()
    p.replay()
    p.read(x)


@program("CaptureStateError @ capture", "lifecycle", "second_capture_same_graph")
def a_second_capture_into_the_same_graph(p: Probe) -> None:
    x = p.dev([1.0])
    g = BreakableGraph(p.b)
    with p.capture(g):
        x.add_(1)
    with p.capture(g):
        x.add_(1)


@program("CaptureStateError @ capture", "lifecycle")
def a_capture_into_a_destroyed_graph(p: Probe) -> None:
    x = p.dev([1.0])
    g = BreakableGraph(p.b)
    with p.capture(g):
        x.add_(1)
    g.destroy()
    with p.capture(g):
        x.add_(1)


@program("CaptureStateError @ replay", "lifecycle")
def replay_after_destroy(p: Probe) -> None:
    x = p.dev([1.0])
    with p.capture():
        x.add_(1)
    p.last_graph.destroy()
    p.replay()


@program("CaptureStateError @ replay", "lifecycle")
def replay_of_a_graph_never_captured(p: Probe) -> None:
    p.last_graph = BreakableGraph(p.b)
    p.replay()


@program("ValueError @ capture", "lifecycle")
def a_raising_body_propagates_its_own_error(p: Probe) -> None:
    x = p.dev([1.0])
    with p.capture():
        x.add_(1)
        raise ValueError("the body's own error")


@program("ok (3.0,)", "lifecycle")
def a_capture_after_an_aborted_one_works(p: Probe) -> None:
    x = p.dev([1.0])
    try:
        with p.capture():
            raise ValueError("abort")
    except ValueError:
        pass
    with p.capture():
        x.add_(1)
    p.replay(); p.replay()
    p.read(x)


# -- addresses, not Python objects --------------------------------------------------------------
@program("ok (20.0, 20.0)", "addresses", "data_swap_after_capture")
def buffer_swapped_under_the_same_tensor(p: Probe) -> None:
    x = p.dev([2.0, 2.0])
    old = x.data
    with p.capture():
        y = x * 10
    x.data = p.dev([3.0, 3.0])
    p.replay()
    p.read(y)
    del old


@program("ok (10.0,)", "addresses", "reallocated_input_old")
def input_reallocated_after_capture(p: Probe) -> None:
    x = p.dev([1.0])
    with p.capture():
        y = x * 10
    x = p.dev([5.0])  # noqa: F841 - a new buffer the graph never reads
    p.replay()
    p.read(y)


@program("AddressChangedError @ replay", "addresses")
def moved_input_with_the_address_check(p: Probe) -> None:
    x = p.dev([1.0])
    with p.capture() as scope:
        x * 10
    scope.graph.register_input(x, "x")
    p.replay(inputs=[p.dev([5.0])])


@program("ok (50.0,)", "addresses", "inplace_refresh_seen")
def input_refreshed_in_place(p: Probe) -> None:
    x = p.dev([1.0])
    with p.capture():
        y = x * 10
    p.b.copy(x, p.b.to_device(torch.tensor([5.0])), p.q)
    p.replay()
    p.read(y)


@program("ok (30.0,)", "addresses")
def step_input_refreshed_from_host(p: Probe) -> None:
    buf = p.b.alloc(1)
    step = PersistentStepInput().bind(p.b, buf)
    with p.capture():
        y = buf * 10
    step.refresh_from_host(p.q, [3.0])
    p.replay()
    p.read(y)


@program("ok (7.0, 7.0)", "addresses", "pinned_copy")
def pinned_block_rewritten_between_replays(p: Probe) -> None:
    x = p.dev([0.0, 0.0])
    pinned = p.b.alloc_pinned(2)
    p.b.host_write(pinned, torch.full((2,), 3.0))
    with p.capture():
        x.copy_(pinned, non_blocking=True)
    p.b.host_write(pinned, torch.full((2,), 7.0))
    p.replay()
    p.read(x)


@program("ok (4.0, 6.0)", "addresses")
def device_to_pinned_copy_replays(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    pinned = p.b.alloc_pinned(2)
    with p.capture():
        pinned.copy_(x * 2, non_blocking=True)
    p.b.copy(x, p.b.to_device(torch.tensor([2.0, 3.0])), p.q)
    p.replay()
    p.b.synchronize()
    p.note(tuple(float(v) for v in pinned.tolist()))


# -- host memory is not captured -----------------------------------------------------------------
@program("ok (1.0,), (2.0,)", "host memory", "host_op_in_body")
def host_op_in_the_body_runs_once(p: Probe) -> None:
    h = torch.zeros(1)
    x = p.dev([0.0])
    with p.capture():
        h.add_(1)
        x.add_(1)
    p.replay(); p.replay()
    p.note(tuple(h.tolist()))
    p.read(x)


@program("ok (2.0, 2.0)", "host memory", "host_scalar_baked")
def host_scalar_tensor_is_baked(p: Probe) -> None:
    x = p.dev([1.0, 1.0])
    hs = torch.tensor(2.0)
    with p.capture():
        y = x * hs
    hs.fill_(5.0)
    p.replay()
    p.read(y)


@program("ok (2.0, 2.0)", "host memory", "host_scalar_item_baked")
def host_scalar_read_with_item_is_baked(p: Probe) -> None:
    x = p.dev([1.0, 1.0])
    hs = torch.tensor(2.0)
    with p.capture():
        y = x * hs.item()
    hs.fill_(5.0)
    p.replay()
    p.read(y)


@program("ok (3.0, 3.0), (3.0, 3.0)", "host memory", "pinned_alloc_in_body")
def pinned_block_made_in_the_body_keeps_its_contents(p: Probe) -> None:
    x = p.dev([0.0, 0.0])
    with p.capture():
        pinned = p.b.alloc_pinned(2)
        p.b.host_write(pinned, torch.full((2,), 3.0))
        x.copy_(pinned, non_blocking=True)
    p.note(tuple(pinned.tolist()))
    p.b.copy(x, p.b.to_device(torch.zeros(2)), p.q)
    p.replay()
    p.read(x)


@program("ok (5.0,)", "host memory")
def host_to_host_copy_in_the_body_runs_once(p: Probe) -> None:
    src, dst = torch.full((1,), 5.0), torch.zeros(1)
    x = p.dev([0.0])
    with p.capture():
        dst.copy_(src)
        x.add_(1)
    src.fill_(9.0)
    p.replay()
    p.note(tuple(dst.tolist()))


# -- setup work inside the capture ---------------------------------------------------------------
@program("ok (1.0, 2.0), (1.0, 2.0)", "setup effects")
def alloc_inside_a_capture_on_the_default_queue_is_refilled_each_replay(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    with p.capture():
        acc = p.b.alloc(2)
        acc.add_(x)
    p.replay()
    p.read(acc)
    p.replay()
    p.read(acc)


@program("ok (0.0, 1.0, 2.0, 3.0)", "setup effects")
def factory_on_the_device_inside_the_capture(p: Probe) -> None:
    with p.capture():
        r = torch.arange(4, dtype=torch.float32, device=p.b.device)
    p.replay()
    p.read(r)


@program("ok (2.0, 4.0), (2.0, 4.0)", "setup effects")
def zeros_like_accumulator_inside_the_capture(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    with p.capture():
        acc = torch.zeros_like(x)
        acc.add_(x)
        acc.add_(x)
    p.replay()
    p.read(acc)
    p.replay()
    p.read(acc)



@program("ok (9.0, 9.0, 9.0, 9.0), (0.0, 1.0, 2.0, 3.0), (5.0, 5.0), (0.0, 0.5, 1.0)", "setup effects",
         "factory_out_in_capture")
def factories_writing_a_device_out_buffer_are_captured(p: Probe) -> None:
    # A factory given a device ``out=`` buffer writes device memory: CUDA captures that write (the
    # buffers keep their contents until a replay), however the factory was called.
    r, f, s = p.dev([9.0] * 4), p.dev([9.0] * 2), p.dev([9.0] * 3)
    with p.capture():
        torch.arange(4, out=r)
        torch.full((2,), 5.0, out=f)
        torch.linspace(0.0, 1.0, 3, out=s)
    p.read(r)
    p.replay()
    p.read(r); p.read(f); p.read(s)

# -- PIECEWISE and breaks ------------------------------------------------------------------------
@program("BreakResultError @ capture", "piecewise")
def a_break_whose_result_feeds_the_next_segment(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    with p.capture(mode=CaptureMode.PIECEWISE):
        h = x * 2
        t = break_point(lambda: h + 1)
        t * 3


@program("ok (9.0, 15.0), 3", "piecewise")
def a_break_bridged_through_a_persistent_buffer(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    bridge = p.b.alloc(2)
    calls = []
    with p.capture(mode=CaptureMode.PIECEWISE):
        h = x * 2
        break_point(lambda: (calls.append(1), p.b.copy(bridge, h + 1, p.q))[1])
        y = bridge * 3
    p.replay(); p.replay()
    p.read(y)
    p.note(len(calls))


@program("ok (6.0, 12.0)", "piecewise")
def a_break_in_full_mode_is_captured_inline(p: Probe) -> None:
    x = p.dev([1.0, 2.0])
    with p.capture():
        h = x * 2
        t = break_point(lambda: h + 1)
        y = t * 2
    p.b.copy(x, p.b.to_device(torch.tensor([1.0, 2.5])), p.q)
    p.replay()
    p.read(y)


@program("ok (2.0,)", "piecewise")
def a_break_may_read_the_device_eagerly(p: Probe) -> None:
    x = p.dev([1.0, -2.0, 3.0])
    out = p.b.alloc(1)
    with p.capture(mode=CaptureMode.PIECEWISE):
        y = x * 1
        break_point(lambda: p.b.copy(out, (y > 0).sum().to(torch.float32).reshape(1), p.q))
    p.replay()
    p.read(out, 0)


# -- RNG -----------------------------------------------------------------------------------------
@program("ok True", "rng", "rng_in_capture")
def random_values_differ_between_replays(p: Probe) -> None:
    with p.capture():
        r = torch.rand(4, device=p.b.device)
    p.replay()
    p.b.synchronize()
    first = r.cpu().clone()
    p.replay()
    p.b.synchronize()
    p.note(not torch.equal(first, r.cpu()))


# -- the replay recomputes what CUDA would --------------------------------------------------------
def _replayed(fn, *inputs, refresh=None):
    def run(p: Probe) -> None:
        xs = [p.dev(v) for v in inputs]
        with torch.no_grad():
            for x in xs:  # a warmup outside capture (cuBLAS and friends are initialised by it)
                fn(*xs)
        with p.capture():
            y = fn(*xs)
        if refresh is not None:
            for x, v in zip(xs, refresh):
                p.b.copy(x, p.b.to_device(torch.as_tensor(v, dtype=torch.float32)), p.q)
        p.replay()
        p.read(y)
    return run


def _values(name: str, expected: str, fn, *inputs, refresh=None) -> None:
    run = _replayed(fn, *inputs, refresh=refresh)
    run.__name__ = name
    program(expected, "values")(run)


_values("matmul_after_a_warmup", "ok (7.0, 10.0, 15.0, 22.0)", lambda a: a @ a, [[1.0, 2.0], [3.0, 4.0]])
_values("view_then_op", "ok (4.0, 6.0)", lambda x: x[1:3] * 2, [1.0, 2.0, 3.0, 4.0])
_values("out_variant", "ok (6.0, 7.0)", lambda x: torch.add(x, 1, out=torch.empty_like(x)), [1.0, 2.0], refresh=[[5.0, 6.0]])
_values("multi_output_max", "ok (4.0, 2.0)", lambda x: torch.stack([v.to(torch.float32) for v in torch.max(x, dim=0)]), [1.0, 4.0, 2.0], refresh=[[1.0, 2.0, 4.0]])
_values("softmax_after_refresh", "ok (0.2689, 0.7311)", lambda x: torch.softmax(x, dim=0), [0.0, 0.0], refresh=[[0.0, 1.0]])
_values("layer_norm", "ok (-1.0, 1.0)", lambda x: torch.nn.functional.layer_norm(x, (2,)), [1.0, 3.0])
_values("cumsum", "ok (1.0, 3.0, 6.0)", lambda x: torch.cumsum(x, 0), [0.0, 0.0, 0.0], refresh=[[1.0, 2.0, 3.0]])
_values("where_instead_of_a_mask", "ok (1.0, 0.0, 3.0)", lambda x: torch.where(x > 0, x, torch.zeros_like(x)), [1.0, -2.0, 3.0])
_values("cat_and_stack", "ok (1.0, 2.0, 1.0, 2.0)", lambda x: torch.cat([x, x]), [1.0, 2.0])
_values("dtype_cast", "ok (1.0, 2.0)", lambda x: (x.to(torch.int32) * 1).to(torch.float32), [1.7, 2.2])
_values("index_select_with_device_index", "ok (3.0, 1.0)", lambda x, i: torch.index_select(x, 0, i.to(torch.int64)), [1.0, 2.0, 3.0], [2.0, 0.0])
_values("gelu", "ok (0.0, 0.8413)", lambda x: torch.nn.functional.gelu(x), [0.0, 1.0])



# Ops that write an argument AND return new tensors: replay writes the argument again AND refreshes
# the new results; the capture itself runs neither.
@program("ok (0.0,), (7.0,), (0.5,), (-1.0, 1.0), (3.5,), (4.5,)", "values", "batch_norm_legit_in_capture")
def training_batch_norm_replays_its_batch_statistics(p: Probe) -> None:
    x, mean, var = _batch_stats(p)
    with p.capture():
        y, batch_mean, batch_rstd = torch.ops.aten._native_batch_norm_legit(x, None, None, mean, var, True, 0.5, 1e-5)
    p.read(mean)
    p.b.copy(x, p.b.to_device(torch.tensor([[5.0], [9.0]])), p.q)
    p.replay()
    p.read(batch_mean); p.read(batch_rstd); p.read(y); p.read(mean); p.read(var)


@program("ok (0.0,), (1.0,), (-1.0, 1.0), (3.5,), (4.5,)", "values", "batch_norm_in_capture")
def training_batch_norm_updates_its_running_statistics_once_per_replay(p: Probe) -> None:
    x, mean, var = _batch_stats(p)
    with p.capture():
        y = torch.nn.functional.batch_norm(x, mean, var, training=True, momentum=0.5, eps=1e-5)
    p.read(mean); p.read(var)
    p.b.copy(x, p.b.to_device(torch.tensor([[5.0], [9.0]])), p.q)
    p.replay()
    p.read(y); p.read(mean); p.read(var)


@program("ok (-2.0, 4.0)", "values", "rrelu_in_capture")
def training_rrelu_replays_its_output(p: Probe) -> None:
    x = p.dev([-2.0, 2.0])
    with p.capture():
        y = torch.nn.functional.rrelu(x, 0.5, 0.5, training=True)  # lower == upper: the slope is 0.5
    p.b.copy(x, p.b.to_device(torch.tensor([-4.0, 4.0])), p.q)
    p.replay()
    p.read(y)


@program("ok (2.0, 4.0)", "values")
def in_place_on_a_view_accumulates_per_replay(p: Probe) -> None:
    x = p.dev([0.0, 0.0, 5.0])
    with p.capture():
        x[0:2].add_(1)
    p.b.copy(x, p.b.to_device(torch.tensor([0.0, 2.0, 5.0])), p.q)
    p.replay(); p.replay()
    p.read(x[0:2])


@program("ok (2.0, 2.0)", "values")
def scatter_add_accumulates_per_replay(p: Probe) -> None:
    x = p.dev([0.0, 0.0])
    idx = p.b.to_device(torch.tensor([0, 1]))
    src = p.dev([1.0, 1.0])
    with p.capture():
        x.scatter_add_(0, idx, src)
    p.replay(); p.replay()
    p.read(x)


@program("ok (5.0,), 2", "values")
def capture_one_warms_up_then_captures_once(p: Probe) -> None:
    x = p.dev([1.0])
    calls = []

    def forward():
        calls.append(1)
        return x * 5

    captured = capture_one(forward, backend=p.b, graph=CaptureMode.FULL, warmups=1)
    p.last_graph = captured.graph
    p.replay()
    p.read(captured.output)
    p.note(len(calls))


@program("ok (2, 2)", "values")
def replays_are_counted_as_launches(p: Probe) -> None:
    x = p.dev([1.0])
    with p.capture():
        x.add_(1)
    before = p.b.stats.launches
    p.replay(); p.replay()
    p.note((p.b.stats.launches - before, 2))


@program("ok (2.0,)", "values")
def capture_on_a_side_queue(p: Probe) -> None:
    side = p.b.new_queue()
    x = p.dev([1.0])
    with p.capture(queue=side):
        y = x * 2
    p.replay()
    p.read(y)


#: Behaviour seen only through the raw witness, with why no seam program can pin it on both arms.
RAW_ONLY: dict[str, str] = {
    "first_cublas_on_fresh_stream": (
        "CUDA refuses the FIRST cuBLAS use of a process inside a capture (CUBLAS_STATUS_NOT_INITIALIZED); whether a "
        "program meets it depends on what ran earlier in the process, and the CPU has no cuBLAS to initialise. "
        "The seam's CUDA backend says it as CaptureWarmupError (tests/fidelity/test_fidelity.py checks the "
        "translation of the H200's exact text); capture_one's warmups make it moot"),
    "cuda_malloc_in_capture_other_stream": (
        "a cudaMalloc on a queue outside the capture is refused, but the caching allocator only calls it when no "
        "cached block fits; the seam refuses every alloc() on a queue outside an open capture instead "
        "(alloc_while_capturing_on_another_queue)"),
    "event_query_other": "event.query() is not part of the seam's backend protocol (no program can call it)",
    "empty_cache_in_capture": "torch.cuda.empty_cache() is CUDA-only and accepted in capture; nothing to emulate",
}
