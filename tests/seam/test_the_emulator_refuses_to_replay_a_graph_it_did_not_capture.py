"""The CPU emulator replays only segments it captured itself.

A ``RawGraph`` from anywhere else (another backend's segment, a bare ``RawGraph``) is refused at
``replay`` with ``CaptureStateError`` naming the graph by its id, and nothing runs.
"""

from __future__ import annotations

import pytest

from seam import CaptureStateError, EmulatedBackend, RawGraph


def test_a_graph_the_emulator_did_not_capture_is_refused_by_its_id() -> None:
    emu = EmulatedBackend()
    foreign = RawGraph()
    with pytest.raises(CaptureStateError) as refused:
        emu.replay(foreign, emu.default_queue())
    assert str(refused.value) == f"graph {foreign.id} was not captured by an EmulatedBackend"
