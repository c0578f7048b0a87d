"""``PersistentStepInput`` as a driver uses it: counters per cell and per process, refusals and their words.

Complements ``test_step_input.py`` with the edges a sweep found unguarded: counts past one, a
fresh cell's state, an unstaged cell (no pinned block), dtypes the cell keeps, and the messages a
user reads when a refresh is refused.
"""

from __future__ import annotations

import pytest
import torch

from seam import (
    Backend,
    BreakableGraph,
    CaptureMode,
    GraphCaptureScope,
    PersistentStepInput,
    StepInputError,
    StepInputSource,
    get_step_input_stats,
)


def test_a_fresh_cell_is_unbound_with_zero_counts_and_no_source() -> None:
    cell = PersistentStepInput()
    assert not cell.bound and not cell.staged and cell.capacity == 0
    assert (cell.host_refreshes, cell.device_refreshes, cell.last_source) == (0, 0, StepInputSource.UNSET)
    with pytest.raises(StepInputError, match=r"^PersistentStepInput is not bound: call bind\(backend, buffer\) first$"):
        cell.address()


def test_refreshes_count_one_each_per_cell_and_per_process(backend: Backend) -> None:
    q = backend.default_queue()
    a = PersistentStepInput().bind(backend, backend.alloc((3,), torch.int64))
    b = PersistentStepInput().bind(backend, backend.alloc((3,), torch.int64))
    for values in ([1, 2, 3], [4, 5], [6]):
        a.refresh_from_host(q, values)
    b.refresh_from_device(q, backend.to_device(torch.tensor([7, 8], dtype=torch.int64)))
    b.refresh_from_device(q, backend.to_device(torch.tensor([9], dtype=torch.int64)))
    backend.synchronize()
    assert (a.host_refreshes, a.device_refreshes, a.last_source) == (3, 0, StepInputSource.HOST)
    assert (b.host_refreshes, b.device_refreshes, b.last_source) == (0, 2, StepInputSource.DEVICE)
    stats = get_step_input_stats()
    assert (stats.binds, stats.host_refreshes, stats.device_refreshes) == (2, 3, 2)
    assert a.device.cpu().tolist() == [6, 5, 3] and b.device.cpu().tolist() == [9, 8, 0]


def test_an_unstaged_cell_has_no_pinned_block_and_still_refreshes(backend: Backend) -> None:
    before = backend.stats.allocs
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.float32), staged=False)
    assert not cell.staged and backend.stats.allocs == before + 1  # only the caller's buffer
    staged = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    assert staged.staged and backend.stats.allocs == before + 3  # buffer + pinned block
    big = [2**40 + 1, -(2**53) - 3]  # int64 values no float staging block could carry exactly
    staged.refresh_from_host(backend.default_queue(), big)
    backend.synchronize()
    assert staged.device.cpu().tolist() == big
    pinned = backend.alloc_pinned((2,), torch.int64)
    backend.host_write(pinned, torch.tensor([3, 4]))
    cell.refresh_from_host(backend.default_queue(), torch.tensor([1.5, 2.5]))
    backend.synchronize()
    assert cell.device.cpu().tolist() == [1.5, 2.5] and pinned.dtype == torch.int64


def test_only_a_staged_cell_waits_for_its_previous_upload(backend: Backend) -> None:
    q = backend.default_queue()
    plain = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64), staged=False)
    staged = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    backend.trace.clear()
    for values in ([1, 2], [3, 4], [5, 6]):
        plain.refresh_from_host(q, torch.tensor(values))
    assert "event_synchronize" not in backend.trace_ops()  # nothing of its own to wait for
    for values in ([1, 2], [3, 4], [5, 6]):
        staged.refresh_from_host(q, values)
    assert backend.trace_ops().count("event_synchronize") == 2  # before each rewrite of the block


def test_a_float_cell_keeps_its_dtype_for_a_host_list() -> None:
    from seam import EmulatedBackend

    backend = EmulatedBackend()
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.float64))
    cell.refresh_from_host(backend.default_queue(), [1, 2])
    assert cell.device.dtype == torch.float64 and cell.device.tolist() == [1.0, 2.0]
    half = PersistentStepInput().bind(backend, backend.alloc((2,), torch.float16))
    half.refresh_from_host(backend.default_queue(), [0.5, 3])
    assert half.device.tolist() == [0.5, 3.0]


def test_a_non_contiguous_buffer_is_refused_with_the_reason(backend: Backend) -> None:
    buf = backend.alloc((4, 2), torch.int64).t()
    with pytest.raises(StepInputError, match=r"^PersistentStepInput\.bind needs a contiguous device buffer$"):
        PersistentStepInput().bind(backend, buf)


def test_an_unbound_cell_refuses_both_refreshes(backend: Backend) -> None:
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    cell.unbind()
    assert not cell.bound and not cell.staged and cell.capacity == 0
    for refresh in (lambda: cell.refresh_from_host(backend.default_queue(), [1]),
                    lambda: cell.refresh_from_device(backend.default_queue(), backend.alloc((1,), torch.int64))):
        with pytest.raises(StepInputError, match="not bound"):
            refresh()


def test_an_over_capacity_refresh_says_what_to_do_instead(backend: Backend) -> None:
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    with pytest.raises(StepInputError, match=r"^refresh of 3 elements REFUSED: the bound buffer holds 2; "
                                             r"a larger input needs a new buffer, a re-bind and a recapture$"):
        cell.refresh_from_host(backend.default_queue(), [1, 2, 3])


def test_a_staged_refresh_inside_capture_is_replayed_from_the_staging_block(backend: Backend) -> None:
    q = backend.default_queue()
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    g = BreakableGraph(backend, CaptureMode.FULL)
    with GraphCaptureScope(backend, q, g):
        cell.refresh_from_host(q, [1, 2])
        out = cell.device * 10
    backend.host_write(cell.staging, torch.tensor([3, 4]))  # the host rewrites the block, then replays
    g.replay()
    backend.synchronize()
    assert out.cpu().tolist() == [30, 40]
    cell.refresh_from_host(q, [5, 6])  # and a refresh after the capture still works on the same block
    backend.synchronize()
    assert cell.device.cpu().tolist() == [5, 6]


def test_design_s4_a_pinned_upload_in_capture_is_allowed_even_after_an_earlier_staged_refresh(backend: Backend) -> None:
    """RED on purpose (a product bug, reported): DESIGN §4 refuses only PAGEABLE host-to-device copies in
    capture, but a second staged refresh makes the seam call its own ``event_synchronize`` (the wait
    for the previous upload) inside the capture, which the seam then refuses as a host sync."""
    q = backend.default_queue()
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    cell.refresh_from_host(q, [1, 2])  # an ordinary step before the capture
    g = BreakableGraph(backend, CaptureMode.FULL)
    with GraphCaptureScope(backend, q, g):
        cell.refresh_from_host(q, [3, 4])
        out = cell.device * 10
    g.replay()
    backend.synchronize()
    assert out.cpu().tolist() == [30, 40]
