"""The drivers' shared machinery as a user sees it: positions, slots, schedules and work fingerprints.

Every driver and its eager reference share ``tiny_model``, ``scenarios`` and ``draft_rows``, so a
bit-exactness test cannot see a defect there: both sides carry it. These tests pin the shared parts
to facts any correct decoder has (a slot reads only its own history, a later cache row is invisible,
a (1+k) step equals its k+1 single steps), to the documented schedules, and to the exact work each
lane does (copies, launches, one digest of values for every lane).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from drivers import draft, resident
from drivers.config import DriverConfig
from drivers.fingerprint import BACKENDS, backend_by_name, output_digest, work_fingerprint
from drivers.graphed_step import capture_admitted
from drivers.scenarios import (DRIVERS, device_of, differing_values, position_rows, reference_scenario, run_scenario,
                               token_rows)
from drivers.tiny_model import EagerReference
from harness.zygote import run_python
from seam import AddressChangedError, CudaBackend, EagerBackend, EmulatedBackend, cudagraph_enabled, driver_graph_enabled
from seam.torch_cuda import emulate_cuda, is_emulating

ROOT = Path(__file__).resolve().parents[2]
CFG = DriverConfig()


def ref() -> EagerReference:
    return EagerReference(CFG)


# ---- the decoder: slots, history, positions ----------------------------------------------
def test_a_slot_reads_only_its_own_tokens() -> None:
    a = ref()([[5], [9]], [[0], [0]])
    b = ref()([[5], [30]], [[0], [0]])
    assert torch.equal(a[0], b[0]) and not torch.equal(a[1], b[1])


def test_a_slot_reads_its_own_history_through_the_cache_and_not_the_other_slots() -> None:
    first, second = ref(), ref()
    for r, history in ((first, [[1], [2]]), (second, [[11], [2]])):  # slot 0's first token differs
        r(history, [[0], [0]])
        r([[3], [4]], [[1], [1]])
    a, b = first([[6], [7]], [[2], [2]]), second([[6], [7]], [[2], [2]])
    assert not torch.equal(a[0], b[0])  # slot 0 remembers its own step 0
    assert torch.equal(a[1], b[1])  # slot 1 never saw slot 0's history


def test_each_slot_is_at_its_own_position() -> None:
    same = ref()([[5], [5]], [[0], [0]])
    apart = ref()([[5], [5]], [[0], [3]])
    assert torch.equal(same[0], apart[0]) and torch.equal(same[0], same[1])
    assert not torch.equal(apart[0], apart[1])  # slot 1 at position 3 sees three (zero) rows before it


def test_cache_rows_after_the_current_position_are_invisible() -> None:
    clean, stale = ref(), ref()
    stale([[40, 41, 42, 43, 44]] * CFG.slots, [[0, 1, 2, 3, 4]] * CFG.slots)  # leaves rows 0..4 written
    for p, tokens in enumerate(([[3], [4]], [[5], [6]])):
        assert torch.equal(clean(tokens, [[p], [p]]), stale(tokens, [[p], [p]]))


def test_a_multi_token_step_equals_its_single_token_steps_at_consecutive_positions() -> None:
    tokens = [[7, 47, 47, 47], [8, 47, 47, 47]]
    many = ref()(tokens, [[3, 4, 5, 6]] * CFG.slots)  # [B, 4, V]
    single = ref()
    for i in range(4):
        one = single([[row[i]] for row in tokens], [[3 + i]] * CFG.slots)[:, 0]
        assert torch.allclose(many[:, i], one, rtol=1e-5, atol=1e-6), i


# ---- the (1+k) draft step and its schedule ------------------------------------------------
def test_a_draft_step_is_the_accepted_token_then_k_mask_tokens_at_consecutive_positions() -> None:
    tokens, positions = draft.draft_rows(CFG, [5, 6], 4)
    mask = CFG.vocab - 1
    assert tokens == [[5] + [mask] * CFG.draft_k, [6] + [mask] * CFG.draft_k]
    assert positions == [[4, 5, 6, 7], [4, 5, 6, 7]]


def test_the_draft_schedule_advances_by_the_accepted_tokens_and_feeds_back_the_last_accepted_argmax() -> None:
    calls = []

    def propose(last, position):
        calls.append((list(last), position))
        logits = torch.zeros(CFG.slots, 1 + CFG.draft_k, CFG.vocab)
        for slot in range(CFG.slots):
            logits[slot, draft.ACCEPTED_PER_PROPOSE - 1, 10 * (len(calls)) + slot] = 1.0  # the accepted one
            logits[slot, draft.ACCEPTED_PER_PROPOSE, 40 + slot] = 5.0  # a later, larger row: must be ignored
        return logits

    outputs = draft.propose_schedule(CFG, propose, 3)
    assert draft.ACCEPTED_PER_PROPOSE == 2 and len(outputs) == 3
    assert calls == [([1, 2], 0), ([10, 11], 2), ([20, 21], 4)]


# ---- the scenario every exact test, G1 and G4 drive ---------------------------------------
def test_every_slot_gets_a_new_token_each_step_and_slots_differ_within_a_step() -> None:
    rows = token_rows(CFG, 6)
    assert len(rows) == 6 and all(len(r) == CFG.slots for r in rows)
    assert all(0 <= t < CFG.vocab for r in rows for t in r)
    assert all(len(set(r)) == CFG.slots for r in rows)
    assert all(rows[s][b] != rows[s + 1][b] for s in range(5) for b in range(CFG.slots))
    assert rows[0] == [1, 8] and rows[1] == [4, 11]


def test_resident_slots_start_at_twice_their_index_and_advance_one_per_step() -> None:
    assert position_rows(CFG, 3) == [[0, 2], [1, 3], [2, 4]]
    wide = DriverConfig(slots=4)
    assert position_rows(wide, 2) == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_differing_values_counts_every_value_and_every_difference_nan_included() -> None:
    a = [torch.tensor([1.0, 2.0]), torch.tensor([[3.0, 4.0]])]
    assert differing_values(a, [t.clone() for t in a]) == (4, 0)
    b = [torch.tensor([1.0, float("nan")]), torch.tensor([[3.0, 5.0]])]
    assert differing_values(b, a) == (4, 2)
    assert differing_values(b, b) == (4, 1)  # NaN differs from itself: a poisoned read is never "equal"
    with pytest.raises(ValueError, match="1 outputs against 2 expected"):
        differing_values(a[:1], a)
    with pytest.raises(ValueError, match=r"output shape \(2,\) differs from the reference's \(1, 2\)"):
        differing_values([a[0], a[0]], a)


# ---- slots recycled in place (resident) ---------------------------------------------------
def test_recycling_one_resident_slot_leaves_the_other_slots_values_alone() -> None:
    cfg = DriverConfig(slots=3)
    kept, recycled = (resident.ResidentDriver(EmulatedBackend(), cfg, graph=True) for _ in range(2))
    for step in range(2):
        for d in (kept, recycled):
            d.step([1 + step, 2 + step, 3 + step], [step, step, step])
    recycled.reset_slot(1)
    a = kept.step([9, 9, 9], [2, 2, 2])
    b = recycled.step([9, 9, 9], [2, 0, 2])  # slot 1 starts over at position 0
    assert torch.equal(a[0], b[0]) and torch.equal(a[2], b[2])
    fresh = resident.ResidentDriver(EmulatedBackend(), cfg, graph=False).step([9, 9, 9], [0, 0, 0])
    assert torch.equal(b[1], fresh[1])  # the recycled slot decodes like a fresh one


def test_a_resident_cache_reallocated_under_the_graph_is_refused() -> None:
    d = resident.ResidentDriver(EmulatedBackend(), CFG, graph=True)
    d.step([1, 2], [0, 2])
    d.resident.k.data = torch.zeros_like(d.resident.k)
    with pytest.raises(AddressChangedError, match="moved"):
        d.step([3, 4], [1, 3])


# ---- fingerprints: the lane's shape and one digest of its values --------------------------
def test_the_output_digest_is_one_value_per_output_sequence() -> None:
    a = [torch.tensor([1.0, 2.0]), torch.tensor([3.0])]
    assert output_digest(a) == output_digest([t.clone() for t in a])
    assert output_digest(a) != output_digest([a[0], torch.tensor([3.5])])  # the LAST output counts
    assert output_digest(a) != output_digest([a[1], a[0]])  # order counts
    assert output_digest(a) != output_digest(a[:1])
    assert output_digest([torch.tensor([1, 2])]) != output_digest([torch.tensor([1.0, 2.0])])
    assert len(output_digest([])) == 64


def test_a_work_fingerprint_is_the_backends_copies_and_launches_the_lane_and_the_digest() -> None:
    b = EagerBackend()
    x = b.alloc((2,))
    b.copy(x, b.alloc_pinned((2,)), b.default_queue())
    b.copy(x, b.alloc_pinned((2,)), b.default_queue())
    b.launch(lambda: None)
    out = [torch.tensor([1.0])]
    assert work_fingerprint(b, "eager", out) == {"copies": 2, "launches": 1, "lane": "eager",
                                                 "output_digest": output_digest(out)}


@pytest.mark.parametrize("name", ["eager", "cuda"])
def test_a_backend_is_made_by_its_lane_name(name: str) -> None:
    assert BACKENDS[name].name == name
    if name != "cuda":
        assert backend_by_name(name).name == name


def test_the_cpu_emulated_lane_is_the_cuda_backend_on_the_emulated_device() -> None:
    with emulate_cuda():
        backend = backend_by_name("cpu-emulated")
        assert type(backend) is CudaBackend and backend.can_capture
        assert backend.alloc((2,)).device == torch.device("cuda", 0)
    assert not is_emulating(), "inside emulate_cuda() the lane leaves the emulation as it found it"


def test_the_cpu_emulated_lane_made_outside_the_emulation_emulates_its_whole_process() -> None:
    code = ("import torch; from drivers.fingerprint import backend_by_name; from seam.torch_cuda import is_emulating; "
            "b = backend_by_name('cpu-emulated'); print(type(b).__name__, is_emulating(), torch.cuda.is_available(), "
            "b.alloc((2,)).device)")
    done = run_python(["-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["CudaBackend", "True", "True", "cuda:0"]


def test_each_backend_names_the_torch_device_its_reference_runs_on() -> None:
    assert [device_of(b) for b in (EagerBackend(), EmulatedBackend())] == ["cpu", "cpu"]
    assert device_of(type("B", (), {"name": "cuda"})()) == "cuda"


def test_an_unknown_backend_name_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown backend 'gpu'; known: eager, cpu-emulated, cuda"):
        backend_by_name("gpu")


def test_the_capture_lane_is_admitted_only_on_a_capture_capable_backend_with_both_switches_on() -> None:
    assert capture_admitted(EagerBackend(), "dense") is False
    assert draft.capture_lane_admitted(EagerBackend()) is False
    on = cudagraph_enabled()
    assert capture_admitted(EmulatedBackend(), "dense") is (on and driver_graph_enabled("dense"))
    assert draft.capture_lane_admitted(EmulatedBackend()) is (on and driver_graph_enabled("draft"))


#: name -> (copies per eager step, captured segments, copies the capture lane adds once)
LANES = {"dense": (2, 1, 0), "moe": (2, 1, 0), "draft": (2, 1, 0), "resident": (2, 1, 0), "aux": (2, 1, 0),
         "piecewise": (3, 2, 2)}
STEPS = 3


@pytest.mark.parametrize("name", list(DRIVERS))
def test_each_lane_does_exactly_its_work_and_every_lane_gives_the_same_values(name: str) -> None:
    assert set(LANES) == set(DRIVERS)
    per_step, segments, extra = LANES[name]
    seen = {}
    for label, backend, graph in (("eager-backend", EagerBackend(), None), ("eager-lane", EmulatedBackend(), False),
                                  ("capture-lane", EmulatedBackend(), True)):
        driver, outputs = run_scenario(name, backend, steps=STEPS, graph=graph)
        seen[label] = work_fingerprint(backend, driver.lane, outputs)
        if label == "eager-backend":  # the reference every exact suite, G1 and G4 compare with
            expected = reference_scenario(name, steps=STEPS, device=device_of(backend))
            assert len(expected) == STEPS and differing_values(outputs, expected) == (outputs[0].numel() * STEPS, 0)
    eager = {"copies": per_step * STEPS, "launches": STEPS, "lane": "eager"}
    assert {k: seen["eager-backend"][k] for k in eager} == eager
    assert seen["eager-lane"] == seen["eager-backend"]  # capture off: exactly the eager lane's work
    capture = {"copies": per_step * STEPS + extra, "launches": 1 + segments * STEPS, "lane": "capture"}
    assert {k: seen["capture-lane"][k] for k in capture} == capture  # one warm launch, then replays
    assert seen["capture-lane"]["output_digest"] == seen["eager-backend"]["output_digest"]


def test_the_draft_lane_fingerprint_child_entry_point_reports_both_lanes() -> None:
    eager = draft.lane_fingerprint("eager")
    assert eager["lane"] == "eager" and eager["launches"] == draft.FINGERPRINT_PROPOSES
    with emulate_cuda():  # in this process: the lane alone would emulate it for good (a child's lane does)
        emulated = draft.lane_fingerprint("cpu-emulated")
    assert emulated["output_digest"] == eager["output_digest"]
    assert emulated["lane"] == ("capture" if draft.capture_lane_admitted(EmulatedBackend()) else "eager")
