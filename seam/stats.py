"""Process-wide graph-break counters: the observable form of every seam rule."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class GraphBreakStats:
    """A snapshot of the seam's counters (``get_graph_break_stats()``)."""

    #: Segments whose capture closed successfully.
    segments_captured: int = 0
    #: Break points that closed a PIECEWISE segment (captured at graph construction).
    breaks: int = 0
    #: Side queues registered with ``note_fork`` (re-registering one queue counts once).
    forks_tracked: int = 0
    #: Outstanding forks the SCOPE joined before a segment close (0 when the model joined itself).
    forks_auto_joined: int = 0
    #: Whole-graph replays.
    replays: int = 0
    #: Scopes that ran their body eagerly because capture was off or impossible.
    inert_scopes: int = 0


_counters: dict[str, int] = {f.name: 0 for f in dataclasses.fields(GraphBreakStats)}


def bump(name: str, by: int = 1) -> None:
    """Add ``by`` to one counter (the seam's own modules call this)."""
    _counters[name] += by


def get_graph_break_stats() -> GraphBreakStats:
    """The counters now."""
    return GraphBreakStats(**_counters)


def reset_graph_break_stats() -> None:
    """Zero every counter."""
    for name in _counters:
        _counters[name] = 0
