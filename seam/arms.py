"""The one registry of platform arms: their names, which have a backend in this build, and what each needs.

The gate validator (``harness.gates.model.ARM_NAMES``, ``arms:`` of a gate and ``--arm``) and the seam's
pytest plugin (``seam.pytest_plugin``: ``SEAM_ARMS``, the ``backend`` fixture) both read this table,
so an arm a gate may name is an arm the plugin knows. An arm with no backend in this build (``rocm``)
is known to both: a gate may list it, and its cases are skipped as ``OWED:`` with the reason below
(the runner reports the arm OWED), never a pytest usage error. ``seamgate_plugin.py`` keeps a copy of
``ARM_NAMES`` and ``PARAMETRIZED`` (it may import only ``os`` and ``pytest``); a test keeps them equal.
This module imports nothing.
"""

from __future__ import annotations

#: Every platform arm, in the order gates and the plugin list them.
ARM_NAMES: tuple[str, ...] = ("cpu-emulated", "cuda", "rocm")

#: The arm every machine has: what a run, a gate and a sweep use unless told otherwise.
DEFAULT_ARM = "cpu-emulated"

#: Arms with a backend in this build: the ``backend`` fixture parametrizes these when ``SEAM_ARMS`` is unset.
PARAMETRIZED: tuple[str, ...] = ("cpu-emulated", "cuda")

#: Why an arm without a backend cannot run anywhere, stated for the OWED verdict.
NO_BACKEND: dict[str, str] = {
    "rocm": "no backend for arm 'rocm' in this build (seam has a cpu-emulated and a cuda backend only); "
            "the rocm arm stays OWED until a ROCm backend is added",
}
