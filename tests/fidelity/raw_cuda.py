"""The raw-CUDA witness: short programs on ``torch.cuda.CUDAGraph`` alone (no seam), one child each.

Each program is a body captured on a side stream ``s`` of a fresh process, plus optional setup and
after-capture steps. The child prints one JSON signature: the phase of the FIRST error (``capture``:
the body raised; ``capture_end``; ``after``: replay or read-back) and its text, or ``ok`` with the
values the program reported, plus every warning CUDA printed. Run on a GPU machine:
``python -m tests.fidelity.raw_cuda --out raw.json [NAME ...]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

#: name -> (setup, body, after). ``x`` (ones(4), device) and ``host`` (ones(4), pageable) exist;
#: ``other`` is a second, non-capturing stream; ``g`` the graph; ``vals`` a dict ``after`` fills.
PROGRAMS: dict[str, tuple[str, str, str]] = {
    "item": ("", "x.sum().item()", ""),
    "cpu": ("", "x.cpu()", ""),
    "tolist": ("", "x.tolist()", ""),
    "bool_mask": ("", "y = x[x > 0]", ""),
    "tensor_from_data": ("", "y = torch.tensor([1.0, 2.0], device='cuda')", ""),
    "pageable_copy": ("", "x.copy_(host, non_blocking=True)", ""),
    "pinned_copy": ("p = torch.full((4,), 3.0).pin_memory()", "x.copy_(p, non_blocking=True)",
                    "p.fill_(7.0); g.replay(); torch.cuda.synchronize(); vals['x'] = x.tolist()"),
    "wait_pre_capture_event": ("ev = torch.cuda.Event(); ev.record(other)", "s.wait_event(ev); x.add_(1)", ""),
    "first_cublas_on_fresh_stream": ("a = torch.randn(8, 8, device='cuda'); torch.cuda.synchronize()",
                                     "y = a @ a", "g.replay(); torch.cuda.synchronize(); vals['finite'] = bool(torch.isfinite(y).all())"),
    "cublas_warmed_stream": ("a = torch.randn(8, 8, device='cuda')\nwith torch.cuda.stream(s):\n    a @ a\ntorch.cuda.synchronize()",
                             "y = a @ a", "g.replay(); torch.cuda.synchronize(); vals['equal'] = bool(torch.equal(y, a @ a))"),
    "reset_other_graph": ("g2 = torch.cuda.CUDAGraph()\nwith torch.cuda.stream(s):\n    g2.capture_begin(); z = x + 1; g2.capture_end()\ntorch.cuda.synchronize()",
                          "x.add_(1); g2.reset()", ""),
    "del_other_graph": ("g2 = torch.cuda.CUDAGraph()\nwith torch.cuda.stream(s):\n    g2.capture_begin(); z = x + 1; g2.capture_end()\ntorch.cuda.synchronize()",
                        "x.add_(1); del g2", ""),
    "gc_other_graph_in_cycle": ("import gc\ng2 = torch.cuda.CUDAGraph()\nwith torch.cuda.stream(s):\n    g2.capture_begin(); z = x + 1; g2.capture_end()\ntorch.cuda.synchronize()\ncyc = [g2]; cyc.append(cyc); del g2, cyc",
                                "x.add_(1); gc.collect()", ""),
    "free_other_pool_tensor": ("g2 = torch.cuda.CUDAGraph()\nwith torch.cuda.stream(s):\n    g2.capture_begin(); z = x + 1; g2.capture_end()\ntorch.cuda.synchronize()\ng2.reset()",
                               "x.add_(1); del z", ""),
    "synchronize_device": ("", "x.add_(1); torch.cuda.synchronize()", ""),
    "synchronize_other_stream": ("", "x.add_(1); other.synchronize()", ""),
    "event_synchronize_other": ("ev = torch.cuda.Event(); ev.record(other); torch.cuda.synchronize()", "x.add_(1); ev.synchronize()", ""),
    "event_query_other": ("ev = torch.cuda.Event(); ev.record(other); torch.cuda.synchronize()", "x.add_(1); ev.query()", ""),
    "item_on_other_stream": ("w = torch.ones(4, device='cuda'); torch.cuda.synchronize()",
                             "x.add_(1)\nwith torch.cuda.stream(other):\n    w.sum().item()", ""),
    "pageable_copy_on_other_stream": ("w = torch.ones(4, device='cuda'); torch.cuda.synchronize()",
                                      "x.add_(1)\nwith torch.cuda.stream(other):\n    w.copy_(host, non_blocking=True)", ""),
    "d2h_pageable_copy_on_other_stream": ("w = torch.ones(4, device='cuda'); h = torch.zeros(4); torch.cuda.synchronize()",
                                          "x.add_(1)\nwith torch.cuda.stream(other):\n    h.copy_(w)", ""),
    "kernel_on_other_stream": ("w = torch.ones(4, device='cuda'); torch.cuda.synchronize()",
                               "x.add_(1)\nwith torch.cuda.stream(other):\n    w.add_(1)",
                               "torch.cuda.synchronize(); vals['w'] = w.tolist()"),
    "transitive_join": ("A = torch.cuda.Stream(); B = torch.cuda.Stream()",
                        "A.wait_stream(s); B.wait_stream(A)\nwith torch.cuda.stream(B):\n    x.add_(1)\nA.wait_stream(B); s.wait_stream(A)",
                        "g.replay(); torch.cuda.synchronize(); vals['x'] = x.tolist()"),
    "empty_fork_unjoined": ("A = torch.cuda.Stream()", "A.wait_stream(s); x.add_(1)", "g.replay(); torch.cuda.synchronize(); vals['x'] = x.tolist()"),
    "empty_fork_joined": ("A = torch.cuda.Stream()", "A.wait_stream(s); s.wait_stream(A); x.add_(1)", "g.replay(); torch.cuda.synchronize(); vals['x'] = x.tolist()"),
    "unjoined_fork_with_work": ("A = torch.cuda.Stream()", "A.wait_stream(s)\nwith torch.cuda.stream(A):\n    x.add_(1)", ""),
    "host_op_in_body": ("h = torch.zeros(1)", "h.add_(1); x.add_(1)",
                        "g.replay(); g.replay(); torch.cuda.synchronize(); vals['h'] = h.tolist(); vals['x'] = x.tolist()"),
    "host_scalar_baked": ("hs = torch.tensor(2.0)", "y = x * hs",
                          "hs.fill_(5.0); g.replay(); torch.cuda.synchronize(); vals['y'] = y.tolist()"),
    "host_scalar_item_baked": ("hs = torch.tensor(2.0)", "y = x * hs.item()",
                               "hs.fill_(5.0); g.replay(); torch.cuda.synchronize(); vals['y'] = y.tolist()"),
    "pinned_alloc_in_body": ("", "p = torch.full((4,), 3.0).pin_memory(); x.copy_(p, non_blocking=True)",
                             "torch.cuda.synchronize(); vals['p_after_capture'] = p.tolist(); x.zero_(); g.replay(); torch.cuda.synchronize(); vals['x'] = x.tolist()"),
    "data_swap_after_capture": ("keep = torch.full((4,), 2.0, device='cuda'); x.copy_(keep); torch.cuda.synchronize()", "y = x * 10",
                                "old = x.data; x.data = torch.full((4,), 3.0, device='cuda'); g.replay(); torch.cuda.synchronize(); vals['y'] = y.tolist(); vals['old_alive'] = old.tolist()"),
    "zeros_on_other_stream_in_capture": ("", "with torch.cuda.stream(other):\n    acc = torch.zeros(4, device='cuda')\nother.synchronize() if False else None\ns.wait_stream(other)\nacc.add_(x)",
                                         "g.replay(); g.replay(); torch.cuda.synchronize(); vals['acc'] = acc.tolist()"),
    "rng_in_capture": ("torch.manual_seed(0)", "r = torch.rand(4, device='cuda')",
                       "g.replay(); torch.cuda.synchronize(); a = r.clone(); g.replay(); torch.cuda.synchronize(); vals['replays_differ'] = not torch.equal(a, r)"),
    "second_capture_same_graph": ("", "x.add_(1)",
                                  "with torch.cuda.stream(s):\n    g.capture_begin(); x.add_(1); g.capture_end()\nvals['recaptured'] = True"),
    "capture_after_reset": ("", "x.add_(1)",
                            "g.reset()\nwith torch.cuda.stream(s):\n    g.capture_begin(); x.add_(2); g.capture_end()\nx.zero_(); g.replay(); torch.cuda.synchronize(); vals['x'] = x.tolist()"),
    "cuda_malloc_in_capture_other_stream": ("", "x.add_(1)\nwith torch.cuda.stream(other):\n    big = torch.empty(1 << 28, device='cuda')", ""),
    "pinned_alloc_in_capture": ("", "x.add_(1); p = torch.empty(1 << 20, pin_memory=True)", ""),
    "empty_cache_in_capture": ("", "x.add_(1); torch.cuda.empty_cache()", ""),
    "nonzero_in_capture": ("", "y = torch.nonzero(x)", ""),
    "inplace_refresh_seen": ("", "y = x * 10", "x.fill_(5.0); g.replay(); torch.cuda.synchronize(); vals['y'] = y.tolist()"),
    "reallocated_input_old": ("", "y = x * 10",
                              "x2 = torch.full((4,), 5.0, device='cuda'); g.replay(); torch.cuda.synchronize(); vals['y'] = y.tolist()"),
    "factory_out_in_capture": ("r = torch.full((4,), 9.0, device='cuda')", "torch.arange(4, out=r); torch.linspace(0.0, 1.0, 4, out=x)",
                               "torch.cuda.synchronize(); vals['after_capture'] = r.tolist(); g.replay(); torch.cuda.synchronize(); vals['r'] = r.tolist(); vals['x'] = x.tolist()"),
    "batch_norm_legit_in_capture": ("a = torch.tensor([[1.0], [3.0]], device='cuda'); rm = torch.zeros(1, device='cuda'); rv = torch.ones(1, device='cuda')", "y, bm, br = torch.ops.aten._native_batch_norm_legit(a, None, None, rm, rv, True, 0.5, 1e-5)",
                                    "torch.cuda.synchronize(); vals['rm_after_capture'] = rm.tolist(); a.copy_(torch.tensor([[5.0], [9.0]], device='cuda')); g.replay(); torch.cuda.synchronize(); " "vals['bm'] = bm.tolist(); vals['br'] = br.tolist(); vals['rm'] = rm.tolist(); vals['rv'] = rv.tolist()"),
    "batch_norm_in_capture": ("a = torch.tensor([[1.0], [3.0]], device='cuda'); rm = torch.zeros(1, device='cuda'); rv = torch.ones(1, device='cuda')", "y = torch.nn.functional.batch_norm(a, rm, rv, training=True, momentum=0.5, eps=1e-5)",
                              "torch.cuda.synchronize(); vals['rm_after_capture'] = rm.tolist(); a.copy_(torch.tensor([[5.0], [9.0]], device='cuda')); g.replay(); torch.cuda.synchronize(); " "vals['y'] = y.tolist(); vals['rm'] = rm.tolist(); vals['rv'] = rv.tolist()"),
    "rrelu_in_capture": ("a = torch.tensor([-2.0, 2.0], device='cuda')", "y = torch.nn.functional.rrelu(a, 0.5, 0.5, training=True)",
                         "a.copy_(torch.tensor([-4.0, 4.0], device='cuda')); g.replay(); torch.cuda.synchronize(); vals['y'] = y.tolist()"),
    "batch_norm_on_other_stream_in_capture": ("a = torch.tensor([[1.0], [3.0]], device='cuda'); rm = torch.zeros(1, device='cuda'); rv = torch.ones(1, device='cuda')", "x.add_(1)\nwith torch.cuda.stream(other):\n    torch.nn.functional.batch_norm(a, rm, rv, training=True)", ""),
    "batch_norm_with_update_on_other_stream_in_capture": (
        "a = torch.tensor([[1.0], [3.0]], device='cuda'); rm = torch.zeros(1, device='cuda'); rv = torch.ones(1, device='cuda')", "x.add_(1)\nwith torch.cuda.stream(other):\n    torch.ops.aten._batch_norm_with_update(a, None, None, rm, rv, 0.1, 1e-5)", ""),
}

TEMPLATE = """
import json, sys, warnings, torch
warnings.simplefilter("always")
caught = []
warnings.showwarning = lambda m, *a, **k: caught.append(str(m)[:200])
s = torch.cuda.Stream(); other = torch.cuda.Stream()
x = torch.ones(4, device="cuda"); host = torch.ones(4)
g = torch.cuda.CUDAGraph(); vals = {{}}
{setup}
torch.cuda.synchronize()
sig = {{"phase": "ok", "error": None}}
def fail(phase, err):
    if sig["phase"] == "ok":
        sig.update(phase=phase, error=f"{{type(err).__name__}}: {{str(err).splitlines()[0][:240]}}")
with torch.cuda.stream(s):
    g.capture_begin()
    try:
{body}
    except Exception as err:
        fail("capture", err)
    try:
        g.capture_end()
    except Exception as err:
        fail("capture_end", err)
if sig["phase"] == "ok":
    try:
{after}
    except Exception as err:
        fail("after", err)
sig["values"] = vals
sig["warnings"] = caught
print("SIGNATURE " + json.dumps(sig))
"""


def source(name: str) -> str:
    setup, body, after = PROGRAMS[name]
    return TEMPLATE.format(setup=setup, body=textwrap.indent(body or "pass", " " * 8),
                           after=textwrap.indent(after or "pass", " " * 8))


def run(name: str, timeout: float = 90) -> dict:
    """Run one program in a fresh interpreter and return its signature (or how the child died)."""
    try:
        done = subprocess.run([sys.executable, "-c", source(name)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"phase": "hang", "error": f"no answer in {timeout:.0f} s"}
    for line in done.stdout.splitlines():
        if line.startswith("SIGNATURE "):
            sig = json.loads(line[len("SIGNATURE "):])
            sig["stderr_warnings"] = [l[:200] for l in done.stderr.splitlines() if "Warning" in l or "warn" in l.lower()][:4]
            return sig
    return {"phase": "died", "error": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="programs to run (default: all)")
    parser.add_argument("--out", help="write the signatures as JSON here")
    parser.add_argument("--jobs", type=int, default=1, help="children at a time (default 1)")
    args = parser.parse_args(argv)
    names = args.names or sorted(PROGRAMS)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = dict(zip(names, pool.map(run, names)))
    for name, r in results.items():
        print(f"{name:40s} {r['phase']:12s} {r.get('error') or r.get('values')}", flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
