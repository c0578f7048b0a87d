"""Reading which capture machinery ran: the backend trace filtered to the calls that name a lane."""

from __future__ import annotations

from seam import Backend

#: Backend calls that tell the capture lane from the eager one, and a scope from the raw pair.
MACHINERY = frozenset({"launch", "synchronize", "begin_capture", "end_capture", "abort_capture", "replay", "destroy"})


def machinery_ops(backend: Backend) -> list[str]:
    """The trace's machinery calls, in order."""
    return [op for op in backend.trace_ops() if op in MACHINERY]


def captured_region(backend: Backend, which: int = 0) -> list[str]:
    """The trace ops strictly between the ``which``-th ``begin_capture`` and the next ``end_capture``."""
    ops = backend.trace_ops()
    begins = [i for i, op in enumerate(ops) if op == "begin_capture"]
    if len(begins) <= which:
        raise AssertionError(f"the trace has {len(begins)} begin_capture call(s), wanted index {which}: {ops}")
    start = begins[which]
    return ops[start + 1: ops.index("end_capture", start)]
