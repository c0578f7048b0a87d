"""The asynchronous token mirror as a ring: each publish writes the NEXT row and moves the device cursor there.

``TokenMirror`` is what the dense driver reads under an asynchronous scheduler; a ring that writes
the live row, a cursor that does not move (or moves by two), or a ``current()`` that reads a fixed
row hands the next step a stale token. These tests read the ring, the cursor and ``current()``
directly after each publish, on both CPU backends, at depths 1, 2 and 3.
"""

from __future__ import annotations

import pytest
import torch

from drivers.token_mirror import TokenMirror
from seam import Backend, EagerBackend, EmulatedBackend

BACKENDS = {"eager": EagerBackend, "cpu-emulated": EmulatedBackend}


def logits_choosing(tokens: list[int], vocab: int = 48) -> torch.Tensor:
    """Logits [B, V] whose greedy argmax is ``tokens[b]`` for slot ``b``."""
    out = torch.zeros(len(tokens), vocab)
    for slot, token in enumerate(tokens):
        out[slot, token] = 1.0
    return out


def mirror_on(name: str, slots: int, depth: int) -> tuple[Backend, TokenMirror]:
    backend = BACKENDS[name]()
    return backend, TokenMirror(backend, slots, depth)


@pytest.mark.parametrize("name", list(BACKENDS))
def test_each_publish_writes_the_next_ring_row_and_current_reads_it_wrapping_at_the_depth(name: str) -> None:
    _, mirror = mirror_on(name, slots=2, depth=3)
    mirror.seed([1, 2])
    assert mirror.current().tolist() == [1, 2] and mirror.cursor.tolist() == [0]
    published = [[5, 6], [7, 8], [9, 10], [11, 12]]
    rows_after = [
        [[1, 2], [5, 6], [0, 0]],
        [[1, 2], [5, 6], [7, 8]],
        [[9, 10], [5, 6], [7, 8]],  # the fourth row wraps onto row 0 (the seeded one)
        [[9, 10], [11, 12], [7, 8]],
    ]
    for step, (tokens, ring) in enumerate(zip(published, rows_after), start=1):
        mirror.publish(logits_choosing(tokens))
        assert mirror.current().tolist() == tokens, f"publish {step}: current() read a stale row"
        assert mirror.cursor.tolist() == [step % 3]
        assert mirror.ring.tolist() == ring
        assert mirror.published == step


@pytest.mark.parametrize("name", list(BACKENDS))
def test_at_depth_two_the_live_row_alternates_and_the_other_row_keeps_the_previous_tokens(name: str) -> None:
    _, mirror = mirror_on(name, slots=3, depth=2)
    mirror.seed([4, 5, 6])
    mirror.publish(logits_choosing([10, 11, 12]))
    assert mirror.ring.tolist() == [[4, 5, 6], [10, 11, 12]] and mirror.current().tolist() == [10, 11, 12]
    mirror.publish(logits_choosing([20, 21, 22]))
    assert mirror.ring.tolist() == [[20, 21, 22], [10, 11, 12]] and mirror.current().tolist() == [20, 21, 22]
    assert mirror.cursor.tolist() == [0]


@pytest.mark.parametrize("name", list(BACKENDS))
def test_a_depth_one_ring_is_one_row_overwritten_by_every_publish(name: str) -> None:
    _, mirror = mirror_on(name, slots=2, depth=1)
    mirror.seed([3, 4])
    for tokens in ([30, 31], [40, 41]):
        mirror.publish(logits_choosing(tokens))
        assert mirror.ring.tolist() == [tokens] and mirror.cursor.tolist() == [0]
        assert mirror.current().tolist() == tokens


@pytest.mark.parametrize("name", list(BACKENDS))
def test_the_ring_is_depth_by_slots_of_token_ids_and_current_is_one_token_per_slot(name: str) -> None:
    _, mirror = mirror_on(name, slots=4, depth=3)
    assert tuple(mirror.ring.shape) == (3, 4) and mirror.ring.dtype == torch.int64
    assert tuple(mirror.cursor.shape) == (1,) and mirror.cursor.dtype == torch.int64
    mirror.seed([1, 2, 3, 4])
    assert tuple(mirror.current().shape) == (4,) and mirror.depth == 3 and mirror.published == 0


@pytest.mark.parametrize("name", list(BACKENDS))
def test_seeding_is_one_upload_and_each_publish_is_one_launch_on_the_default_queue(name: str) -> None:
    backend, mirror = mirror_on(name, slots=2, depth=2)
    before = backend.stats.snapshot()
    mirror.seed([1, 2])
    seeded = backend.stats.snapshot()
    assert (seeded["copies"] - before["copies"], seeded["launches"] - before["launches"]) == (1, 0)
    assert [e.queue for e in backend.trace if e.op == "copy"] == [backend.default_queue().id], "seeded on the default queue"
    side = backend.new_queue()
    with backend.use_queue(side):  # the runner may call from another queue: the ring is written on the default one
        for _ in range(3):
            mirror.publish(logits_choosing([7, 9]))
    after = backend.stats.snapshot()
    assert (after["copies"] - seeded["copies"], after["launches"] - seeded["launches"]) == (0, 3)
    launched_on = [e.queue for e in backend.trace if e.op == "launch"]
    assert launched_on == [backend.default_queue().id] * 3


@pytest.mark.parametrize("name", list(BACKENDS))
def test_a_publish_samples_each_slot_greedily_from_its_own_logits_row(name: str) -> None:
    _, mirror = mirror_on(name, slots=2, depth=2)
    mirror.seed([0, 0])
    logits = torch.tensor([[0.1, 3.0, 0.2, -1.0], [2.0, 0.0, 0.5, 4.0]])  # slot 0 -> 1, slot 1 -> 3
    mirror.publish(logits)
    assert mirror.current().tolist() == [1, 3]


@pytest.mark.parametrize("name", list(BACKENDS))
def test_a_publish_takes_the_decoders_t1_logits_as_they_come_one_row_per_slot(name: str) -> None:
    _, mirror = mirror_on(name, slots=2, depth=2)
    mirror.seed([0, 0])
    mirror.publish(logits_choosing([17, 29]).unsqueeze(1))  # [B, 1, V]: what decode_forward returns for T=1
    assert mirror.current().tolist() == [17, 29] and mirror.ring.tolist() == [[0, 0], [17, 29]]


@pytest.mark.parametrize("name", list(BACKENDS))
def test_seeded_token_ids_arrive_exactly_even_beyond_float_precision(name: str) -> None:
    _, mirror = mirror_on(name, slots=3, depth=2)
    ids = [2**24 + 1, 2**40 + 3, 7]  # not representable in float32: a float staging block would round them
    mirror.seed(ids)
    assert mirror.current().tolist() == ids and mirror.ring[0].tolist() == ids


@pytest.mark.parametrize("depth", [0, -1])
def test_a_mirror_without_a_row_is_refused_naming_the_depth(depth: int) -> None:
    with pytest.raises(ValueError, match=rf"a token mirror needs depth >= 1, got {depth}$"):
        TokenMirror(EagerBackend(), 2, depth)
