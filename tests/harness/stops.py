"""What the stop tests share (``test_an_interrupted_sweep_...``, ``test_a_gate_run_starts_no_run_after_its_stop``):
a project whose one test naps, and a launcher on which a stop lands while a run is submitted."""

from __future__ import annotations

from typing import Any, Callable

#: Each session of a napping project: one line in ``MARKER`` (when set) as it starts, then a nap no stop may wait out.
NAP = 60.0
NAPPING = {
    "tests/__init__.py": "",
    "tests/test_nap.py": ("import os, time\n\n\ndef test_nap():\n    if os.environ.get('MARKER'):\n"
                          "        with open(os.environ['MARKER'], 'a') as fh:\n            fh.write('started\\n')\n"
                          f"        time.sleep({NAP})\n"),
}


class StoppedMidSubmit:
    """``server``, with ``stop`` called after the caller's check and before the server holds the run."""

    def __init__(self, server: Any, stop: Callable[[], None]) -> None:
        self.server, self.stop = server, stop

    def submit(self, request: dict[str, Any]) -> Any:
        self.stop()
        return self.server.submit(request)

    def kill_all(self) -> None:
        self.server.kill_all()
