"""The collector guard's contract (``seam.collector``), with two captures open at once and with none.

CUDA's capture mode is global: a release while ANY capture is open invalidates it. So a release
waits until the LAST open capture closes (closing one of two is not enough), the automatic collector
stays off until then, and the guard never touches the collector when no capture opened: a stray
close (a begin that failed before it opened) leaves the user's ``gc`` setting as the user left it.
``release`` says whether it ran now. (Through real backends and graphs: ``test_collector.py``.)
"""

from __future__ import annotations

import gc
import subprocess
import sys
from typing import Iterator

import pytest

from seam import collector


class Capture:
    """An open capture as the guard sees it: something it can invalidate."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def invalidate(self, reason: str) -> None:
        self.reasons.append(reason)


@pytest.fixture(autouse=True)
def users_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    try:
        yield
    finally:
        (gc.enable if enabled else gc.disable)()
    assert not collector.any_capture_open() and collector.deferred_releases() == 0


def test_with_two_captures_open_a_release_waits_for_the_last_close_and_the_collector_stays_off() -> None:
    gc.enable()
    first, second, ran = Capture(), Capture(), []
    collector.capture_opening(first)
    collector.capture_opening(second)
    try:
        assert collector.release("graph 1", lambda: ran.append(1)) is False
        collector.capture_closed(first)
        assert ran == [] and collector.deferred_releases() == 1 and not gc.isenabled()
    finally:
        collector.capture_closed(first)
        collector.capture_closed(second)
    assert ran == [1] and gc.isenabled()
    assert first.reasons == [] and second.reasons == []  # a held release invalidates nothing


def test_a_release_with_no_capture_open_runs_now_and_says_so() -> None:
    ran: list[int] = []
    assert collector.release("graph 2", lambda: ran.append(2)) is True and ran == [2]


FIRST_CLOSE = """
import gc, importlib.util, sys
spec = importlib.util.spec_from_file_location("guard", sys.argv[1])
guard = importlib.util.module_from_spec(spec)
spec.loader.exec_module(guard)
gc.disable()
guard.capture_closed(object())
print(gc.isenabled())
"""


def test_a_close_of_a_capture_that_never_opened_leaves_the_users_collector_alone() -> None:
    # In a fresh interpreter (the guard module alone, no torch): before the process's first capture.
    done = subprocess.run([sys.executable, "-c", FIRST_CLOSE, collector.__file__], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]
    gc.disable()
    collector.capture_closed(Capture())
    assert not gc.isenabled()


def test_after_a_capture_closed_a_stray_close_leaves_the_collector_as_the_user_set_it_since() -> None:
    gc.enable()
    capture = Capture()
    collector.capture_opening(capture)
    collector.capture_closed(capture)
    assert gc.isenabled()
    gc.disable()
    collector.capture_closed(Capture())
    assert not gc.isenabled()
