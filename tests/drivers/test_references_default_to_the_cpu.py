"""Every eager reference runs on the CPU when no device is named, and gives the values it gives with ``device="cpu"``."""

from __future__ import annotations

import pytest
import torch

from drivers import aux, dense, draft, moe, piecewise, resident
from drivers.config import DriverConfig
from drivers.scenarios import DRIVERS, position_rows, reference_scenario
from drivers.tiny_model import EagerReference

CFG = DriverConfig()
ROWS = [[1, 8], [4, 11]]  # token rows written out: a call here would run scenario code at import (a sweep then
# runs each of its mutants in a session of its own)


def same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return len(a) == len(b) and all(x.device.type == "cpu" and torch.equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("module", [dense, moe, aux, piecewise], ids=["dense", "moe", "aux", "piecewise"])
def test_a_drivers_reference_logits_default_to_the_cpu(module) -> None:
    assert same(module.reference_logits(CFG, ROWS), module.reference_logits(CFG, ROWS, "cpu"))


def test_the_resident_reference_and_the_draft_proposals_default_to_the_cpu() -> None:
    positions = position_rows(CFG, 2)
    assert same(resident.reference_logits(CFG, ROWS, positions), resident.reference_logits(CFG, ROWS, positions, "cpu"))
    assert same(draft.reference_proposals(CFG, 2), draft.reference_proposals(CFG, 2, "cpu"))


def test_the_greedy_reference_and_the_eager_reference_default_to_the_cpu() -> None:
    assert dense.reference_greedy(CFG, [3, 4], 3) == dense.reference_greedy(CFG, [3, 4], 3, "cpu")
    ref = EagerReference(CFG)
    assert ref.device == "cpu" and ref.weights.embed.device.type == "cpu" and ref.cache.k.device.type == "cpu"


@pytest.mark.parametrize("name", list(DRIVERS))
def test_a_scenarios_reference_defaults_to_the_cpu(name: str) -> None:
    assert same(reference_scenario(name, steps=2), reference_scenario(name, steps=2, device="cpu"))


@pytest.mark.parametrize("module", [dense, moe, aux], ids=["dense", "moe", "aux"])
def test_a_drivers_reference_runs_on_the_device_it_is_given(module) -> None:
    """``meta`` stands in for an accelerator: shapes only, no values, and no CPU tensor may appear."""
    out = module.reference_logits(CFG, ROWS, "meta")
    assert [(t.device.type, tuple(t.shape)) for t in out] == [("meta", (CFG.slots, CFG.vocab))] * len(ROWS)


def test_the_resident_reference_runs_on_the_device_it_is_given() -> None:
    out = resident.reference_logits(CFG, ROWS, position_rows(CFG, 2), "meta")
    assert [(t.device.type, tuple(t.shape)) for t in out] == [("meta", (CFG.slots, CFG.vocab))] * len(ROWS)
