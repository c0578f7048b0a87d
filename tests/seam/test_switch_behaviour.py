"""The capture switches as a user sets them: which values turn capture off, and that each is read once.

``SEAM_CUDAGRAPH`` and ``SEAM_<DRIVER>_GRAPH`` are read ONCE per process, so every row runs in a
fresh child and reports what its scopes did.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .conftest import run_child

# A child that opens one scope, changes the environment, opens a second scope, and reports both.
CHILD = """
    import json, os, sys
    from seam import *
    b = EmulatedBackend(); q = b.default_queue()
    def scope_inert():
        g = BreakableGraph(b, CaptureMode.FULL)
        x = b.alloc((2,))
        with GraphCaptureScope(b, q, g) as s:
            x.add_(1)
        return s.inert
    first = scope_inert()
    os.environ["SEAM_CUDAGRAPH"] = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("FLIP_TO", "0")
    second = scope_inert()
    print(json.dumps({"first": first, "second": second, "enabled": cudagraph_enabled(),
                      "begin_captures": b.trace_ops().count("begin_capture")}))
"""


def child(env: dict[str, str]) -> dict:
    proc = run_child(CHILD, env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# The switch module on its own (no torch): a fresh interpreter per value costs milliseconds.
SWITCH_ONLY = """
    import importlib.util, json, os, sys
    spec = importlib.util.spec_from_file_location("switches", os.path.join(sys.argv[1], "seam", "switches.py"))
    switches = importlib.util.module_from_spec(spec); spec.loader.exec_module(switches)
    first = switches.cudagraph_enabled()
    os.environ["SEAM_CUDAGRAPH"] = "1" if not first else "0"
    print(json.dumps([first, switches.cudagraph_enabled()]))
"""


def switch_child(env: dict[str, str], code: str = SWITCH_ONLY) -> Any:
    import subprocess
    import sys
    import textwrap

    from .conftest import ROOT

    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(ROOT)], capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", **env})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


OFF = ["0", "false", "FALSE", "off", "Off", "no", " 0 ", " no\n"]
ON = ["1", "true", "on", "yes", "", "2", "zero"]


@pytest.mark.parametrize("value", OFF)
def test_each_off_spelling_of_seam_cudagraph_turns_capture_off_for_the_whole_process(value: str) -> None:
    assert switch_child({"SEAM_CUDAGRAPH": value}) == [False, False]  # read once: a later "1" is ignored


@pytest.mark.parametrize("value", ON)
def test_any_other_value_of_seam_cudagraph_leaves_capture_on_for_the_whole_process(value: str) -> None:
    assert switch_child({"SEAM_CUDAGRAPH": value}) == [True, True]  # read once: a later "0" is ignored


def test_an_unset_seam_cudagraph_means_capture_on() -> None:
    assert switch_child({}) == [True, True]


def test_seam_cudagraph_off_makes_every_scope_inert_even_when_flipped_on_later() -> None:
    seen = child({"SEAM_CUDAGRAPH": "off", "FLIP_TO": "1"})
    assert seen == {"first": True, "second": True, "enabled": False, "begin_captures": 0}


def test_seam_cudagraph_on_captures_every_scope_even_when_flipped_off_later() -> None:
    seen = child({"SEAM_CUDAGRAPH": "1", "FLIP_TO": "0"})
    assert seen == {"first": False, "second": False, "enabled": True, "begin_captures": 2}


DRIVER_CHILD = """
    import importlib.util, json, os, sys
    spec = importlib.util.spec_from_file_location("switches", os.path.join(sys.argv[1], "seam", "switches.py"))
    switches = importlib.util.module_from_spec(spec); spec.loader.exec_module(switches)
    first = {d: switches.driver_graph_enabled(d) for d in ("dense", "moe", "aux")}
    os.environ["SEAM_DENSE_GRAPH"] = "1"; os.environ["SEAM_MOE_GRAPH"] = "0"
    second = {d: switches.driver_graph_enabled(d) for d in ("dense", "moe", "aux")}
    print(json.dumps({"first": first, "second": second, "process": switches.cudagraph_enabled()}))
"""


def test_a_drivers_rollback_switch_is_its_upper_case_name_turns_off_only_that_driver_and_is_read_once() -> None:
    seen = switch_child({"SEAM_DENSE_GRAPH": "off", "SEAM_AUX_GRAPH": "1"}, DRIVER_CHILD)
    assert seen["first"] == {"dense": False, "moe": True, "aux": True}
    assert seen["second"] == seen["first"]
    assert seen["process"] is True  # a driver's lever leaves the process-wide switch alone
