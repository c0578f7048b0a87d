"""Process-wide capture switches, read ONCE per process (which is why tests check them in children).

``SEAM_CUDAGRAPH=0`` turns capture off everywhere: every scope is inert. ``SEAM_<DRIVER>_GRAPH=0``
is one driver's same-binary rollback lever.
"""

from __future__ import annotations

import functools
import os

_OFF_VALUES = frozenset({"0", "false", "off", "no"})


def _is_on(raw: str | None) -> bool:
    return raw is None or raw.strip().lower() not in _OFF_VALUES


@functools.cache
def cudagraph_enabled() -> bool:
    """Whether capture is on in this process (``SEAM_CUDAGRAPH``, default on); read once."""
    return _is_on(os.environ.get("SEAM_CUDAGRAPH"))


@functools.cache
def driver_graph_enabled(driver: str) -> bool:
    """Whether ``driver``'s own rollback switch ``SEAM_<DRIVER>_GRAPH`` leaves its graph on; read once."""
    return _is_on(os.environ.get(f"SEAM_{driver.upper()}_GRAPH"))
