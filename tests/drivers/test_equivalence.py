"""G4: each driver's migrated and unmigrated forms emit identical values (>= 24 values, 0 differing).

The unmigrated form is the catalog's ``unmigrate-<driver>`` mutation applied to the driver's source
TEXT and imported as a separate module from a temp folder; the working tree is never written. Both
forms run on the CPU emulator, where both really capture and replay.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from drivers.scenarios import DRIVERS, differing_values, run_scenario
from mutations.apply import apply_to_text
from mutations.catalog import load_catalog
from seam import EmulatedBackend, reset_graph_break_stats

ROOT = Path(__file__).resolve().parents[2]
STEPS = 6
MIN_VALUES = 24


def unmigrated_module(name: str, folder: Path) -> ModuleType:
    """``drivers/<name>.py`` with ``unmigrate-<name>`` applied, imported as ``<name>_unmigrated``."""
    mutation = load_catalog([ROOT / "mutations" / "catalog"], project_root=ROOT).get(f"unmigrate-{name}")
    path = folder / f"{name}_unmigrated.py"
    path.write_text(apply_to_text((ROOT / mutation.target).read_text(encoding="utf-8"), mutation), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"{name}_unmigrated", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import the unmigrated {name} from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", list(DRIVERS))
def test_migrated_and_unmigrated_drivers_emit_identical_values(name: str, tmp_path: Path) -> None:
    old = unmigrated_module(name, tmp_path)
    reset_graph_break_stats()
    old_driver, old_out = run_scenario(name, EmulatedBackend(), steps=STEPS, module=old)
    new_driver, new_out = run_scenario(name, EmulatedBackend(), steps=STEPS)
    if not (old_driver.lane == new_driver.lane == "capture"):
        raise AssertionError(f"both forms must take the capture lane for G4 to compare replays: {old_driver.lane}, {new_driver.lane}")
    total, differ = differing_values(new_out, old_out)
    print(f"G4 {name}: {total} values, {differ} differing")
    assert total >= MIN_VALUES and differ == 0
