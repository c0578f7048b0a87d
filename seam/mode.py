"""Capture modes: how a break point inside a captured region is handled."""

from __future__ import annotations

import enum


class CaptureMode(enum.Enum):
    """FULL: one segment, break points captured inline. PIECEWISE: each break closes the segment,
    runs its function eagerly (at capture and at every replay), and opens the next segment."""

    FULL = "full"
    PIECEWISE = "piecewise"
