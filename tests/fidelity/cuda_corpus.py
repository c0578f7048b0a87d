"""The torch.cuda fidelity corpus: short programs on the public ``torch`` / ``torch.cuda`` API alone.

Every program is one plain source string (``PROGRAMS[name]``) that a fresh interpreter runs; it uses
no seamgate code. It prints exactly one line ``SIGNATURE {json}`` with:

- ``phase``: where the first error reached the program's top level: ``setup``, ``capture``,
  ``capture_end``, ``after`` (the program marks its steps with ``phase(...)``), or ``ok``;
- ``error``: ``"<ExceptionClassName>: <first line of the message>"`` (240 characters at most), or null;
- ``context``: the same for the exception that error was raised while handling (``__cause__`` or
  ``__context__``; for example a body's error under ``torch.cuda.graph``'s failing ``capture_end``), or null;
- ``values``: small JSON facts the program reports, only those that are deterministic on a GPU and
  on a CPU emulator alike (rounded floats of computed, non-random values; booleans such as
  ``replays_differ`` or ``non_negative`` instead of random numbers, timings or sizes);
- ``warnings``: the warnings Python caught (informative only).

The runner adds ``exit_code`` and ``stderr_warnings`` (informative only); a child that dies before
printing its signature gets ``phase: died``, one that hangs past the timeout ``phase: hang``.

The corpus holds all programs of ``tests/fidelity/raw_cuda.py`` (as ``raw_<name>``, built by that
module's own template: its body is captured between ``capture_begin``/``capture_end`` on a side
stream, it has no ``context`` and an error in its setup ends the child, ``died``) and the programs
below, grouped in ``CLASS``.

Run it (``--arm cuda`` needs a GPU; ``--arm emulated`` runs each child with ``SEAM_EMULATE_CUDA=1`` and
the line ``from seam.torch_cuda import activate; activate()`` before the program)::

    python -m tests.fidelity.cuda_corpus --arm cuda|emulated [--jobs N] [--out FILE] [NAME ...]
    python -m tests.fidelity.cuda_corpus --compare CUDA_JSON EMULATED_JSON

Agreement (``compare``). Two signatures of one program AGREE when all of these hold:

1. ``phase`` is equal;
2. ``error`` is null on both, or on both names the same exception class (the text before the first
   ``": "``, exactly) and the same message: the message's first line, after normalising only what
   no program controls, is equal character for character. Normalising: a trailing
   ``" (Triggered internally at ...)"`` is cut; hexadecimal addresses (``0x7f...``) read ``0x?``;
   runs of whitespace read one space; leading and trailing spaces go. Nothing else: torch's and
   CUDA's words must be the same words, so ``pytest.raises(RuntimeError, match=...)`` written
   against either arm means the same on the other (``CUDA error: operation not permitted when
   stream is capturing`` is not matched by ``CUDA error: operation failed due to a previous error
   during capture``, nor by a RuntimeError with the same words where CUDA raises AcceleratorError);
3. ``context`` agrees by the same rule as ``error``;
4. ``values`` are equal as JSON once every float is rounded to ``FLOAT_DIGITS`` (6) significant digits
   (the GPU's kernels and the CPU's differ in their last bits); booleans and ints are exact.

``warnings``, ``stderr_warnings`` and ``exit_code`` never decide agreement; ``compare`` lists a
program missing on one side as a difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import raw_cuda

REPO = Path(__file__).resolve().parents[2]
ACTIVATE = "from seam.torch_cuda import activate; activate()"
TIMEOUT_S = 90.0

TEMPLATE = '''
import json, sys, warnings
import torch
warnings.simplefilter("always")
caught = []
warnings.showwarning = lambda m, *a, **k: caught.append(str(m)[:200])
vals = {}
sig = {"phase": "ok", "error": None, "context": None}
_at = ["setup"]
def phase(name):
    _at[0] = name
def E(err):
    lines = str(err).splitlines()
    return type(err).__name__ + ": " + (lines[0] if lines else "")[:240]
def R(t, nd=4):
    return [round(float(v), nd) for v in t.detach().reshape(-1).tolist()]
def sync():
    torch.cuda.synchronize()
try:
@BODY@
except Exception as err:
    sig["phase"] = _at[0]
    sig["error"] = E(err)
    ctx = err.__cause__ if err.__cause__ is not None else (None if err.__suppress_context__ else err.__context__)
    if ctx is not None:
        sig["context"] = E(ctx)
sig["values"] = vals
sig["warnings"] = caught
print("SIGNATURE " + json.dumps(sig, default=str), flush=True)
'''

# (class, name, body). The body runs inside the template's ``try:`` with ``torch``, ``vals``,
# ``phase``, ``E`` (an exception as text), ``R`` (a tensor as rounded floats) and ``sync`` defined.
_NEW: list[tuple[str, str, str]] = [
    # ---- torch.cuda.graph, the context manager -------------------------------------------------
    ("graph context", "graph_context_manager_captures_a_body_and_replays_it_with_new_inputs", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x * 2 + 1
    phase("capture_end")
phase("after")
x.fill_(3.0); g.replay(); sync()
vals["y"] = R(y)
x.copy_(torch.arange(4.0, device="cuda")); g.replay(); sync()
vals["y_second"] = R(y)
'''),
    ("graph context", "graph_context_manager_captures_on_the_stream_it_is_given", r'''
x = torch.ones(4, device="cuda"); s = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, stream=s):
    vals["current_is_the_given_stream"] = torch.cuda.current_stream() == s
    vals["capturing"] = torch.cuda.is_current_stream_capturing()
    y = x + 1
    phase("capture_end")
phase("after")
vals["current_is_default_after"] = torch.cuda.current_stream() == torch.cuda.default_stream()
g.replay(); sync()
vals["y"] = R(y)
'''),
    ("graph context", "graph_context_manager_without_a_stream_uses_one_shared_side_stream", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    cur = torch.cuda.current_stream()
    vals["side_stream_is_not_the_default"] = cur != torch.cuda.default_stream()
    y = x + 1
    phase("capture_end")
phase("capture")
with torch.cuda.graph(g2):
    vals["second_capture_uses_the_same_side_stream"] = torch.cuda.current_stream() == cur
    z = x + 2
    phase("capture_end")
phase("after")
g.replay(); g2.replay(); sync()
vals["y"] = R(y); vals["z"] = R(z)
'''),
    ("graph context", "a_graph_replays_on_the_default_stream_and_on_a_side_stream", r'''
x = torch.ones(4, device="cuda"); s = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x.add_(1)
    phase("capture_end")
phase("after")
sync(); vals["x_after_capture"] = R(x)
g.replay(); sync(); vals["x_after_default_stream_replay"] = R(x)
with torch.cuda.stream(s):
    g.replay()
s.synchronize(); vals["x_after_side_stream_replay"] = R(x)
'''),
    ("graph context", "a_graph_replayed_five_times_applies_its_in_place_update_five_times", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x.add_(1)
    phase("capture_end")
phase("after")
for _ in range(5):
    g.replay()
sync(); vals["x"] = R(x)
'''),
    ("graph context", "the_static_output_is_overwritten_by_the_next_replay", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x * 10
    phase("capture_end")
phase("after")
x.fill_(1.0); g.replay(); held = y; kept = y.clone()
x.fill_(2.0); g.replay(); sync()
vals["held"] = R(held); vals["kept"] = R(kept)
vals["held_is_the_static_output"] = held.data_ptr() == y.data_ptr()
'''),
    # ---- capture_error_mode --------------------------------------------------------------------
    ("capture error mode", "capture_error_mode_global_refuses_a_synchronize_of_another_stream", r'''
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="global"):
    x.add_(1)
    other.synchronize()
    phase("capture_end")
'''),
    ("capture error mode", "capture_error_mode_thread_local_refuses_a_synchronize_of_another_stream_in_the_same_thread", r'''
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="thread_local"):
    x.add_(1)
    other.synchronize()
    phase("capture_end")
'''),
    ("capture error mode", "capture_error_mode_relaxed_allows_a_synchronize_of_another_stream", r'''
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="relaxed"):
    x.add_(1)
    other.synchronize()
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["x"] = R(x)
'''),
    ("capture error mode", "capture_error_mode_thread_local_allows_a_synchronize_from_another_thread", r'''
import threading
x = torch.ones(4, device="cuda"); w = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
res = {}
def worker():
    try:
        res["sees_capturing"] = torch.cuda.is_current_stream_capturing()
        with torch.cuda.stream(other):
            w.add_(1)
        other.synchronize()
        res["outcome"] = "ok"
    except Exception as e:
        res["outcome"] = E(e)
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="thread_local"):
    y = x * 2
    t = threading.Thread(target=worker); t.start(); t.join()
    vals["thread"] = res
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y"] = R(y); vals["w"] = R(w)
'''),
    ("capture error mode", "capture_error_mode_global_refuses_a_synchronize_from_another_thread", r'''
import threading
x = torch.ones(4, device="cuda"); w = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
res = {}
def worker():
    try:
        with torch.cuda.stream(other):
            w.add_(1)
        other.synchronize()
        res["outcome"] = "ok"
    except Exception as e:
        res["outcome"] = E(e)
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="global"):
    y = x * 2
    t = threading.Thread(target=worker); t.start(); t.join()
    vals["thread"] = res
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y"] = R(y)
'''),
    ("capture error mode", "capture_error_mode_relaxed_allows_item_on_another_stream", r'''
x = torch.ones(4, device="cuda"); w = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="relaxed"):
    x.add_(1)
    with torch.cuda.stream(other):
        vals["w_sum"] = w.sum().item()
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["x"] = R(x)
'''),
    ("capture error mode", "capture_error_mode_relaxed_still_refuses_item_on_the_capturing_stream", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="relaxed"):
    v = x.sum().item()
    phase("capture_end")
'''),
    ("capture error mode", "capture_error_mode_relaxed_and_a_device_synchronize", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="relaxed"):
    x.add_(1)
    torch.cuda.synchronize()
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["x"] = R(x)
'''),
    ("capture error mode", "capture_error_mode_relaxed_and_a_large_allocation_on_another_stream", r'''
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="relaxed"):
    x.add_(1)
    with torch.cuda.stream(other):
        big = torch.empty(1 << 28, device="cuda")
    phase("capture_end")
phase("after")
del big
g.replay(); sync(); vals["x"] = R(x)
'''),
    ("capture error mode", "capture_error_mode_global_and_a_large_allocation_on_another_stream", r'''
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, capture_error_mode="global"):
    x.add_(1)
    with torch.cuda.stream(other):
        big = torch.empty(1 << 28, device="cuda")
    phase("capture_end")
phase("after")
del big
g.replay(); sync(); vals["x"] = R(x)
'''),
    ("capture error mode", "an_unknown_capture_error_mode_is_refused_and_leaves_the_side_stream_current", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
try:
    with torch.cuda.graph(g, capture_error_mode="sloppy"):
        y = x + 1
        phase("capture_end")
finally:
    vals["current_is_default_after"] = torch.cuda.current_stream() == torch.cuda.default_stream()
'''),
    ("capture error mode", "a_global_capture_ended_from_another_thread", r'''
import threading
x = torch.ones(4, device="cuda"); s = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.stream(s):
    g.capture_begin(capture_error_mode="global")
    x.add_(1)
res = {}
def ender():
    try:
        with torch.cuda.stream(s):
            g.capture_end()
        res["outcome"] = "ok"
    except Exception as e:
        res["outcome"] = E(e)
phase("capture_end")
t = threading.Thread(target=ender); t.start(); t.join()
vals["ended_in_the_other_thread"] = res["outcome"]
if res["outcome"] != "ok":
    with torch.cuda.stream(s):
        g.capture_end()
phase("after")
g.replay(); sync(); vals["x"] = R(x)
'''),
    ("capture error mode", "a_relaxed_capture_ended_from_another_thread", r'''
import threading
x = torch.ones(4, device="cuda"); s = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.stream(s):
    g.capture_begin(capture_error_mode="relaxed")
    x.add_(1)
res = {}
def ender():
    try:
        with torch.cuda.stream(s):
            g.capture_end()
        res["outcome"] = "ok"
    except Exception as e:
        res["outcome"] = E(e)
phase("capture_end")
t = threading.Thread(target=ender); t.start(); t.join()
vals["ended_in_the_other_thread"] = res["outcome"]
if res["outcome"] != "ok":
    with torch.cuda.stream(s):
        g.capture_end()
phase("after")
g.replay(); sync(); vals["x"] = R(x)
'''),
    # ---- memory pools ---------------------------------------------------------------------------
    ("pools", "two_graphs_sharing_a_pool_both_replay_correctly", r'''
x = torch.ones(4, device="cuda"); sync()
pool = torch.cuda.graph_pool_handle()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g1, pool=pool):
    y1 = x * 2
    phase("capture_end")
phase("capture")
with torch.cuda.graph(g2, pool=pool):
    y2 = x * 3
    phase("capture_end")
phase("after")
x.fill_(2.0); g1.replay(); g2.replay(); sync()
vals["y1"] = R(y1); vals["y2"] = R(y2)
vals["distinct_outputs"] = y1.data_ptr() != y2.data_ptr()
'''),
    ("pools", "a_later_graph_in_a_shared_pool_takes_the_block_of_a_dropped_output", r'''
x = torch.ones(4, device="cuda"); sync()
pool = torch.cuda.graph_pool_handle()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g1, pool=pool):
    y1 = x * 2
    phase("capture_end")
ptr1 = y1.data_ptr(); del y1
phase("capture")
with torch.cuda.graph(g2, pool=pool):
    z = x * 3
    phase("capture_end")
phase("after")
vals["z_takes_the_dropped_block"] = z.data_ptr() == ptr1
g2.replay(); sync(); vals["z_after_g2"] = R(z)
g1.replay(); sync(); vals["z_after_g1"] = R(z)
'''),
    ("pools", "a_later_graph_in_a_shared_pool_takes_an_earlier_graphs_freed_intermediate", r'''
x = torch.ones(4, device="cuda"); sync()
pool = torch.cuda.graph_pool_handle()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g1, pool=pool):
    tmp = x * 2
    y1 = tmp + 1
    tmp_ptr = tmp.data_ptr()
    del tmp
    phase("capture_end")
phase("capture")
with torch.cuda.graph(g2, pool=pool):
    z = x * 7
    phase("capture_end")
phase("after")
vals["z_takes_the_freed_intermediate"] = z.data_ptr() == tmp_ptr
g2.replay(); sync(); vals["z_after_g2"] = R(z)
g1.replay(); sync(); vals["z_after_g1"] = R(z); vals["y1"] = R(y1)
'''),
    ("pools", "graphs_without_a_shared_pool_never_share_blocks", r'''
x = torch.ones(4, device="cuda"); sync()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g1):
    y1 = x * 2
    phase("capture_end")
ptr1 = y1.data_ptr(); del y1
phase("capture")
with torch.cuda.graph(g2):
    z = x * 3
    phase("capture_end")
phase("after")
vals["z_takes_the_dropped_block"] = z.data_ptr() == ptr1
vals["pools_differ"] = g1.pool() != g2.pool()
g2.replay(); g1.replay(); sync(); vals["z"] = R(z)
'''),
    ("pools", "a_freed_intermediate_is_reused_within_one_capture_and_replays_correctly", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    t = x * 2
    y = t + 1
    t_ptr = t.data_ptr()
    del t
    u = x * 5
    vals["u_takes_the_freed_block"] = u.data_ptr() == t_ptr
    phase("capture_end")
phase("after")
x.fill_(2.0); g.replay(); sync()
vals["y"] = R(y); vals["u"] = R(u)
'''),
    ("pools", "the_pool_of_a_captured_graph_shares_memory_with_the_next_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g1):
    y1 = x * 2
    phase("capture_end")
h = g1.pool()
vals["pool_is_a_pair_of_ints"] = isinstance(h, tuple) and len(h) == 2 and all(isinstance(v, int) for v in h)
ptr1 = y1.data_ptr(); del y1
phase("capture")
with torch.cuda.graph(g2, pool=h):
    z = x * 3
    phase("capture_end")
phase("after")
vals["same_pool"] = g2.pool() == g1.pool()
vals["z_takes_the_dropped_block"] = z.data_ptr() == ptr1
g2.replay(); g1.replay(); sync(); vals["z"] = R(z)
'''),
    ("pools", "graph_pool_handles_are_distinct_pairs", r'''
h1 = torch.cuda.graph_pool_handle(); h2 = torch.cuda.graph_pool_handle()
vals["type"] = type(h1).__name__
vals["length"] = len(h1)
vals["distinct"] = h1 != h2
'''),
    ("pools", "the_pool_of_a_graph_never_captured", r'''
g = torch.cuda.CUDAGraph()
phase("after")
h = g.pool()
vals["type"] = type(h).__name__
'''),
    # ---- graph lifecycle -------------------------------------------------------------------------
    ("lifecycle", "replay_before_any_capture_is_refused", r'''
g = torch.cuda.CUDAGraph()
phase("after")
g.replay()
'''),
    ("lifecycle", "replay_after_reset_is_refused", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x + 1
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y"] = R(y)
g.reset()
g.replay()
'''),
    ("lifecycle", "reset_twice_then_a_new_capture_into_the_same_graph", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x.add_(1)
    phase("capture_end")
phase("after")
g.reset(); g.reset()
phase("capture")
with torch.cuda.graph(g):
    x.add_(5)
    phase("capture_end")
phase("after")
x.zero_(); g.replay(); sync(); vals["x"] = R(x)
'''),
    ("lifecycle", "capture_end_without_capture_begin", r'''
g = torch.cuda.CUDAGraph()
phase("capture_end")
g.capture_end()
'''),
    ("lifecycle", "capture_begin_on_the_default_stream_is_refused", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
g.capture_begin()
'''),
    ("lifecycle", "capture_must_end_on_the_stream_it_began_on", r'''
x = torch.ones(4, device="cuda"); s1 = torch.cuda.Stream(); s2 = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.stream(s1):
    g.capture_begin()
    x.add_(1)
phase("capture_end")
try:
    with torch.cuda.stream(s2):
        g.capture_end()
finally:
    with torch.cuda.stream(s1):
        try:
            g.capture_end()
        except Exception as e:
            vals["ending_on_the_first_stream"] = E(e)
'''),
    ("lifecycle", "a_second_capture_on_another_stream_while_one_is_open", r'''
x = torch.ones(4, device="cuda"); s1 = torch.cuda.Stream(); s2 = torch.cuda.Stream(); sync()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.stream(s1):
    g1.capture_begin()
    a = x + 1
with torch.cuda.stream(s2):
    g2.capture_begin()
    b = x + 2
    phase("capture_end")
    g2.capture_end()
phase("capture")
with torch.cuda.stream(s1):
    c = a * 2
    phase("capture_end")
    g1.capture_end()
phase("after")
g1.replay(); g2.replay(); sync()
vals["b"] = R(b); vals["c"] = R(c)
'''),
    ("lifecycle", "a_nested_graph_context_inside_an_open_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g1):
    a = x + 1
    with torch.cuda.graph(g2):
        b = x + 2
    phase("capture_end")
'''),
    ("lifecycle", "a_second_capture_begin_on_the_capturing_stream", r'''
x = torch.ones(4, device="cuda"); s = torch.cuda.Stream(); sync()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.stream(s):
    g1.capture_begin()
    x.add_(1)
    try:
        g2.capture_begin()
    finally:
        try:
            g1.capture_end()
        except Exception as e:
            vals["first_capture_end"] = E(e)
'''),
    ("lifecycle", "a_graph_replayed_inside_another_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g1):
    y = x * 2
    phase("capture_end")
phase("capture")
with torch.cuda.graph(g2):
    g1.replay()
    z = y + 1
    phase("capture_end")
phase("after")
x.fill_(3.0); g2.replay(); sync(); vals["z"] = R(z)
'''),
    # ---- make_graphed_callables ------------------------------------------------------------------
    ("make_graphed_callables", "make_graphed_callables_of_a_function_matches_eager_forward_and_backward", r'''
def f(a, b):
    return a * b + a
a = torch.tensor([1.0, 2.0], device="cuda", requires_grad=True)
b = torch.tensor([3.0, 4.0], device="cuda", requires_grad=True)
phase("capture")
gf = torch.cuda.make_graphed_callables(f, (a, b))
phase("after")
a2 = torch.tensor([2.0, 3.0], device="cuda", requires_grad=True)
b2 = torch.tensor([5.0, 1.0], device="cuda", requires_grad=True)
out = gf(a2, b2); out.sum().backward()
vals["out"] = R(out); vals["a_grad"] = R(a2.grad); vals["b_grad"] = R(b2.grad)
ea = a2.detach().clone().requires_grad_(); eb = b2.detach().clone().requires_grad_()
eo = f(ea, eb); eo.sum().backward()
vals["matches_eager"] = bool(torch.equal(out, eo) and torch.equal(a2.grad, ea.grad) and torch.equal(b2.grad, eb.grad))
a3 = torch.tensor([1.0, 1.0], device="cuda", requires_grad=True)
b3 = torch.tensor([7.0, 8.0], device="cuda", requires_grad=True)
vals["out_second"] = R(gf(a3, b3))
'''),
    ("make_graphed_callables", "make_graphed_callables_of_a_module_matches_eager_forward_and_backward", r'''
lin = torch.nn.Linear(2, 2).cuda()
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]])); lin.bias.copy_(torch.tensor([0.5, -0.5]))
ref = torch.nn.Linear(2, 2).cuda(); ref.load_state_dict(lin.state_dict())
sample = torch.zeros(3, 2, device="cuda", requires_grad=True)
phase("capture")
glin = torch.cuda.make_graphed_callables(lin, (sample,))
phase("after")
vals["returns_the_same_module"] = glin is lin
inp = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], device="cuda", requires_grad=True)
out = glin(inp); out.sum().backward()
vals["out"] = R(out); vals["inp_grad"] = R(inp.grad)
vals["weight_grad"] = R(lin.weight.grad); vals["bias_grad"] = R(lin.bias.grad)
inp_e = inp.detach().clone().requires_grad_()
oe = ref(inp_e); oe.sum().backward()
vals["matches_eager"] = bool(torch.allclose(out, oe) and torch.allclose(inp.grad, inp_e.grad) and torch.allclose(lin.weight.grad, ref.weight.grad))
'''),
    ("make_graphed_callables", "make_graphed_callables_outputs_share_one_static_buffer", r'''
def f(a):
    return a * 2
a = torch.ones(2, device="cuda")
phase("capture")
gf = torch.cuda.make_graphed_callables(f, (a,))
phase("after")
o1 = gf(torch.tensor([1.0, 2.0], device="cuda")); sync(); vals["o1"] = R(o1)
o2 = gf(torch.tensor([5.0, 6.0], device="cuda")); sync()
vals["o1_now"] = R(o1); vals["o2"] = R(o2)
vals["same_storage"] = o1.data_ptr() == o2.data_ptr()
'''),
    ("make_graphed_callables", "make_graphed_callables_refuses_an_unused_input", r'''
def f(a, b):
    return a * 2
a = torch.ones(2, device="cuda", requires_grad=True); b = torch.ones(2, device="cuda", requires_grad=True)
phase("capture")
gf = torch.cuda.make_graphed_callables(f, (a, b))
'''),
    ("make_graphed_callables", "make_graphed_callables_allows_an_unused_input_when_asked", r'''
def f(a, b):
    return a * 2
a = torch.ones(2, device="cuda", requires_grad=True); b = torch.ones(2, device="cuda", requires_grad=True)
phase("capture")
gf = torch.cuda.make_graphed_callables(f, (a, b), allow_unused_input=True)
phase("after")
a2 = torch.tensor([1.0, 3.0], device="cuda", requires_grad=True); b2 = torch.ones(2, device="cuda", requires_grad=True)
out = gf(a2, b2); out.sum().backward()
vals["out"] = R(out); vals["a_grad"] = R(a2.grad); vals["b_grad_is_none"] = b2.grad is None
'''),
    ("make_graphed_callables", "make_graphed_callables_of_a_module_in_train_mode_with_dropout", r'''
m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5)).cuda()
with torch.no_grad():
    m[0].weight.fill_(1.0); m[0].bias.zero_()
m.train()
sample = torch.ones(4, 8, device="cuda", requires_grad=True)
phase("capture")
gm = torch.cuda.make_graphed_callables(m, (sample,))
phase("after")
inp = torch.ones(4, 8, device="cuda", requires_grad=True)
o1 = gm(inp).detach().clone(); o2 = gm(inp).detach().clone()
vals["replays_differ"] = not torch.equal(o1, o2)
vals["only_zero_or_doubled"] = bool((((o1 == 0) | (o1 == 16)).all() & ((o2 == 0) | (o2 == 16)).all()))
out = gm(inp); out.sum().backward()
vals["input_grad_finite"] = bool(torch.isfinite(inp.grad).all())
'''),
    ("make_graphed_callables", "make_graphed_callables_refuses_a_non_tensor_sample_arg", r'''
def f(a, k):
    return a * k
a = torch.ones(2, device="cuda", requires_grad=True)
phase("capture")
gf = torch.cuda.make_graphed_callables(f, (a, 3))
'''),
    ("make_graphed_callables", "make_graphed_callables_refuses_a_module_with_a_hook", r'''
lin = torch.nn.Linear(2, 2).cuda()
lin.register_forward_hook(lambda *args: None)
sample = torch.ones(3, 2, device="cuda", requires_grad=True)
phase("capture")
gl = torch.cuda.make_graphed_callables(lin, (sample,))
'''),
    ("make_graphed_callables", "make_graphed_callables_refuses_autocast_caching", r'''
def f(a):
    return a * 2
a = torch.ones(2, device="cuda", requires_grad=True)
phase("capture")
with torch.autocast("cuda"):
    gf = torch.cuda.make_graphed_callables(f, (a,))
'''),
    ("make_graphed_callables", "make_graphed_callables_of_two_callables_chains_forward_and_backward", r'''
def f1(a):
    return a * 2
def f2(b):
    return b + 1
a = torch.ones(2, device="cuda", requires_grad=True); b = torch.ones(2, device="cuda", requires_grad=True)
phase("capture")
gf1, gf2 = torch.cuda.make_graphed_callables((f1, f2), ((a,), (b,)))
phase("after")
a2 = torch.tensor([1.0, 2.0], device="cuda", requires_grad=True)
o = gf2(gf1(a2)); o.sum().backward()
vals["out"] = R(o); vals["a_grad"] = R(a2.grad)
'''),
    ("make_graphed_callables", "whole_forward_and_backward_captured_after_a_side_stream_warmup", r'''
lin = torch.nn.Linear(2, 2).cuda()
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]])); lin.bias.zero_()
inp = torch.ones(3, 2, device="cuda")
s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        lin.zero_grad(set_to_none=True)
        lin(inp).sum().backward()
torch.cuda.current_stream().wait_stream(s); sync()
lin.zero_grad(set_to_none=True)
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    out = lin(inp)
    out.sum().backward()
    phase("capture_end")
phase("after")
g.replay(); g.replay(); sync()
vals["out"] = R(out); vals["weight_grad"] = R(lin.weight.grad); vals["bias_grad"] = R(lin.bias.grad)
'''),
    # ---- is_current_stream_capturing -------------------------------------------------------------
    ("capturing state", "is_current_stream_capturing_inside_outside_and_on_another_stream", r'''
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
seen = [torch.cuda.is_current_stream_capturing()]
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    seen.append(torch.cuda.is_current_stream_capturing())
    with torch.cuda.stream(other):
        seen.append(torch.cuda.is_current_stream_capturing())
    y = x + 1
    phase("capture_end")
phase("after")
seen.append(torch.cuda.is_current_stream_capturing())
vals["outside_inside_other_after"] = seen
'''),
    # ---- streams --------------------------------------------------------------------------------
    ("streams", "streams_compare_equal_by_the_queue_they_name", r'''
s1 = torch.cuda.Stream(); s2 = torch.cuda.Stream()
cur = torch.cuda.current_stream(); d = torch.cuda.default_stream()
vals["s1_eq_s1"] = s1 == s1
vals["s1_ne_s2"] = s1 != s2
vals["current_eq_default"] = cur == d
vals["default_eq_default"] = torch.cuda.default_stream() == torch.cuda.default_stream()
vals["new_stream_ne_default"] = s1 != d
vals["hash_of_two_default_handles_equal"] = hash(torch.cuda.current_stream()) == hash(torch.cuda.default_stream())
vals["types"] = [type(s1).__name__, type(cur).__name__]
'''),
    ("streams", "the_stream_context_nests_and_restores", r'''
s1 = torch.cuda.Stream(); s2 = torch.cuda.Stream()
seen = []
with torch.cuda.stream(s1):
    seen.append(torch.cuda.current_stream() == s1)
    with torch.cuda.stream(s2):
        seen.append(torch.cuda.current_stream() == s2)
    seen.append(torch.cuda.current_stream() == s1)
    with torch.cuda.stream(None):
        seen.append(torch.cuda.current_stream() == s1)
seen.append(torch.cuda.current_stream() == torch.cuda.default_stream())
vals["seen"] = seen
'''),
    ("streams", "set_stream_changes_the_current_stream", r'''
x = torch.ones(4, device="cuda"); s1 = torch.cuda.Stream(); sync()
torch.cuda.set_stream(s1)
vals["current_is_s1"] = torch.cuda.current_stream() == s1
y = x + 1
torch.cuda.set_stream(torch.cuda.default_stream())
vals["current_is_default_again"] = torch.cuda.current_stream() == torch.cuda.default_stream()
s1.synchronize(); vals["y"] = R(y)
'''),
    ("streams", "stream_query_and_synchronize_outside_a_capture", r'''
s = torch.cuda.Stream()
vals["idle_query"] = s.query()
with torch.cuda.stream(s):
    big = torch.ones(1 << 20, device="cuda")
    y = big * 2
r = s.synchronize()
vals["synchronize_returns_none"] = r is None
vals["query_after_synchronize"] = s.query()
vals["sum"] = y.sum().item()
'''),
    ("streams", "wait_stream_orders_work_between_streams", r'''
s = torch.cuda.Stream(); x = torch.ones(4, device="cuda"); sync()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    y = x * 3
torch.cuda.current_stream().wait_stream(s)
vals["y"] = R(y)
'''),
    ("streams", "stream_attributes", r'''
s = torch.cuda.Stream()
vals["device"] = str(s.device)
vals["handle_is_a_nonzero_int"] = isinstance(s.cuda_stream, int) and s.cuda_stream != 0
vals["default_stream_handle"] = torch.cuda.default_stream().cuda_stream
vals["priority"] = s.priority
vals["high_priority_is_negative"] = torch.cuda.Stream(priority=-1).priority < 0
'''),
    ("streams", "query_of_the_capturing_stream_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x.add_(1)
    torch.cuda.current_stream().query()
    phase("capture_end")
'''),
    ("streams", "synchronize_of_the_capturing_stream_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x.add_(1)
    torch.cuda.current_stream().synchronize()
    phase("capture_end")
'''),
    ("streams", "a_new_stream_and_event_made_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    s2 = torch.cuda.Stream()
    e = torch.cuda.Event()
    y = x + 1
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y"] = R(y)
'''),
    ("streams", "wait_stream_on_a_stream_outside_the_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    torch.cuda.current_stream().wait_stream(torch.cuda.default_stream())
    y = x + 1
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y"] = R(y)
'''),
    ("streams", "an_unjoined_fork_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    other.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(other):
        x.add_(1)
    phase("capture_end")
'''),
    ("streams", "a_fork_joined_with_wait_stream_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    other.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(other):
        x.add_(1)
    torch.cuda.current_stream().wait_stream(other)
    phase("capture_end")
phase("after")
g.replay(); g.replay(); sync(); vals["x"] = R(x)
'''),
    # ---- events ---------------------------------------------------------------------------------
    ("events", "event_record_wait_query_and_synchronize_outside_a_capture", r'''
e = torch.cuda.Event()
vals["query_before_record"] = e.query()
x = torch.ones(1 << 20, device="cuda") * 2
e.record()
e.synchronize()
vals["query_after_synchronize"] = e.query()
s = torch.cuda.Stream()
s.wait_event(e)
vals["wait_returns_none"] = e.wait(s) is None
r = torch.cuda.current_stream().record_event()
r.synchronize()
vals["types"] = [type(e).__name__, type(r).__name__]
'''),
    ("events", "elapsed_time_of_timing_events_is_non_negative", r'''
e1 = torch.cuda.Event(enable_timing=True); e2 = torch.cuda.Event(enable_timing=True)
e1.record()
y = torch.ones(1 << 20, device="cuda").mul_(2)
e2.record(); e2.synchronize()
t = e1.elapsed_time(e2)
vals["is_float"] = isinstance(t, float)
vals["non_negative"] = t >= 0
'''),
    ("events", "elapsed_time_without_enable_timing_is_refused", r'''
e1 = torch.cuda.Event(); e2 = torch.cuda.Event()
e1.record(); e2.record(); sync()
phase("after")
e1.elapsed_time(e2)
'''),
    ("events", "elapsed_time_before_the_end_event_is_recorded_is_refused", r'''
e1 = torch.cuda.Event(enable_timing=True); e2 = torch.cuda.Event(enable_timing=True)
e1.record(); sync()
phase("after")
e1.elapsed_time(e2)
'''),
    ("events", "timing_events_recorded_inside_a_capture_then_elapsed_time_after_replay", r'''
x = torch.ones(4, device="cuda"); sync()
e1 = torch.cuda.Event(enable_timing=True); e2 = torch.cuda.Event(enable_timing=True)
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    e1.record()
    y = x * 2
    e2.record()
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y"] = R(y)
t = e1.elapsed_time(e2)
vals["non_negative"] = t >= 0
'''),
    ("events", "fork_and_join_through_events_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    e = torch.cuda.Event(); e.record()
    other.wait_event(e)
    with torch.cuda.stream(other):
        z = x * 3
    e2 = torch.cuda.Event(); e2.record(other)
    torch.cuda.current_stream().wait_event(e2)
    y = z + 1
    phase("capture_end")
phase("after")
x.fill_(2.0); g.replay(); sync(); vals["y"] = R(y)
'''),
    ("events", "synchronize_of_an_event_recorded_inside_the_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x + 1
    e = torch.cuda.Event(); e.record()
    e.synchronize()
    phase("capture_end")
'''),
    ("events", "query_of_an_event_recorded_inside_the_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x + 1
    e = torch.cuda.Event(); e.record()
    e.query()
    phase("capture_end")
'''),
    # ---- record_stream --------------------------------------------------------------------------
    ("record_stream", "record_stream_then_free_outside_a_capture", r'''
s = torch.cuda.Stream(); x = torch.ones(1 << 20, device="cuda"); sync()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    y = x * 2
x.record_stream(s); del x
torch.cuda.current_stream().wait_stream(s)
vals["sum"] = y.sum().item()
'''),
    ("record_stream", "record_stream_inside_a_capture", r'''
t = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = t * 2
    t.record_stream(torch.cuda.current_stream())
    phase("capture_end")
phase("after")
t.fill_(3.0); g.replay(); sync(); vals["y"] = R(y)
'''),
    # ---- tensors on "cuda" ----------------------------------------------------------------------
    ("tensors", "a_cuda_tensor_reports_its_device", r'''
t = torch.zeros(2, device="cuda")
vals["device"] = str(t.device)
vals["is_cuda"] = t.is_cuda
vals["index"] = t.device.index
vals["type"] = t.device.type
vals["get_device"] = t.get_device()
vals["type_string"] = t.type()
vals["cpu_get_device"] = torch.zeros(1).get_device()
vals["int_device"] = str(torch.ones(1, device=0).device)
'''),
    ("tensors", "torch_device_cuda_with_and_without_an_index", r'''
d = torch.device("cuda", 0)
vals["str"] = str(d)
vals["eq_cuda_0"] = d == torch.device("cuda:0")
vals["bare_index_is_none"] = torch.device("cuda").index is None
vals["bare_eq_cuda_0"] = torch.device("cuda") == torch.device("cuda:0")
t = torch.ones(2, device=d)
vals["tensor_device"] = str(t.device)
vals["tensor_device_eq_bare"] = t.device == torch.device("cuda")
'''),
    ("tensors", "cuda_and_to_moves_carry_values", r'''
h = torch.tensor([1.0, 2.0])
moved = [h.cuda(), h.to("cuda"), h.to("cuda", non_blocking=True), h.to(device="cuda", dtype=torch.float16), h.cuda(0), h.to(torch.device("cuda", 0))]
sync()
vals["devices"] = [str(t.device) for t in moved]
vals["values"] = [R(t) for t in moved]
vals["half_dtype"] = str(moved[3].dtype)
vals["source_untouched"] = str(h.device)
'''),
    ("tensors", "to_the_same_device_returns_the_same_tensor", r'''
x = torch.ones(2, device="cuda")
vals["to_cuda_is_self"] = x.to("cuda") is x
vals["cuda_is_self"] = x.cuda() is x
vals["to_cuda_0_is_self"] = x.to("cuda:0") is x
vals["to_copy_is_not_self"] = x.to("cuda", copy=True) is not x
vals["to_dtype_is_not_self"] = x.to("cuda", torch.float16) is not x
'''),
    ("tensors", "new_and_like_factories_keep_the_device", r'''
x = torch.ones(2, 3, device="cuda")
made = {"new_zeros": x.new_zeros(2), "new_ones": x.new_ones(2), "new_full": x.new_full((2,), 7.0),
        "new_empty": x.new_empty(2), "new_tensor": x.new_tensor([1.0, 2.0]), "empty_like": torch.empty_like(x),
        "zeros_like": torch.zeros_like(x), "ones_like": torch.ones_like(x), "full_like": torch.full_like(x, 3.0),
        "rand_like": torch.rand_like(x)}
vals["devices"] = sorted(set(str(t.device) for t in made.values()))
vals["shapes"] = {k: list(t.shape) for k, t in made.items()}
vals["values"] = {k: R(made[k]) for k in ("new_zeros", "new_ones", "new_full", "new_tensor", "zeros_like", "ones_like", "full_like")}
'''),
    ("tensors", "pinned_memory_is_reported", r'''
h = torch.ones(4); p = h.pin_memory()
vals["pageable_is_pinned"] = h.is_pinned()
vals["pin_memory_is_pinned"] = p.is_pinned()
vals["pinned_device"] = str(p.device)
vals["empty_pinned"] = torch.empty(4, pin_memory=True).is_pinned()
vals["cuda_tensor_is_pinned"] = torch.ones(1, device="cuda").is_pinned()
c = p.cuda(non_blocking=True); sync()
vals["copied"] = R(c)
'''),
    ("tensors", "cpu_tolist_item_and_python_numbers_outside_a_capture", r'''
x = torch.arange(4.0, device="cuda")
c = x.cpu()
vals["cpu_device"] = str(c.device); vals["cpu"] = R(c)
vals["tolist"] = x.tolist()
vals["item"] = x.sum().item()
vals["float"] = float(x[1]); vals["int"] = int(x[2]); vals["bool"] = bool(x[1])
'''),
    ("tensors", "numpy_of_a_cuda_tensor_is_refused", r'''
x = torch.ones(2, device="cuda")
x.numpy()
'''),
    ("tensors", "a_tensor_on_a_device_index_that_does_not_exist", r'''
vals["device_count"] = torch.cuda.device_count()
t = torch.zeros(1, device="cuda:%d" % torch.cuda.device_count())
'''),
    ("tensors", "to_cpu_non_blocking_outside_a_capture", r'''
x = torch.arange(4.0, device="cuda")
c = x.to("cpu", non_blocking=True); sync()
vals["is_pinned"] = c.is_pinned(); vals["values"] = R(c)
'''),
    ("tensors", "repr_of_a_cuda_tensor", r'''
x = torch.tensor([1.0, 2.0], device="cuda")
vals["repr"] = repr(x)
vals["repr_long"] = repr(torch.arange(3, device="cuda"))
vals["repr_bool"] = repr(torch.ones(2, device="cuda") > 0)
print(x)
'''),
    # ---- mixing devices -------------------------------------------------------------------------
    ("mixing devices", "cuda_plus_cpu_non_scalar_is_refused", r'''
a = torch.ones(2, device="cuda"); b = torch.ones(2)
c = a + b
'''),
    ("mixing devices", "cuda_plus_a_zero_dim_cpu_tensor_runs_on_cuda", r'''
a = torch.ones(2, device="cuda"); b = torch.tensor(2.0)
c = a + b
vals["device"] = str(c.device); vals["c"] = R(c)
'''),
    ("mixing devices", "cpu_plus_a_zero_dim_cuda_tensor", r'''
a = torch.ones(2); b = torch.tensor(2.0, device="cuda")
c = a + b
vals["device"] = str(c.device); vals["c"] = R(c)
'''),
    ("mixing devices", "matmul_of_cuda_and_cpu_is_refused", r'''
a = torch.ones(2, 2, device="cuda"); b = torch.ones(2, 2)
c = a @ b
'''),
    ("mixing devices", "cat_of_cuda_and_cpu_is_refused", r'''
a = torch.ones(2, device="cuda"); b = torch.ones(2)
c = torch.cat([a, b])
'''),
    ("mixing devices", "indexing_a_cuda_tensor_with_a_cpu_index_outside_a_capture", r'''
x = torch.arange(4.0, device="cuda")
y = x[torch.tensor([0, 2])]
vals["device"] = str(y.device); vals["y"] = R(y)
'''),
    ("mixing devices", "indexing_a_cuda_tensor_with_a_cpu_index_inside_a_capture", r'''
x = torch.arange(4.0, device="cuda"); idx = torch.tensor([0, 2]); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x[idx]
    phase("capture_end")
'''),
    # ---- host syncs inside a capture ------------------------------------------------------------
    ("host sync in capture", "torch_cuda_synchronize_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x.add_(1)
    torch.cuda.synchronize()
    phase("capture_end")
'''),
    ("host sync in capture", "item_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    v = x.sum().item()
    phase("capture_end")
'''),
    ("host sync in capture", "bool_of_a_one_element_tensor_between_capture_begin_and_end", r'''
t = torch.ones(1, device="cuda"); s = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.stream(s):
    g.capture_begin()
    try:
        flag = bool(t)
        vals["body"] = "ok"
    except Exception as e:
        vals["body"] = E(e)
    phase("capture_end")
    g.capture_end()
'''),
    ("host sync in capture", "if_on_a_tensor_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); t = torch.ones(1, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    if t:
        y = x + 1
    phase("capture_end")
'''),
    ("host sync in capture", "tensor_or_tensor_inside_the_graph_context_as_in_vllm_pr_46735", r'''
class Layer:
    def __init__(self):
        self.a1_scale = torch.ones(1, device="cuda")
        self.a1_gscale = torch.full((1,), 2.0, device="cuda")
    def forward(self, x):
        scale = self.a1_scale or self.a1_gscale
        return x * scale
layer = Layer(); x = torch.ones(4, device="cuda"); sync()
vals["eager"] = R(layer.forward(x))
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = layer.forward(x)
    phase("capture_end")
'''),
    ("host sync in capture", "int_of_a_tensor_inside_the_graph_context", r'''
t = torch.full((1,), 3.0, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    n = int(t)
    phase("capture_end")
'''),
    ("host sync in capture", "print_of_a_cuda_tensor_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    print(x)
    phase("capture_end")
'''),
    ("host sync in capture", "torch_equal_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); y = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    same = torch.equal(x, y)
    phase("capture_end")
'''),
    ("host sync in capture", "tolist_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    v = x.tolist()
    phase("capture_end")
'''),
    ("host sync in capture", "an_item_the_body_swallows_still_fails_the_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x + 1
    try:
        x.sum().item()
    except Exception as e:
        vals["swallowed"] = E(e)
    phase("capture_end")
'''),
    ("host sync in capture", "work_after_a_swallowed_synchronize_in_the_body", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    try:
        torch.cuda.synchronize()
    except Exception as e:
        vals["swallowed"] = E(e)
    try:
        y = x + 1
        vals["work_after"] = "ok"
    except Exception as e:
        vals["work_after"] = E(e)
    phase("capture_end")
'''),
    ("host sync in capture", "a_capture_after_an_invalidated_one_succeeds", r'''
x = torch.ones(4, device="cuda"); sync()
g1 = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
try:
    with torch.cuda.graph(g1):
        y = x + 1
        x.sum().item()
except Exception as e:
    vals["first"] = E(e)
vals["current_is_default_after_the_failure"] = torch.cuda.current_stream() == torch.cuda.default_stream()
phase("capture")
with torch.cuda.graph(g2):
    z = x + 2
    phase("capture_end")
phase("after")
g2.replay(); sync(); vals["z"] = R(z)
'''),
    # ---- ops that read the device from the host --------------------------------------------------
    ("syncing ops in capture", "unique_inside_the_graph_context", r'''
x = torch.tensor([1.0, 2.0, 2.0, 3.0], device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    u = torch.unique(x)
    phase("capture_end")
'''),
    ("syncing ops in capture", "bincount_inside_the_graph_context", r'''
idx = torch.tensor([0, 1, 1, 3], device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    c = torch.bincount(idx)
    phase("capture_end")
'''),
    ("syncing ops in capture", "repeat_interleave_with_tensor_repeats_inside_the_graph_context", r'''
x = torch.ones(3, device="cuda"); reps = torch.tensor([1, 2, 3], device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = torch.repeat_interleave(x, reps)
    phase("capture_end")
'''),
    ("syncing ops in capture", "where_with_one_argument_inside_the_graph_context", r'''
x = torch.tensor([1.0, 0.0, 3.0], device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    idx = torch.where(x > 0)
    phase("capture_end")
'''),
    ("syncing ops in capture", "bool_mask_assignment_of_a_scalar_inside_the_graph_context", r'''
x = torch.tensor([1.0, -1.0, 3.0], device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x[x < 0] = 0.0
    phase("capture_end")
phase("after")
x.copy_(torch.tensor([-2.0, 5.0, -7.0], device="cuda")); g.replay(); sync(); vals["x"] = R(x)
'''),
    ("syncing ops in capture", "masked_fill_inside_a_capture_replays_with_new_inputs", r'''
x = torch.tensor([1.0, 2.0, 3.0], device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x.masked_fill(x > 1.5, 0.0)
    phase("capture_end")
phase("after")
x.copy_(torch.tensor([2.0, 1.0, 0.5], device="cuda")); g.replay(); sync(); vals["y"] = R(y)
'''),
    # ---- RNG ------------------------------------------------------------------------------------
    ("rng", "rand_inside_the_graph_context_differs_between_replays", r'''
torch.cuda.manual_seed(0)
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    r = torch.rand(16, device="cuda")
    phase("capture_end")
phase("after")
g.replay(); sync(); a = r.clone(); g.replay(); sync()
vals["replays_differ"] = not torch.equal(a, r)
vals["in_unit_interval"] = bool(((a >= 0) & (a < 1)).all())
'''),
    ("rng", "dropout_inside_a_capture_differs_between_replays", r'''
torch.cuda.manual_seed(0)
x = torch.ones(64, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = torch.nn.functional.dropout(x, 0.5, training=True)
    phase("capture_end")
phase("after")
g.replay(); sync(); a = y.clone(); g.replay(); sync()
vals["replays_differ"] = not torch.equal(a, y)
vals["only_zero_or_two"] = bool(((a == 0) | (a == 2)).all() & ((y == 0) | (y == 2)).all())
'''),
    ("rng", "reseeding_before_each_replay_repeats_the_random_numbers", r'''
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    r = torch.rand(8, device="cuda")
    phase("capture_end")
phase("after")
torch.cuda.manual_seed(123); g.replay(); sync(); a = r.clone()
torch.cuda.manual_seed(123); g.replay(); sync(); b = r.clone()
g.replay(); sync(); c = r.clone()
vals["reseeded_replays_equal"] = torch.equal(a, b)
vals["next_replay_differs"] = not torch.equal(b, c)
torch.cuda.manual_seed(123); e = torch.rand(8, device="cuda")
vals["replay_equals_eager_after_the_same_seed"] = torch.equal(a, e)
'''),
    ("rng", "cuda_rng_state_round_trip_outside_a_capture", r'''
torch.cuda.manual_seed(0)
st = torch.cuda.get_rng_state()
a = torch.rand(4, device="cuda")
torch.cuda.set_rng_state(st)
b = torch.rand(4, device="cuda")
vals["equal"] = torch.equal(a, b)
vals["state_dtype"] = str(st.dtype); vals["state_device"] = str(st.device); vals["state_numel"] = st.numel()
vals["all_states"] = len(torch.cuda.get_rng_state_all())
'''),
    ("rng", "manual_seed_inside_a_capture_is_refused", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x + 1
    torch.cuda.manual_seed(0)
    phase("capture_end")
'''),
    ("rng", "get_rng_state_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x + 1
    st = torch.cuda.get_rng_state()
    phase("capture_end")
phase("after")
vals["state_numel"] = st.numel()
'''),
    ("rng", "the_same_seed_gives_the_same_numbers_and_initial_seed_reports_it", r'''
torch.manual_seed(7); a = torch.rand(4, device="cuda")
torch.manual_seed(7); b = torch.rand(4, device="cuda")
vals["same_seed_equal"] = torch.equal(a, b)
torch.cuda.manual_seed(123)
vals["initial_seed"] = torch.cuda.initial_seed()
c = torch.rand(4, device="cuda"); d = torch.rand(4, device="cuda")
vals["consecutive_draws_differ"] = not torch.equal(c, d)
'''),
    ("rng", "randperm_inside_the_graph_context", r'''
torch.cuda.manual_seed(0)
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    p = torch.randperm(8, device="cuda")
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["sorted"] = sorted(p.tolist())
'''),
    # ---- memory functions -----------------------------------------------------------------------
    ("memory", "memory_allocated_grows_after_a_one_mebibyte_tensor", r'''
before = torch.cuda.memory_allocated()
t = torch.empty(1 << 18, device="cuda")
during = torch.cuda.memory_allocated()
del t
after = torch.cuda.memory_allocated()
vals["non_negative"] = before >= 0
vals["grew_by_at_least_1_mib"] = during - before >= (1 << 20)
vals["back_after_del"] = after == before
'''),
    ("memory", "peak_and_reserved_bound_allocated", r'''
t = torch.empty(1 << 20, device="cuda")
a = torch.cuda.memory_allocated()
vals["max_ge_allocated"] = torch.cuda.max_memory_allocated() >= a
vals["reserved_ge_allocated"] = torch.cuda.memory_reserved() >= a
vals["max_reserved_ge_reserved"] = torch.cuda.max_memory_reserved() >= torch.cuda.memory_reserved()
del t
torch.cuda.reset_peak_memory_stats()
vals["peak_reset_to_current"] = torch.cuda.max_memory_allocated() == torch.cuda.memory_allocated()
stats = torch.cuda.memory_stats()
vals["stats_has_allocated_bytes"] = "allocated_bytes.all.current" in stats
vals["summary_is_str"] = isinstance(torch.cuda.memory_summary(), str)
'''),
    ("memory", "empty_cache_releases_a_freed_block", r'''
before = torch.cuda.memory_reserved()
t = torch.empty(8 << 20, dtype=torch.uint8, device="cuda")
with_t = torch.cuda.memory_reserved()
del t
kept = torch.cuda.memory_reserved()
torch.cuda.empty_cache()
after = torch.cuda.memory_reserved()
vals["reserved_grew"] = with_t >= before + (8 << 20)
vals["cached_after_del"] = kept == with_t
vals["released_by_empty_cache"] = after < kept
vals["back_to_before"] = after == before
'''),
    ("memory", "mem_get_info_reports_free_and_total", r'''
info = torch.cuda.mem_get_info()
free, total = info
vals["pair_of_ints"] = len(info) == 2 and isinstance(free, int) and isinstance(total, int)
vals["free_le_total"] = 0 <= free <= total
vals["total_positive"] = total > 0
vals["total_eq_properties"] = total == torch.cuda.get_device_properties(0).total_memory
'''),
    ("memory", "memory_counters_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    a0 = torch.cuda.memory_allocated()
    z = torch.zeros(1 << 18, device="cuda")
    a1 = torch.cuda.memory_allocated()
    vals["grew_inside"] = a1 - a0 >= (1 << 20)
    vals["reserved_ge_allocated"] = torch.cuda.memory_reserved() >= a1
    vals["max_ge_allocated"] = torch.cuda.max_memory_allocated() >= a1
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["z_sum"] = z.sum().item()
'''),
    ("memory", "mem_get_info_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x + 1
    free, total = torch.cuda.mem_get_info()
    phase("capture_end")
phase("after")
vals["free_le_total"] = free <= total
'''),
    ("memory", "empty_cache_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = x + 1
    torch.cuda.empty_cache()
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y"] = R(y)
'''),
    # ---- the caching allocator's figures (exact, as the H200 gives them) ------------------------
    ("allocator", "each_block_is_rounded_up_to_512_bytes", r'''
KEYS = ("allocated_bytes", "active_bytes", "requested_bytes", "reserved_bytes")
sync()
for n in (1, 128, 129, 1000, 1 << 18, (1 << 18) + 1):
    s0 = torch.cuda.memory_stats()
    t = torch.empty(n, device="cuda")
    s1 = torch.cuda.memory_stats()
    vals[str(n)] = [s1.get(k + ".all.current", 0) - s0.get(k + ".all.current", 0) for k in KEYS]
    vals[str(n) + "_memory_allocated"] = torch.cuda.memory_allocated() - s0.get("allocated_bytes.all.current", 0)
    del t
    torch.cuda.empty_cache()
vals["after_all"] = [torch.cuda.memory_stats().get(k + ".all.current", 0) for k in KEYS]
'''),
    ("allocator", "small_and_large_requests_take_segments_of_their_pools", r'''
sync()
F = ("segment.all.current", "segment.small_pool.current", "segment.large_pool.current",
     "reserved_bytes.small_pool.current", "reserved_bytes.large_pool.current",
     "allocated_bytes.small_pool.current", "allocated_bytes.large_pool.current",
     "allocation.all.current", "active.all.current", "inactive_split.all.current",
     "inactive_split_bytes.all.current", "num_device_alloc", "num_device_free")
def snap(label):
    st = torch.cuda.memory_stats()
    vals[label] = [st.get(k, 0) for k in F]
keep = []
snap("start")
for label, nbytes in (("a_4B", 4), ("b_4B", 4), ("c_1MiB", 1 << 20), ("d_1MiB_plus_512", (1 << 20) + 512),
                      ("e_9MiB", 9 << 20), ("f_12MiB", 12 << 20), ("g_11MiB_plus_4", (11 << 20) + 4)):
    keep.append(torch.empty(nbytes, dtype=torch.uint8, device="cuda"))
    snap(label)
del keep
snap("all_freed")
torch.cuda.empty_cache()
snap("emptied")
vals["reserved"] = torch.cuda.memory_reserved(); vals["max_reserved"] = torch.cuda.max_memory_reserved()
vals["max_allocated"] = torch.cuda.max_memory_allocated()
'''),
    ("allocator", "a_freed_block_is_reused_on_its_own_stream_only", r'''
s = torch.cuda.Stream(); sync()
a = torch.empty(1000, device="cuda"); pa = a.data_ptr(); del a
b = torch.empty(1000, device="cuda"); vals["same_stream_takes_it"] = b.data_ptr() == pa
pb = b.data_ptr(); del b
r0 = torch.cuda.memory_reserved()
with torch.cuda.stream(s):
    c = torch.empty(1000, device="cuda")
vals["other_stream_does_not"] = c.data_ptr() != pb
vals["other_stream_new_segment_bytes"] = torch.cuda.memory_reserved() - r0
d = torch.empty(500, device="cuda"); vals["smaller_request_splits_the_freed_block"] = d.data_ptr() == pb
e = torch.empty(100, device="cuda"); vals["the_rest_follows"] = e.data_ptr() == pb + 2048
st = torch.cuda.memory_stats()
vals["segments"] = st["segment.all.current"]; vals["inactive_split"] = st["inactive_split.all.current"]
vals["inactive_split_bytes"] = st["inactive_split_bytes.all.current"]
'''),
    ("allocator", "freed_neighbours_merge_and_empty_cache_releases_only_wholly_free_segments", r'''
sync()
a = torch.empty(1 << 16, device="cuda"); b = torch.empty(1 << 16, device="cuda"); c = torch.empty(1 << 16, device="cuda")
vals["contiguous"] = [b.data_ptr() - a.data_ptr(), c.data_ptr() - b.data_ptr()]
F = ("segment.all.current", "reserved_bytes.all.current", "allocated_bytes.all.current",
     "inactive_split.all.current", "inactive_split_bytes.all.current", "active.all.current")
def snap(label):
    st = torch.cuda.memory_stats()
    vals[label] = [st.get(k, 0) for k in F]
snap("three")
pa = a.data_ptr(); del a; snap("a_freed")
del b; snap("a_b_freed")
big = torch.empty(1 << 17, device="cuda"); vals["merged_block_taken"] = big.data_ptr() == pa; snap("merged_taken")
del big
torch.cuda.empty_cache(); snap("emptied_with_c_alive")
del c; snap("c_freed")
torch.cuda.empty_cache(); snap("emptied")
'''),
    ("allocator", "a_freed_block_merged_with_a_free_neighbour_keeps_its_own_request_in_the_snapshot", r'''
sync()
def before_c(c):
    # the block just before ``c``'s in its segment: (size, requested size, state)
    for seg in torch.cuda.memory_snapshot():
        blocks = seg["blocks"]
        for i, blk in enumerate(blocks):
            if blk["address"] == c.data_ptr() and i > 0:
                return [blocks[i - 1]["size"], blocks[i - 1]["requested_size"], blocks[i - 1]["state"]]
    return None
a = torch.empty(250, device="cuda"); b = torch.empty(750, device="cuda"); c = torch.empty(100, device="cuda")
del a; del b  # b merges into the free a before it
vals["freed_into_the_previous"] = before_c(c)
a = torch.empty(250, device="cuda"); b = torch.empty(750, device="cuda")  # the merged block again, split in two
del b; del a  # a takes in the free b after it
vals["took_in_the_next"] = before_c(c)
'''),
    ("allocator", "a_generator_states_holders_are_one_pair_however_many_graphs_register", r'''
import gc
K = ("active.all.current", "active_bytes.all.current", "segment.all.current")
def st():
    s = torch.cuda.memory_stats(); return [s.get(k, 0) for k in K]
sync(); base = st()
def delta(): return [y - x for x, y in zip(base, st())]
def task(graph):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        graph.capture_begin(); torch.rand(1, device="cuda"); graph.capture_end()
    torch.cuda.current_stream().wait_stream(s); graph.replay()
gs = [torch.cuda.CUDAGraph() for _ in range(3)]
task(gs[0]); vals["one"] = delta()
task(gs[1]); vals["two"] = delta()
task(gs[2]); vals["three"] = delta()
del gs[0]; gc.collect(); vals["one_deleted"] = delta()
gs[0].reset(); vals["second_reset"] = delta()
del gs; gc.collect(); vals["all_gone"] = delta()
state = torch.cuda.default_generators[0].clone_state()
g = torch.cuda.CUDAGraph(); g.register_generator_state(state); vals["second_state_registered"] = delta()
task(g); vals["captured_with_two_states"] = delta()
del g; gc.collect(); vals["two_state_graph_gone"] = delta()
'''),
    ("allocator", "two_successive_graphs_hold_no_memory_of_their_own", r'''
def segs(names):
    return sorted([list(x["segment_pool_id"]), names.get(x["stream"], "other"), x["total_size"],
                   [[b["size"], b["state"]] for b in x["blocks"]]] for x in torch.cuda.memory_snapshot())
s = torch.cuda.Stream(); sync()
names = {0: "default", s.cuda_stream: "s"}
torch.cuda.empty_cache()
def f(t, val):
    x = t.clone() + val; y = t.clone() + val; return x + y
def R(label):
    st = torch.cuda.memory_stats()
    vals[label] = [st.get("reserved_bytes.all.current", 0), st.get("active.all.current", 0), segs(names)]
for share in ("no", "pool", "handle"):
    g0 = torch.cuda.CUDAGraph(); g1 = torch.cuda.CUDAGraph()
    R(share + "_graphs_made")
    a = torch.ones((1000,), device="cuda")
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        args = (torch.cuda.graph_pool_handle(),) if share == "handle" else ()
        g0.capture_begin(*args); b = a.clone()
        for _ in range(5): b = f(b, 1)
        g0.capture_end(); R(share + "_g0_captured")
        g1.capture_begin(*((g0.pool(),) if share == "pool" else args))
        for _ in range(5): b = f(b, 1)
        g1.capture_end(); R(share + "_g1_captured")
    torch.cuda.current_stream().wait_stream(s)
    c = a.clone()
    for _ in range(2): c = f(c, 3)
    g0.replay()
    for _ in range(2): c = f(c, 3)
    g1.replay()
    for _ in range(2): c = f(c, 3)
    sync(); vals[share + "_sums"] = [b.sum().item(), c.sum().item()]
    R(share + "_end")
'''),
    ("allocator", "peaks_and_their_reset_are_exact", r'''
sync()
a = torch.empty(3 << 20, dtype=torch.uint8, device="cuda")
b = torch.empty(5 << 20, dtype=torch.uint8, device="cuda")
vals["peak_two"] = torch.cuda.max_memory_allocated(); del b
vals["now_one"] = torch.cuda.memory_allocated(); vals["peak_still_two"] = torch.cuda.max_memory_allocated()
torch.cuda.reset_peak_memory_stats()
vals["peak_after_reset"] = torch.cuda.max_memory_allocated(); vals["max_reserved_after_reset"] = torch.cuda.max_memory_reserved()
st = torch.cuda.memory_stats()
vals["allocated_bytes_all"] = [st["allocated_bytes.all." + k] for k in ("current", "peak", "allocated", "freed")]
vals["allocation_all"] = [st["allocation.all." + k] for k in ("current", "peak", "allocated", "freed")]
torch.cuda.reset_accumulated_memory_stats()
st = torch.cuda.memory_stats()
vals["after_accumulated_reset"] = [st["allocated_bytes.all." + k] for k in ("current", "peak", "allocated", "freed")]
vals["num_device_alloc_after_accumulated_reset"] = st["num_device_alloc"]
'''),
    ("allocator", "memory_stats_names_every_figure_torch_keeps", r'''
t = torch.empty(10, device="cuda"); sync()
st = torch.cuda.memory_stats()
vals["keys"] = sorted(st)
vals["ints"] = all(isinstance(v, int) for v in st.values())
vals["empty_before_any_allocation_in_a_new_process_is_not_checked"] = True
'''),
    ("allocator", "memory_snapshot_lists_segments_and_their_blocks", r'''
sync()
a = torch.empty(100, device="cuda"); b = torch.empty(3 << 20, dtype=torch.uint8, device="cuda")
c = torch.empty(100, device="cuda"); del c
snap = torch.cuda.memory_snapshot()
vals["segment_keys"] = sorted(snap[0]) if snap else []
vals["block_keys"] = sorted(snap[0]["blocks"][0]) if snap and snap[0]["blocks"] else []
vals["segments"] = sorted([s["segment_type"], s["total_size"], s["allocated_size"], s["active_size"], s["requested_size"],
                           [[blk["size"], blk["state"], blk["requested_size"]] for blk in s["blocks"]]] for s in snap)
vals["addresses_are_the_tensors"] = sorted(blk["address"] for s in snap for blk in s["blocks"] if blk["state"] == "active_allocated") == sorted([a.data_ptr(), b.data_ptr()])
vals["stream_is_int"] = all(isinstance(s["stream"], int) for s in snap)
'''),
    ("allocator", "a_capture_allocates_into_the_graphs_private_pool", r'''
F = ("segment.all.current", "reserved_bytes.all.current", "active.all.current", "active_bytes.all.current",
     "allocated_bytes.all.current")
def st():
    s = torch.cuda.memory_stats(); return [s.get(k, 0) for k in F]
def delta(a, b): return [y - x for x, y in zip(a, b)]
s = torch.cuda.Stream(); sync()
for numel in (128, 1 << 18, (1 << 18) + 128, (10 << 18) + 128):
    g = torch.cuda.CUDAGraph()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        a = torch.ones((numel,), device="cuda")
        pre = st()
        phase("capture")
        g.capture_begin()
        b = a.clone()
        for _ in range(5):
            b = b.clone() + 1
        g.capture_end()
        phase("after")
    torch.cuda.current_stream().wait_stream(s)
    import gc; gc.collect()
    post = st()
    vals[f"{numel}_captured"] = delta(pre, post)
    g.replay(); sync(); vals[f"{numel}_sum"] = b.sum().item() == 6 * numel
    torch.cuda.empty_cache(); vals[f"{numel}_after_empty_cache"] = delta(pre, st())
    del g; gc.collect(); torch.cuda.empty_cache()
    vals[f"{numel}_graph_deleted"] = delta(pre, st())
    vals[f"{numel}_b_still_readable"] = b.sum().item() == 6 * numel
    del a, b; gc.collect(); torch.cuda.empty_cache()
    vals[f"{numel}_all_gone"] = delta(pre, st())
'''),
    ("allocator", "two_graphs_sharing_a_pool_reserve_less_than_two_pools", r'''
import gc
x = torch.ones(1 << 18, device="cuda"); sync()
def capture(pool):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, pool=pool):
        t = x * 2
        y = t + 1
        del t
    return g, y
r0 = torch.cuda.memory_reserved()
shared = torch.cuda.graph_pool_handle()
g1, y1 = capture(shared); g2, y2 = capture(shared)
vals["shared_reserved"] = torch.cuda.memory_reserved() - r0
vals["shared_segments"] = torch.cuda.memory_stats()["segment.all.current"]
g3, y3 = capture(None); g4, y4 = capture(None)
vals["separate_reserved"] = torch.cuda.memory_reserved() - r0 - vals["shared_reserved"]
vals["all_segments"] = torch.cuda.memory_stats()["segment.all.current"]
'''),
    ("allocator", "the_generator_offset_moves_by_what_each_kernel_draws", r'''
sync()
g = torch.cuda.default_generators[0]
torch.cuda.manual_seed(0)
steps = []
def step(label, fn):
    o = g.get_offset(); fn(); sync(); steps.append([label, g.get_offset() - o])
step("rand_1", lambda: torch.rand(1, device="cuda"))
step("rand_1000", lambda: torch.rand(1000, device="cuda"))
step("randn_1M", lambda: torch.randn(1 << 20, device="cuda"))
step("randn_4M", lambda: torch.randn(4 << 20, device="cuda"))
step("rand_4M_double", lambda: torch.rand(4 << 20, device="cuda", dtype=torch.float64))
step("rand_1000_half", lambda: torch.rand(1000, device="cuda", dtype=torch.float16))
step("normal_", lambda: torch.empty(1000, device="cuda").normal_())
step("uniform_", lambda: torch.empty(1000, device="cuda").uniform_())
step("bernoulli_p", lambda: torch.empty(1000, device="cuda").bernoulli_(0.5))
step("bernoulli_tensor", lambda: torch.bernoulli(torch.full((1000,), 0.5, device="cuda")))
step("dropout_1000", lambda: torch.nn.functional.dropout(torch.ones(1000, device="cuda"), 0.5))
step("dropout_4M", lambda: torch.nn.functional.dropout(torch.ones(4 << 20, device="cuda"), 0.5))
step("randint_1000", lambda: torch.randint(0, 10, (1000,), device="cuda"))
step("random_", lambda: torch.empty(1000, device="cuda").random_())
step("exponential_", lambda: torch.empty(1000, device="cuda").exponential_())
step("randperm_10", lambda: torch.randperm(10, device="cuda"))
step("multinomial", lambda: torch.multinomial(torch.ones(10, device="cuda"), 3))
step("randn_like", lambda: torch.randn_like(torch.ones(1000, device="cuda")))
vals["steps"] = steps
vals["state_len"] = torch.cuda.get_rng_state().numel()
'''),
    ("allocator", "a_graph_replay_moves_the_generator_by_the_whole_graphs_draws", r'''
x = torch.ones(1000, device="cuda"); sync()
g0 = torch.cuda.default_generators[0]
torch.cuda.manual_seed(3)
o0 = g0.get_offset()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = torch.rand(1000, device="cuda") + torch.randn(1000, device="cuda") + torch.nn.functional.dropout(x, 0.5)
    phase("capture_end")
phase("after")
vals["after_capture"] = g0.get_offset() - o0
g.replay(); sync(); vals["after_replay_1"] = g0.get_offset() - o0
g.replay(); sync(); vals["after_replay_2"] = g0.get_offset() - o0
torch.rand(1, device="cuda"); sync(); vals["after_eager"] = g0.get_offset() - o0
'''),
    ("allocator", "debug_dump_writes_the_captured_graph", r'''
import os, tempfile
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
g.enable_debug_mode()
phase("capture")
with torch.cuda.graph(g):
    y = x * 2
    phase("capture_end")
phase("after")
path = os.path.join(tempfile.mkdtemp(), "graph.dot")
g.debug_dump(path)
vals["written"] = os.path.exists(path)
text = open(path).read() if os.path.exists(path) else ""
vals["starts_with_digraph"] = text.startswith("digraph")
g.replay(); sync(); vals["y"] = R(y)
g2 = torch.cuda.CUDAGraph()
with torch.cuda.graph(g2):
    z = x + 1
path2 = os.path.join(tempfile.mkdtemp(), "graph2.dot")
g2.debug_dump(path2)
vals["written_without_debug_mode"] = os.path.exists(path2)
'''),
    # ---- the memory history (torch.cuda.memory._record_memory_history, _snapshot) ---------------
    ("memory history", "the_history_records_segments_allocations_frees_and_snapshots", r'''
import gc
sync()
torch.cuda.memory._record_memory_history(max_entries=1000)
a = torch.ones(1000, device="cuda")
b = torch.ones(300000, device="cuda")
del a
s = torch.cuda.memory._snapshot()
vals["keys"] = sorted(s)
vals["traces"] = len(s["device_traces"])
vals["trace"] = [[e["action"], e["size"]] for e in s["device_traces"][0]]
vals["entry_keys"] = sorted(s["device_traces"][0][0])
vals["streams"] = sorted({e["stream"] for e in s["device_traces"][0]})
vals["segments_are_memory_snapshot"] = s["segments"] == torch.cuda.memory_snapshot()
vals["allocator_settings"] = s["allocator_settings"]
del b; gc.collect(); torch.cuda.empty_cache()
vals["then"] = [[e["action"], e["size"]] for e in torch.cuda.memory._snapshot()["device_traces"][0]][6:]
torch.cuda.memory._record_memory_history(enabled=None)
vals["after_stop"] = len(torch.cuda.memory._snapshot()["device_traces"][0])
'''),
    ("memory history", "the_history_keeps_the_last_max_entries_and_clear_history_drops_it", r'''
sync()
torch.cuda.memory._record_memory_history(max_entries=3)
for _ in range(4):
    t = torch.ones(10, device="cuda"); del t
vals["last_three"] = [[e["action"], e["size"]] for e in torch.cuda.memory._snapshot()["device_traces"][0]]
torch.cuda.memory._record_memory_history(max_entries=100, clear_history=True)
vals["cleared"] = len(torch.cuda.memory._snapshot()["device_traces"][0])
t = torch.ones(10, device="cuda")
vals["then"] = [[e["action"], e["size"]] for e in torch.cuda.memory._snapshot()["device_traces"][0]]
torch.cuda.memory._record_memory_history(enabled=None)
'''),
    # ---- autocast on the device (CUDA's casting policy) ------------------------------------------
    ("autocast", "autocast_casts_each_op_as_cudas_policy_says", r'''
x = torch.randn(4, 4, device="cuda"); w = torch.randn(4, 4, device="cuda"); host = torch.randn(4, 4)
for dt in (torch.bfloat16, torch.float16):
    with torch.autocast("cuda", dtype=dt):
        low = x @ w
        vals[str(dt)] = {name: str(f().dtype) for name, f in (
            ("linear", lambda: torch.nn.functional.linear(x, w)), ("matmul", lambda: low),
            ("bmm", lambda: torch.bmm(x[None], w[None])), ("addmm", lambda: torch.addmm(x, x, w)),
            ("baddbmm", lambda: torch.baddbmm(x[None], x[None], w[None])),
            ("conv1d", lambda: torch.nn.functional.conv1d(x[None], w[:, :, None])),
            ("sdpa", lambda: torch.nn.functional.scaled_dot_product_attention(x[None, None], x[None, None], x[None, None])),
            ("softmax_low", lambda: torch.softmax(low, -1)), ("log_softmax_low", lambda: torch.log_softmax(low, -1)),
            ("layer_norm_low", lambda: torch.nn.functional.layer_norm(low, (4,))),
            ("group_norm_low", lambda: torch.nn.functional.group_norm(low, 2)),
            ("exp_low", lambda: torch.exp(low)), ("pow_low", lambda: torch.pow(low, 2)), ("sum_low", lambda: torch.sum(low)),
            ("cumsum_low", lambda: torch.cumsum(low, 0)), ("mse_loss_low", lambda: torch.nn.functional.mse_loss(low, low)),
            ("cross_entropy_low", lambda: torch.nn.functional.cross_entropy(low, torch.zeros(4, dtype=torch.long, device="cuda"))),
            ("norm_low", lambda: torch.linalg.vector_norm(low)), ("rsqrt_low", lambda: torch.rsqrt(low.abs() + 1)),
            ("relu_low", lambda: torch.relu(low)), ("gelu_low", lambda: torch.nn.functional.gelu(low)),
            ("add_low_fp32", lambda: low + x), ("cat_low_fp32", lambda: torch.cat([low, x])),
            ("host_matmul", lambda: host @ host), ("mean_low", lambda: low.mean()))}
'''),
    ("autocast", "binary_cross_entropy_is_refused_under_autocast_its_out_and_backward_are_not", r'''
import torch.nn.functional as F
a = torch.tensor([0.2, 0.5, 0.7, 0.9], device="cuda"); b = torch.tensor([0.0, 1.0, 0.5, 1.0], device="cuda")
def outcome(f):
    try:
        r = f()
        return "ran on " + str(r.device.type)
    except RuntimeError as err:
        return [type(err).__name__, str(err)]
with torch.autocast("cuda"):
    vals["functional"] = outcome(lambda: F.binary_cross_entropy(a, b))
    vals["module"] = outcome(lambda: torch.nn.BCELoss()(a, b))
    vals["half"] = outcome(lambda: F.binary_cross_entropy(a.half(), b.half()))
    vals["host"] = outcome(lambda: F.binary_cross_entropy(a.cpu(), b.cpu()))
    vals["with_logits"] = outcome(lambda: F.binary_cross_entropy_with_logits(a, b))
    vals["out_overload"] = outcome(lambda: torch.ops.aten.binary_cross_entropy.out(a, b, out=torch.empty(0, device="cuda")))
    vals["backward"] = outcome(lambda: torch.ops.aten.binary_cross_entropy_backward(torch.ones((), device="cuda"), a, b))
    with torch.autocast("cuda", enabled=False):
        vals["disabled"] = outcome(lambda: F.binary_cross_entropy(a, b))
vals["outside"] = R(F.binary_cross_entropy(a, b))
'''),
    ("autocast", "autocast_in_a_graph_and_its_gradients", r'''
m = torch.nn.Linear(4, 4).cuda(); x = torch.randn(2, 4, device="cuda")
s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s), torch.autocast("cuda", dtype=torch.bfloat16):
    m(x)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g), torch.autocast("cuda", dtype=torch.bfloat16):
    y = m(x)
phase("after")
x.copy_(torch.ones(2, 4, device="cuda")); g.replay(); sync()
vals["y_dtype"] = str(y.dtype)
vals["replayed_matches_eager"] = bool(torch.equal(y, m(x).to(torch.bfloat16)) or torch.allclose(y.float(), torch.nn.functional.linear(x.bfloat16(), m.weight.bfloat16(), m.bias.bfloat16()).float()))
with torch.autocast("cuda", dtype=torch.float16):
    out = m(x).float().sum()
out.backward()
vals["grad_dtype"] = str(m.weight.grad.dtype)
vals["cpu_autocast_outside"] = torch.is_autocast_enabled("cpu")
'''),
    # ---- conversions inside operations keep the device --------------------------------------------
    ("tensors", "a_conversion_inside_an_operation_keeps_the_device", r'''
x = torch.randn(4, 4, device="cuda"); d = torch.ones(1, dtype=torch.float64, device="cuda"); h = torch.ones(1, dtype=torch.float64)
out = {"softmax_dtype": torch.softmax(x, -1, dtype=torch.float64), "log_softmax_dtype": x.log_softmax(-1, dtype=torch.float64),
       "type_as_device": x.type_as(d), "type_as_host": x.type_as(h), "cpu_type_string": x.type("torch.DoubleTensor"),
       "to_host_dtype": x.to("cpu", torch.float64)}
vals["devices"] = {k: str(v.device) for k, v in out.items()}
vals["next_op"] = str((out["softmax_dtype"] + d).device)
'''),
    # ---- device queries -------------------------------------------------------------------------
    ("device queries", "device_queries_report_one_device", r'''
vals["is_available"] = torch.cuda.is_available()
vals["device_count"] = torch.cuda.device_count()
vals["current_device"] = torch.cuda.current_device()
cap = torch.cuda.get_device_capability()
vals["capability_is_a_pair_of_ints"] = isinstance(cap, tuple) and len(cap) == 2 and all(isinstance(v, int) for v in cap)
props = torch.cuda.get_device_properties(0)
vals["total_memory_positive"] = props.total_memory > 0
vals["name_is_a_nonempty_str"] = isinstance(props.name, str) and len(props.name) > 0
vals["multi_processor_count_positive"] = props.multi_processor_count > 0
vals["name_matches"] = torch.cuda.get_device_name(0) == props.name
t = torch.ones(1, device="cuda")
vals["is_initialized"] = torch.cuda.is_initialized()
'''),
    ("device queries", "the_build_reports_cuda", r'''
vals["backends_cuda_is_built"] = torch.backends.cuda.is_built()
vals["version_cuda_is_set"] = torch.version.cuda is not None
vals["bf16_supported"] = torch.cuda.is_bf16_supported()
'''),
    ("device queries", "set_device_and_the_device_context", r'''
torch.cuda.set_device(0)
seen = [torch.cuda.current_device()]
with torch.cuda.device(0):
    seen.append(torch.cuda.current_device())
    t = torch.ones(1, device="cuda")
seen.append(torch.cuda.current_device())
vals["seen"] = seen; vals["device"] = str(t.device)
'''),
    ("device queries", "set_device_to_a_device_that_does_not_exist", r'''
torch.cuda.set_device(torch.cuda.device_count())
'''),
    ("device queries", "get_device_properties_of_a_device_that_does_not_exist", r'''
torch.cuda.get_device_properties(torch.cuda.device_count())
'''),
    # ---- torch.accelerator ----------------------------------------------------------------------
    ("accelerator", "torch_accelerator_routes_to_cuda", r'''
vals["is_available"] = torch.accelerator.is_available()
vals["current_accelerator"] = str(torch.accelerator.current_accelerator())
vals["device_count"] = torch.accelerator.device_count()
vals["current_device_index"] = torch.accelerator.current_device_index()
st = torch.accelerator.current_stream()
vals["stream_device"] = str(st.device)
torch.accelerator.synchronize()
vals["synchronized"] = True
'''),
    ("accelerator", "torch_accelerator_synchronize_inside_the_graph_context", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x.add_(1)
    torch.accelerator.synchronize()
    phase("capture_end")
'''),
    ("accelerator", "torch_accelerator_memory_figures_are_torch_cudas", r'''
vals["stats_before_init"] = len(torch.accelerator.memory_stats())
vals["allocated_before_init"] = torch.accelerator.memory_allocated()
vals["initialised_by_reading"] = torch.cuda.is_initialized()
x = torch.ones(1000, device="cuda"); sync()
vals["same_stats"] = torch.accelerator.memory_stats() == torch.cuda.memory_stats()
vals["allocated"] = torch.accelerator.memory_allocated()
vals["reserved"] = torch.accelerator.memory_reserved()
vals["peaks"] = [torch.accelerator.max_memory_allocated(), torch.accelerator.max_memory_reserved()]
free, total = torch.accelerator.get_memory_info()  # free is the whole device's: other processes move it
vals["memory_info"] = [0 <= free <= total, total == torch.cuda.mem_get_info()[1]]
del x
torch.accelerator.reset_peak_memory_stats()
vals["peak_after_reset"] = torch.accelerator.max_memory_allocated()
torch.accelerator.reset_accumulated_memory_stats()
vals["freed_after_reset"] = torch.accelerator.memory_stats()["allocation.all.freed"]
torch.accelerator.empty_cache()
vals["reserved_after_empty_cache"] = torch.accelerator.memory_reserved()
'''),
    ("accelerator", "torch_accelerator_refuses_another_device_and_the_capability_query", r'''
x = torch.ones(4, device="cuda"); sync()
calls = {"memory_stats_7": lambda: torch.accelerator.memory_stats(7),
         "memory_stats_cpu": lambda: torch.accelerator.memory_stats("cpu"),
         "synchronize_5": lambda: torch.accelerator.synchronize(5),
         "set_device_index_5": lambda: torch.accelerator.set_device_index(5),
         "set_device_index_minus_1": lambda: torch.accelerator.set_device_index(-1),
         "device_capability": lambda: torch.accelerator.get_device_capability()}
for name, call in calls.items():
    try:
        call()
        vals[name] = "ok"
    except Exception as e:
        vals[name] = E(e)
vals["still_works"] = R(x + 1)
'''),
    ("accelerator", "torch_accelerator_device_index_and_a_stream_as_a_context", r'''
with torch.accelerator.device_index(0):
    vals["index_inside"] = torch.accelerator.current_device_index()
x = torch.ones(4, device="cuda"); sync()
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with s as entered:
    vals["entered_is_the_stream"] = entered is s
    vals["current_is_it"] = torch.cuda.current_stream() == s
    y = x * 3
vals["default_again"] = torch.cuda.current_stream() == torch.cuda.default_stream()
torch.cuda.current_stream().wait_stream(s); sync()
vals["y"] = R(y)
'''),
    # ---- errors raised by the body --------------------------------------------------------------
    ("body errors", "a_value_error_in_the_graph_context_reaches_the_caller_and_the_next_capture_works", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph(); g2 = torch.cuda.CUDAGraph()
phase("capture")
try:
    with torch.cuda.graph(g):
        y = x + 1
        raise ValueError("bad shape in the body")
except Exception as e:
    vals["caught"] = E(e)
    vals["caught_context"] = None if e.__context__ is None else E(e.__context__)
vals["current_is_default_after"] = torch.cuda.current_stream() == torch.cuda.default_stream()
phase("after")
g.replay(); sync(); vals["y_from_the_interrupted_capture"] = R(y)
phase("capture")
with torch.cuda.graph(g2):
    z = x + 2
    phase("capture_end")
phase("after")
g2.replay(); sync(); vals["z"] = R(z)
'''),
    ("body errors", "a_value_error_between_capture_begin_and_end_propagates", r'''
x = torch.ones(4, device="cuda"); s = torch.cuda.Stream(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.stream(s):
    g.capture_begin()
    try:
        x.add_(1)
        raise ValueError("bad shape in the body")
    finally:
        g.capture_end()
'''),
    # ---- allocation inside a capture ------------------------------------------------------------
    ("allocation in capture", "zeros_made_inside_the_graph_context_are_refilled_each_replay", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    acc = torch.zeros(4, device="cuda")
    acc.add_(x)
    phase("capture_end")
phase("after")
g.replay(); g.replay(); sync(); vals["acc"] = R(acc)
'''),
    ("allocation in capture", "full_arange_and_ones_made_inside_a_capture", r'''
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    f = torch.full((3,), 5.0, device="cuda")
    a = torch.arange(4, device="cuda")
    o = torch.ones(2, 2, device="cuda")
    f.add_(1)
    phase("capture_end")
phase("after")
g.replay(); sync()
vals["f"] = R(f); vals["a"] = R(a); vals["o"] = R(o)
'''),
    ("allocation in capture", "a_large_allocation_on_the_capturing_stream", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    big = torch.empty(1 << 28, device="cuda")
    big[:4].fill_(1.0)
    y = big[:4] + x
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y"] = R(y)
'''),
    ("allocation in capture", "a_tensor_from_host_data_inside_the_graph_context", r'''
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    t = torch.tensor([1.0, 2.0], device="cuda")
    phase("capture_end")
'''),
    # ---- in-place, views and copies -------------------------------------------------------------
    ("views and copies", "in_place_on_a_captured_input_doubles_per_replay", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x.mul_(2)
    phase("capture_end")
phase("after")
sync(); vals["x_after_capture"] = R(x)
g.replay(); g.replay(); sync(); vals["x"] = R(x)
'''),
    ("views and copies", "a_slice_of_a_static_input_refreshed_between_replays", r'''
static = torch.zeros(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = static[:2] * 3
    phase("capture_end")
phase("after")
static[:2].copy_(torch.tensor([1.0, 2.0], device="cuda")); g.replay(); sync(); vals["y"] = R(y)
static[1:3].fill_(5.0); g.replay(); sync(); vals["y_second"] = R(y)
'''),
    ("views and copies", "a_view_of_a_static_input_sees_in_place_refreshes", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    v = x.view(2, 2)
    y = v.sum(1)
    t = v.t().contiguous()
    phase("capture_end")
phase("after")
x.copy_(torch.arange(4.0, device="cuda")); g.replay(); sync()
vals["y"] = R(y); vals["t"] = R(t)
'''),
    ("views and copies", "copy_between_device_tensors_inside_a_capture_reads_the_source_at_replay", r'''
a = torch.zeros(4, device="cuda"); b = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    a.copy_(b)
    phase("capture_end")
phase("after")
sync(); vals["a_after_capture"] = R(a)
b.fill_(9.0); g.replay(); sync(); vals["a"] = R(a)
'''),
    ("views and copies", "device_to_pinned_non_blocking_copy_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); p = torch.zeros(4, pin_memory=True); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    p.copy_(x, non_blocking=True)
    phase("capture_end")
phase("after")
sync(); vals["p_after_capture"] = R(p)
x.fill_(5.0); g.replay(); sync(); vals["p"] = R(p)
'''),
    ("views and copies", "device_to_pageable_non_blocking_copy_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); h = torch.zeros(4); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    h.copy_(x, non_blocking=True)
    phase("capture_end")
'''),
    ("views and copies", "to_cpu_non_blocking_inside_a_capture", r'''
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    c = x.to("cpu", non_blocking=True)
    phase("capture_end")
phase("after")
vals["is_pinned"] = c.is_pinned()
x.fill_(4.0); g.replay(); sync(); vals["c"] = R(c)
'''),
    ("views and copies", "pinned_host_to_device_non_blocking_copy_inside_the_graph_context", r'''
x = torch.zeros(4, device="cuda"); p = torch.full((4,), 3.0).pin_memory(); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    x.copy_(p, non_blocking=True)
    y = x * 2
    phase("capture_end")
phase("after")
p.fill_(4.0); g.replay(); sync(); vals["y"] = R(y)
'''),
    # ---- torch.cuda._gpu_trace ------------------------------------------------------------------
    ("gpu trace", "gpu_trace_event_creation_record_and_wait_callbacks", r'''
from torch.cuda import _gpu_trace as gt
torch._C._activate_gpu_trace()
rec = []; wai = []; cre = []
gt.register_callback_for_event_record(lambda ev, st: rec.append([type(ev).__name__, type(st).__name__]))
gt.register_callback_for_event_wait(lambda ev, st: wai.append([type(ev).__name__, type(st).__name__]))
gt.register_callback_for_event_creation(lambda ev: cre.append(type(ev).__name__))
s = torch.cuda.Stream()
e = torch.cuda.Event()
e.record()
s.wait_event(e)
sync()
vals["records"] = len(rec); vals["waits"] = len(wai); vals["creations"] = len(cre)
vals["record_arg_types"] = rec[:1]; vals["wait_arg_types"] = wai[:1]; vals["creation_arg_types"] = cre[:1]
'''),
    ("gpu trace", "gpu_trace_synchronization_callbacks", r'''
from torch.cuda import _gpu_trace as gt
s = torch.cuda.Stream(); e = torch.cuda.Event(); x = torch.ones(4, device="cuda"); sync()
torch._C._activate_gpu_trace()
dev = []; strm = []; evs = []
gt.register_callback_for_device_synchronization(lambda: dev.append(1))
gt.register_callback_for_stream_synchronization(lambda st: strm.append(type(st).__name__))
gt.register_callback_for_event_synchronization(lambda ev: evs.append(type(ev).__name__))
torch.cuda.synchronize()
s.synchronize()
e.record(); e.synchronize()
vals["device_syncs"] = len(dev); vals["stream_syncs"] = strm; vals["event_syncs"] = evs
'''),
    ("gpu trace", "gpu_trace_callbacks_during_a_capture", r'''
from torch.cuda import _gpu_trace as gt
x = torch.ones(4, device="cuda"); other = torch.cuda.Stream(); sync()
torch._C._activate_gpu_trace()
rec = []; wai = []; alloc = []
gt.register_callback_for_event_record(lambda ev, st: rec.append(1))
gt.register_callback_for_event_wait(lambda ev, st: wai.append(1))
gt.register_callback_for_memory_allocation(lambda p: alloc.append(type(p).__name__))
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    e = torch.cuda.Event(); e.record()
    other.wait_event(e)
    e2 = torch.cuda.Event(); e2.record(other)
    torch.cuda.current_stream().wait_event(e2)
    y = x + 1
    phase("capture_end")
phase("after")
vals["records"] = len(rec); vals["waits"] = len(wai)
vals["allocation_seen"] = len(alloc) >= 1; vals["allocation_arg_types"] = sorted(set(alloc))
'''),
    # ---- library handles ------------------------------------------------------------------------
    ("library handles", "first_cublas_use_inside_the_graph_context", r'''
a = torch.ones(8, 8, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = a @ a
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y_first"] = R(y)[:1]
'''),
    ("library handles", "cublas_warmed_on_the_default_stream_then_captured", r'''
a = torch.ones(8, 8, device="cuda")
w = a @ a; sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = a @ a
    phase("capture_end")
phase("after")
a.fill_(2.0); g.replay(); sync(); vals["y_first"] = R(y)[:1]
'''),
    ("library handles", "first_cudnn_convolution_inside_the_graph_context", r'''
w = torch.ones(1, 1, 3, 3, device="cuda"); inp = torch.ones(1, 1, 5, 5, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = torch.nn.functional.conv2d(inp, w)
    phase("capture_end")
phase("after")
g.replay(); sync(); vals["y"] = R(y)
'''),
    ("mempool and runtime", "a_mempool_takes_this_threads_allocations_and_keeps_its_freed_blocks", r'''
import gc
def figures(pool):
    return [[s["segment_type"], s["total_size"], s["allocated_size"], list(s["segment_pool_id"]) == list(pool.id)]
            for s in pool.snapshot()]
pool = torch.cuda.MemPool()
vals["id_is_a_user_pools"] = pool.id[0] == 0 and pool.id[1] > 0
vals["uses"] = [pool.use_count()]
with torch.cuda.use_mem_pool(pool):
    vals["uses"].append(pool.use_count())
    inside = torch.ones(1000, device="cuda")
vals["uses"].append(pool.use_count())
outside = torch.ones(1000, device="cuda")
vals["after_first"] = figures(pool)
del inside; gc.collect()
vals["freed"] = [s["allocated_size"] for s in pool.snapshot()]
with torch.cuda.use_mem_pool(pool):
    again = torch.ones(1000, device="cuda")
vals["reused"] = figures(pool)
vals["next_id_follows"] = torch.cuda.MemPool().id == (0, pool.id[1] + 1)
vals["sum"] = again.sum().item()
'''),
    ("mempool and runtime", "nested_uses_of_two_mempools_route_each_allocation_to_the_innermost", r'''
a, b = torch.cuda.MemPool(), torch.cuda.MemPool()
with torch.cuda.use_mem_pool(a):
    x1 = torch.ones(100, device="cuda")
    with torch.cuda.use_mem_pool(b):
        y1 = torch.ones(100, device="cuda")
        y2 = torch.ones(100, device="cuda")
    x2 = torch.ones(100, device="cuda")
z = torch.ones(100, device="cuda")
def allocated(pool):
    return sum(s["allocated_size"] for s in pool.snapshot())
vals["a_allocated"] = allocated(a)
vals["b_allocated"] = allocated(b)
vals["uses"] = [a.use_count(), b.use_count()]
vals["default_holds_z"] = any(blk["address"] == z.data_ptr() for s in torch.cuda.memory_snapshot() for blk in s["blocks"]
                              if tuple(s["segment_pool_id"]) == (0, 0))
'''),
    ("mempool and runtime", "use_mem_pool_of_a_pool_already_recorded_to_is_refused", r'''
a, b = torch.cuda.MemPool(), torch.cuda.MemPool()
with torch.cuda.use_mem_pool(a):
    with torch.cuda.use_mem_pool(b):
        phase("after")
        with torch.cuda.use_mem_pool(a):
            vals["reached"] = True
'''),
    ("mempool and runtime", "a_capture_into_a_pool_use_mem_pool_records_to_is_refused", r'''
pool = torch.cuda.MemPool()
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
with torch.cuda.use_mem_pool(pool):
    phase("capture")
    with torch.cuda.graph(g, pool=pool.id):
        y = x * 2
'''),
    ("mempool and runtime", "a_graph_captured_into_a_mempool_allocates_in_it", r'''
pool = torch.cuda.MemPool()
x = torch.ones(4, device="cuda"); sync()
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g, pool=pool.id):
    y = x * 2
    phase("capture_end")
phase("after")
g.replay(); sync()
vals["y"] = R(y)
vals["segments"] = [[s["total_size"], list(s["segment_pool_id"]) == list(pool.id)] for s in pool.snapshot()]
vals["uses"] = pool.use_count()
'''),
    ("mempool and runtime", "raw_blocks_are_counted_and_freed_and_an_unknown_address_is_refused", r'''
sync()
base = torch.cuda.memory_allocated()
one = torch.cuda.caching_allocator_alloc(1)
vals["is_int"] = isinstance(one, int)
vals["one"] = torch.cuda.memory_allocated() - base
more = torch.cuda.caching_allocator_alloc(3000, stream=torch.cuda.current_stream())
vals["both"] = torch.cuda.memory_allocated() - base
torch.cuda.caching_allocator_delete(one)
torch.cuda.caching_allocator_delete(more)
vals["after"] = torch.cuda.memory_allocated() - base
phase("after")
torch.cuda.caching_allocator_delete(one)
'''),
    ("mempool and runtime", "the_runtime_answers_errors_handles_and_the_memory_fraction", r'''
torch.cuda.check_error(0)
try:
    torch.cuda.check_error(2)
except torch.cuda.CudaError as err:
    vals["oom"] = E(err)
vals["success"] = int(torch.cuda.cudart().cudaError.success)
handle = torch.cuda.current_blas_handle()
vals["blas_handle_stable"] = isinstance(handle, int) and handle == torch.cuda.current_blas_handle()
vals["fraction"] = [torch.cuda.get_per_process_memory_fraction(0)]
torch.cuda.set_per_process_memory_fraction(0.5)
vals["fraction"].append(torch.cuda.get_per_process_memory_fraction(0))
'''),
    ("mempool and runtime", "stream_priorities_are_clamped_into_the_devices_range", r'''
vals["range"] = list(torch.cuda.Stream.priority_range())
vals["priorities"] = [torch.cuda.Stream(priority=p).priority for p in (0, -1, -2, -3, -5, -10, 3)]
s = torch.cuda.Stream(priority=-1)
with torch.cuda.stream(s):
    y = torch.ones(3, device="cuda") * 2
torch.cuda.current_stream().wait_stream(s); sync()
vals["y"] = R(y)
'''),
    ("pool routing", "begin_allocate_to_pool_routes_every_stream_and_thread", r"""
import threading
def pool_of(t):
    for s in torch.cuda.memory_snapshot():
        for blk in s["blocks"]:
            if blk["address"] == t.data_ptr() and blk["state"] == "active_allocated":
                return list(s["segment_pool_id"]) == list(pool.id) and "pool" or list(s["segment_pool_id"])
pool, side = torch.cuda.MemPool(), torch.cuda.Stream()
torch._C._cuda_beginAllocateToPool(0, pool.id)
here = torch.ones(1000, device="cuda")
with torch.cuda.stream(side):
    there = torch.ones(1000, device="cuda")
made = []
worker = threading.Thread(target=lambda: made.append(torch.ones(1000, device="cuda")))
worker.start(); worker.join()
torch._C._cuda_endAllocateToPool(0, pool.id)
after = torch.ones(1000, device="cuda")
sync()
vals["pools"] = [pool_of(t) for t in (here, there, made[0], after)]
vals["uses"] = [pool.use_count()]
torch._C._cuda_releasePool(0, pool.id)
vals["uses"].append(pool.use_count())
"""),
    ("pool routing", "begin_allocate_current_stream_to_pool_routes_that_stream_only", r"""
def pool_of(t):
    for s in torch.cuda.memory_snapshot():
        for blk in s["blocks"]:
            if blk["address"] == t.data_ptr() and blk["state"] == "active_allocated":
                return list(s["segment_pool_id"]) == list(pool.id) and "pool" or list(s["segment_pool_id"])
pool, side = torch.cuda.MemPool(), torch.cuda.Stream()
with torch.cuda.stream(side):
    torch._C._cuda_beginAllocateCurrentStreamToPool(0, pool.id)
    on_side = torch.ones(1000, device="cuda")
on_default = torch.ones(1000, device="cuda")
torch._C._cuda_endAllocateToPool(0, pool.id)
torch._C._cuda_releasePool(0, pool.id)
sync()
vals["pools"] = [pool_of(on_side), pool_of(on_default)]
"""),
    ("pool routing", "a_capture_hands_its_pool_back_to_its_thread_around_a_symmetric_pool", r"""
def pool_of(t):
    for s in torch.cuda.memory_snapshot():
        for blk in s["blocks"]:
            if blk["address"] == t.data_ptr() and blk["state"] == "active_allocated":
                name = {tuple(symmetric.id): "symmetric", tuple(pool): "graph"}
                return name.get(tuple(s["segment_pool_id"]), list(s["segment_pool_id"]))
symmetric = torch.cuda.MemPool()
x = torch.ones(1000, device="cuda"); sync()
g, pool = torch.cuda.CUDAGraph(), torch.cuda.graph_pool_handle()
phase("capture")
with torch.cuda.graph(g, pool=pool):
    before = x * 2
    torch._C._cuda_endAllocateToPool(0, pool)
    with torch.cuda.use_mem_pool(symmetric):
        shared = torch.empty(1000, device="cuda")
    torch._C._cuda_beginAllocateCurrentThreadToPool(0, pool)
    shared.copy_(before)
    after = shared + 1
    phase("capture_end")
phase("after")
x.fill_(5); g.replay(); sync()
vals["pools"] = [pool_of(t) for t in (before, shared, after)]
vals["sums"] = [shared.sum().item(), after.sum().item()]
later = torch.ones(1000, device="cuda"); sync()
vals["later"] = pool_of(later)
try:
    torch._C._cuda_endAllocateToPool(0, pool)
    vals["end_again"] = "ended"
except RuntimeError as err:
    vals["end_again"] = E(err)
"""),
    ("pool routing", "ending_a_pool_nothing_records_to_is_refused", r"""
pool = torch.cuda.MemPool()
vals["uses"] = pool.use_count()
phase("after")
torch._C._cuda_endAllocateToPool(0, pool.id)
"""),
    ("pool routing", "a_refused_second_recording_keeps_the_use_it_took", r"""
pool = torch.cuda.MemPool()
with torch.cuda.use_mem_pool(pool):
    vals["uses"] = [pool.use_count()]
    try:
        torch._C._cuda_beginAllocateToPool(0, pool.id)
        vals["second"] = "begun"
    except RuntimeError as err:
        vals["second"] = E(err)
    vals["uses"].append(pool.use_count())
    inside = torch.ones(10, device="cuda")
vals["uses"].append(pool.use_count())
torch._C._cuda_releasePool(0, pool.id)
vals["uses"].append(pool.use_count())
vals["inside_in_pool"] = sum(s["allocated_size"] for s in pool.snapshot()) > 0
"""),
    ("pool routing", "a_refused_capture_end_keeps_its_pool_recorded_to_until_ended_by_hand", r"""
def cached():  # what a freed 96 MiB segment leaves reserved after empty_cache()
    sync(); torch.cuda.empty_cache(); before = torch.cuda.memory_reserved()
    block = torch.empty(96 << 20, dtype=torch.uint8, device="cuda"); del block
    torch.cuda.empty_cache()
    return torch.cuda.memory_reserved() - before
vals["cached_before"] = cached()
pool = torch.cuda.graph_pool_handle()
x = torch.zeros(4, device="cuda"); sync()
g, s, side = torch.cuda.CUDAGraph(), torch.cuda.Stream(), torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    g.capture_begin(pool=pool)
    side.wait_stream(s)
    with torch.cuda.stream(side):
        x.add_(1)
    try:
        g.capture_end()
        vals["end"] = "ended"
    except RuntimeError as err:
        vals["end"] = E(err)
vals["cached_after_refusal"] = cached() >= 96 << 20
again = torch.cuda.CUDAGraph()
with torch.cuda.stream(s):
    try:
        again.capture_begin(pool=pool)
        vals["again"] = "begun"
    except RuntimeError as err:
        vals["again"] = E(err)
torch._C._cuda_endAllocateToPool(0, pool)
vals["cached_after_end"] = cached()
phase("after")
torch._C._cuda_endAllocateToPool(0, pool)
"""),
    ("higher-order operators", "torch_cond_on_device_tensors_runs_the_branch_its_predicate_picks", r"""
def grow(x):
    return x * 2 + 1
def shrink(x):
    return x - 3
x = torch.arange(4.0, device="cuda")
vals["true"] = R(torch.cond(x.sum() > 0, grow, shrink, (x,)))
vals["false"] = R(torch.cond(x.sum() < 0, grow, shrink, (x,)))
out = torch.cond(torch.tensor(True, device="cuda"), grow, shrink, (x,))
vals["device"] = [str(out.device), out.is_cuda]
"""),
    ("mempool and runtime", "the_pinned_allocators_figures", r'''
vals["before"] = torch.cuda.host_memory_stats()
pinned = torch.empty(3 * 2**20, pin_memory=True)
small = torch.ones(100).pin_memory()
vals["after"] = torch.cuda.host_memory_stats()
vals["resets"] = [torch.cuda.reset_peak_host_memory_stats(), torch.cuda.reset_accumulated_host_memory_stats()]
vals["nested"] = torch.cuda.host_memory_stats_as_nested_dict()
vals["pinned"] = [pinned.is_pinned(), small.is_pinned()]
'''),
    ("allocator", "a_memory_fraction_bounds_what_the_allocator_reserves", r'''
import re
def words(err):  # the sizes differ between the H200 and the emulated device; other processes on a shared GPU
    line = re.sub(r"\d+(\.\d+)? (GiB|MiB|KiB|bytes)", "N", str(err).splitlines()[0])  # (the corpus runs 8 at once)
    return type(err).__name__ + ": " + re.sub(r"Process \d+ has N memory in use\. ", "", line)
total = torch.cuda.get_device_properties(0).total_memory
def dev(n):
    return torch.empty(int(n), dtype=torch.uint8, device="cuda")
torch.cuda.empty_cache()
torch.cuda.set_per_process_memory_fraction(0.01)
try:
    vals["small"] = dev(1000).numel()
    try:
        dev(0.02 * total); vals["over"] = "allocated"
    except torch.OutOfMemoryError as err:
        vals["over"] = words(err)
    vals["under"] = dev(0.005 * total).numel() > 0
    stats = torch.cuda.memory_stats()
    held = [dev(0.004 * total), dev(0.004 * total)]
    try:
        dev(0.004 * total); vals["third"] = "allocated"
    except torch.OutOfMemoryError as err:
        vals["third"] = words(err)
    del held
    vals["cached_held"] = torch.cuda.memory_reserved() >= 0.008 * total
    big = dev(0.009 * total)
    after = torch.cuda.memory_stats()
    vals["released_then"] = [torch.cuda.memory_reserved() <= 0.01 * total,
                             after["num_alloc_retries"] - stats["num_alloc_retries"], after["num_ooms"] - stats["num_ooms"],
                             after["num_sync_all_streams"] > stats["num_sync_all_streams"]]
    del big
    g = torch.cuda.CUDAGraph()
    phase("capture")
    try:
        with torch.cuda.graph(g):
            dev(0.02 * total)
        vals["in_capture"] = "allocated"
    except torch.OutOfMemoryError as err:
        vals["in_capture"] = words(err)
    phase("after")
    vals["capturing_after"] = torch.cuda.is_current_stream_capturing()
    vals["works_on"] = R(torch.ones(2, device="cuda") * 3)
finally:
    torch.cuda.set_per_process_memory_fraction(1.0)
'''),
    # ---- torch.compile: the compilers engines capture through ------------------------------------
    ("torch.compile", "reduce_overhead_records_then_replays_each_steps_values", r'''
def f(x):
    return (x * 2 + 1).sin() * x
cf = torch.compile(f, mode="reduce-overhead")
x = torch.arange(8.0, device="cuda")
phase("capture")
outs = []
for i in range(4):  # a warm-up, the recording, then replays
    torch.compiler.cudagraph_mark_step_begin()
    outs.append(R(cf(x + i)))
phase("after")
vals["compiled"] = outs
vals["same_as_eager"] = outs == [R(f(x + i)) for i in range(4)]
vals["device"] = str(cf(x).device)
'''),
    ("torch.compile", "reduce_overhead_refuses_the_recorded_output_and_a_replays_output_reads_the_next", r'''
def f(x):
    return x * 3 - 1
cf = torch.compile(f, mode="reduce-overhead")
x = torch.ones(4, device="cuda")
step = torch.compiler.cudagraph_mark_step_begin
step(); cf(x)  # the warm-up
step(); recorded = cf(x)  # the recording
vals["recorded"] = R(recorded)
step(); held = cf(x + 1)  # a replay
vals["held"] = R(held)
step(); vals["next"] = R(cf(x + 2).clone())
vals["held_after_the_next_replay"] = R(held)
phase("after")
recorded + 1
'''),
    ("torch.compile", "the_cudagraphs_backend_replays_one_graph_per_input_size", r'''
def f(x):
    return x.cumsum(0) * 2
cf = torch.compile(f, backend="cudagraphs", dynamic=False)
phase("capture")
outs = [R(cf(torch.arange(float(n), device="cuda")).clone()) for n in (3, 5, 3, 5)]
phase("after")
vals["outs"] = outs
vals["same_as_eager"] = outs == [R(f(torch.arange(float(n), device="cuda"))) for n in (3, 5, 3, 5)]
'''),
    ("torch.compile", "a_compiled_function_captured_in_a_cuda_graph_replays_new_inputs", r'''
def f(x, w):
    return torch.relu(x @ w) + 1
cf = torch.compile(f, fullgraph=True)
x = torch.ones(4, 8, device="cuda"); w = torch.full((8, 2), 0.5, device="cuda")
s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        cf(x, w)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = cf(x, w)
    phase("capture_end")
phase("after")
x.fill_(2.0); g.replay(); sync()
vals["y"] = R(y)
w.fill_(-1.0); g.replay(); sync()
vals["y_negative_weights"] = R(y)
'''),
    ("torch.compile", "a_graph_break_on_item_inside_a_capture_is_refused_as_eager_code_is", r'''
def f(x):
    if x.sum().item() > 0:
        return x * 2
    return x - 1
cf = torch.compile(f)
x = torch.ones(4, device="cuda")
vals["eager_compiled"] = R(cf(x))
g = torch.cuda.CUDAGraph()
phase("capture")
with torch.cuda.graph(g):
    y = cf(x)
    phase("capture_end")
'''),
]

#: name -> class of behaviour; the raw witness programs are class ``raw``.
CLASS: dict[str, str] = {f"raw_{name}": "raw" for name in raw_cuda.PROGRAMS}
CLASS.update({name: cls for cls, name, _ in _NEW})


def _build(body: str) -> str:
    return TEMPLATE.replace("@BODY@", textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 4))


#: name -> the complete source a fresh interpreter runs (arm ``cuda``; ``emulated`` prefixes ACTIVATE).
PROGRAMS: dict[str, str] = {f"raw_{name}": raw_cuda.source(name) for name in raw_cuda.PROGRAMS}
PROGRAMS.update({name: _build(body) for _, name, body in _NEW})
if len(CLASS) != len(PROGRAMS) or len(_NEW) != len({name for _, name, _ in _NEW}):
    raise AssertionError("program names must be unique")


def source(name: str, arm: str = "cuda") -> str:
    """The text a child runs for ``name`` on ``arm``."""
    if arm == "emulated":  # on the program's first line, empty (the template's): its lines keep their numbers
        return ACTIVATE + PROGRAMS[name]
    if arm != "cuda":
        raise ValueError(f"unknown arm {arm!r}: cuda or emulated")
    return PROGRAMS[name]


def child_env(arm: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SEAM_EMULATE_CUDA", None)
    if arm == "emulated":
        env["SEAM_EMULATE_CUDA"] = "1"
    return env


def run_source(src: str, arm: str, timeout: float = TIMEOUT_S) -> dict:
    """Run one program text in a fresh interpreter (cwd: the repository root) and return its signature."""
    try:
        done = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=timeout,
                              cwd=REPO, env=child_env(arm))
        stdout, stderr, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        code = None
    sig = None
    for line in stdout.splitlines():
        if line.startswith("SIGNATURE "):
            sig = json.loads(line[len("SIGNATURE "):])
    if sig is None:
        if code is None:
            return {"phase": "hang", "error": f"no answer in {timeout:.0f} s", "context": None, "values": {},
                    "warnings": [], "stderr_tail": stderr.strip().splitlines()[-3:]}
        return {"phase": "died", "error": f"exit {code}", "context": None, "values": {}, "warnings": [],
                "stderr_tail": stderr.strip().splitlines()[-3:]}
    sig.setdefault("context", None)
    sig["exit_code"] = code if code is not None else "hang after its signature"
    sig["stderr_warnings"] = [l[:200] for l in stderr.splitlines() if "warn" in l.lower()][:4]
    return sig


def run(name: str, arm: str, timeout: float = TIMEOUT_S) -> dict:
    return run_source(source(name, arm), arm, timeout)


_PROVENANCE = r'''
import json, platform, torch
p = {"torch": torch.__version__, "torch_cuda": torch.version.cuda, "python": platform.python_version()}
try:
    p["device"] = torch.cuda.get_device_name(0)
    p["capability"] = list(torch.cuda.get_device_capability(0))
except Exception as e:
    p["device"] = None
    p["device_error"] = type(e).__name__ + ": " + str(e).splitlines()[0][:200]
print("PROVENANCE " + json.dumps(p))
'''


def programs_digest() -> str:
    """sha256 of every program's text: names the corpus a report measured even where git cannot (a
    device's copy of the working tree may carry other git metadata than the tree it holds)."""
    return hashlib.sha256(json.dumps(PROGRAMS, sort_keys=True).encode()).hexdigest()


def provenance(arm: str) -> dict:
    """torch, the device and the commit, seen by a child started exactly as the programs are."""
    src = (ACTIVATE + "\n" if arm == "emulated" else "") + _PROVENANCE
    out: dict = {"arm": arm, "programs_sha256": programs_digest()}
    try:
        done = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=TIMEOUT_S,
                              cwd=REPO, env=child_env(arm))
        for line in done.stdout.splitlines():
            if line.startswith("PROVENANCE "):
                out.update(json.loads(line[len("PROVENANCE "):]))
        if "torch" not in out:
            out["probe_error"] = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
    except subprocess.TimeoutExpired:
        out["probe_error"] = "the provenance probe hung"
    commit = os.environ.get("SEAMGATE_COMMIT")
    if not commit:
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    cwd=REPO, timeout=30).stdout.strip() or None
        except (OSError, subprocess.TimeoutExpired):
            commit = None
    out["commit"] = commit
    return out


# ---- agreement -------------------------------------------------------------------------------------

_TRIGGERED = re.compile(r"\s*\(Triggered internally at .*$")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_SPACE = re.compile(r"\s+")


def normalise(text: str | None) -> tuple[str, str] | None:
    """An ``error``/``context`` text as (class, message) after the module docstring's normalising."""
    if text is None:
        return None
    cls, sep, msg = text.partition(": ")
    if not sep:
        cls, msg = text.rstrip(":"), ""
    msg = msg.splitlines()[0] if msg else ""
    msg = _TRIGGERED.sub("", msg)
    msg = _HEX.sub("0x?", msg)
    msg = _SPACE.sub(" ", msg).strip()
    return cls.strip(), msg


def _programs(report: dict) -> dict:
    return report["programs"] if isinstance(report.get("programs"), dict) else report


#: Significant digits two floats must share: the GPU's kernels and the CPU's differ in their last bits
#: (a batch norm's normalised value: -0.9999986886978149 on the H200, -0.9999988079071045 on the CPU).
FLOAT_DIGITS = 6


def _rounded(value: object) -> object:
    """``value`` with every float rounded to ``FLOAT_DIGITS`` significant digits (ints, bools kept)."""
    if isinstance(value, float):
        return float(f"{value:.{FLOAT_DIGITS}g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def compare(cuda: dict, emulated: dict) -> list[dict]:
    """Every disagreement between two runs (full reports or bare ``{name: signature}`` maps).

    Each difference is ``{"program", "field", "cuda", "emulated"}``; ``field`` is ``missing``,
    ``phase``, ``error``, ``context`` or ``values``. An empty list means every program agrees.
    """
    a, b = _programs(cuda), _programs(emulated)
    diffs: list[dict] = []
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            diffs.append({"program": name, "field": "missing", "cuda": name in a, "emulated": name in b})
            continue
        sa, sb = a[name], b[name]
        if sa.get("phase") != sb.get("phase"):
            diffs.append({"program": name, "field": "phase", "cuda": sa.get("phase"), "emulated": sb.get("phase")})
        for field in ("error", "context"):
            if normalise(sa.get(field)) != normalise(sb.get(field)):
                diffs.append({"program": name, "field": field, "cuda": sa.get(field), "emulated": sb.get(field)})
        if json.dumps(_rounded(sa.get("values", {})), sort_keys=True) != \
                json.dumps(_rounded(sb.get("values", {})), sort_keys=True):
            diffs.append({"program": name, "field": "values", "cuda": sa.get("values"), "emulated": sb.get("values")})
    return diffs


# ---- the runner ------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="programs to run (default: all)")
    parser.add_argument("--arm", choices=("cuda", "emulated"))
    parser.add_argument("--compare", nargs=2, metavar=("CUDA_JSON", "EMULATED_JSON"),
                        help="print every disagreement between two reports (exit 1 if any) and run nothing")
    parser.add_argument("--jobs", type=int, default=1, help="children at a time (default 1)")
    parser.add_argument("--out", help="write the report as JSON here")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per child (default 90)")
    args = parser.parse_args(argv)
    if args.compare:
        with open(args.compare[0]) as fa, open(args.compare[1]) as fb:
            diffs = compare(json.load(fa), json.load(fb))
        for d in diffs:
            print(json.dumps(d))
        print(f"{len(diffs)} difference(s)")
        return 1 if diffs else 0
    if args.arm is None:
        parser.error("--arm cuda|emulated is required (or --compare)")
    unknown = [n for n in args.names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown programs: {', '.join(unknown)}")
    names = args.names or sorted(PROGRAMS)
    started = time.time()
    prov = provenance(args.arm)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = dict(zip(names, pool.map(lambda n: run(n, args.arm, args.timeout), names)))
    prov.update(programs=len(results), jobs=args.jobs, wall_s=round(time.time() - started, 1),
                started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)))
    for name, r in results.items():
        print(f"{name:90s} {r['phase']:12s} {r.get('error') or json.dumps(r.get('values'))[:160]}", flush=True)
    phases: dict[str, int] = {}
    for r in results.values():
        phases[r["phase"]] = phases.get(r["phase"], 0) + 1
    print(json.dumps({"provenance": prov, "phases": phases}), flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"provenance": prov, "programs": results}, fh, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
