"""``DriverConfig``: the documented default sizes, and every size below one or a top-k above the experts refused by name."""

from __future__ import annotations

import dataclasses

import pytest

from drivers.config import DriverConfig

SIZES = ("vocab", "hidden", "ffn", "layers", "max_seq", "slots", "experts", "top_k", "draft_k")


def test_the_default_driver_is_the_documented_tiny_decoder() -> None:
    cfg = DriverConfig()
    assert dataclasses.asdict(cfg) == {"vocab": 48, "hidden": 16, "ffn": 32, "layers": 2, "max_seq": 24, "slots": 2,
                                       "experts": 4, "top_k": 2, "draft_k": 3, "seed": 0}


@pytest.mark.parametrize("name", SIZES)
def test_a_size_of_one_is_accepted_where_top_k_still_fits(name: str) -> None:
    cfg = DriverConfig(**{name: 1, **({"top_k": 1} if name == "experts" else {})})
    assert getattr(cfg, name) == 1


@pytest.mark.parametrize("name", SIZES)
@pytest.mark.parametrize("value", [0, -2])
def test_a_size_below_one_is_refused_naming_the_field_and_the_value(name: str, value: int) -> None:
    with pytest.raises(ValueError, match=rf"^DriverConfig\.{name} must be >= 1, got {value}$"):
        DriverConfig(**{name: value})


def test_top_k_may_equal_the_experts_but_not_exceed_them() -> None:
    assert DriverConfig(experts=3, top_k=3).top_k == 3
    with pytest.raises(ValueError, match=r"^DriverConfig\.top_k \(4\) exceeds experts \(3\)$"):
        DriverConfig(experts=3, top_k=4)


def test_the_seed_is_not_a_size_any_integer_seeds_the_weights() -> None:
    assert DriverConfig(seed=0).seed == 0 and DriverConfig(seed=-5).seed == -5


def test_a_config_is_a_frozen_value_compared_by_its_fields() -> None:
    cfg = DriverConfig(slots=3)
    assert cfg == DriverConfig(slots=3) and cfg != DriverConfig(slots=4) and hash(cfg) == hash(DriverConfig(slots=3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.slots = 5  # type: ignore[misc]
