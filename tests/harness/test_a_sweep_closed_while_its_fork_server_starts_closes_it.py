"""A sweep closed while its fork server is still starting closes that server when the start ends.

The sweep starts its launcher in the background while the baseline's copy and the mutants' generation run
(``_Lazy.warm``). Closed in that window (an interrupted sweep), the close found no launcher yet and did nothing, and
the start then finished: a fork server outlived the sweep. Now the close waits for the start and closes what it made,
and nothing starts after it.
"""

from __future__ import annotations

import threading

import pytest

from harness.rows.executor import RunsStopped
from harness.sweep.sweep import _Lazy


class _Launcher:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_a_close_during_the_start_closes_the_launcher_the_start_made() -> None:
    entered, release = threading.Event(), threading.Event()
    made: list[_Launcher] = []

    def start() -> _Launcher:
        entered.set()
        assert release.wait(10)
        made.append(_Launcher())
        return made[-1]

    lazy = _Lazy(start)
    lazy.warm()
    assert entered.wait(10)
    closing = threading.Thread(target=lazy.close)
    closing.start()
    release.set()
    closing.join(10)
    assert not closing.is_alive() and len(made) == 1 and made[0].closed


def test_nothing_starts_after_the_close() -> None:
    started: list[int] = []
    lazy = _Lazy(lambda: started.append(1) or _Launcher())
    lazy.close()
    with pytest.raises(RunsStopped):
        lazy.submit({})
    assert started == []
