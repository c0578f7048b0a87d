"""The bit-exactness check every ``test_<driver>_exact.py`` makes: driver values vs the eager reference.

Deliberately blind to capture machinery: it reads only the values a driver returns, so it is green
whether the driver is migrated or not (that is the point the seam tests exist to make).
"""

from __future__ import annotations

from drivers.scenarios import device_of, differing_values, reference_scenario, run_scenario
from seam import Backend

#: Steps (or proposes) each exactness check runs: enough for several replays with changing inputs.
EXACT_STEPS = 6


def assert_matches_reference(name: str, backend: Backend, graph: bool | None) -> None:
    """``name`` on ``backend`` reproduces its eager reference over ``EXACT_STEPS`` steps, 0 values differing."""
    _, outputs = run_scenario(name, backend, steps=EXACT_STEPS, graph=graph)
    total, differ = differing_values(outputs, reference_scenario(name, steps=EXACT_STEPS, device=device_of(backend)))
    assert total > 0 and differ == 0, f"{name}: {differ} of {total} values differ from the eager reference"
