"""CUDA graph trees on more than one path: per case, each call's outcome and the shape of the tree it leaves.

``torch.compile(mode="reduce-overhead")`` records each compiled function into a tree of CUDA graphs, one path per
order of calls; a second child of a node makes the tree checkpoint and restore its memory pool, and a new generation
frees the last one's outputs. Plain torch on a GPU machine (``python3 scripts/graph_trees_probe.py``), or on the
emulated device here (``--emulated``); with ``--asserts`` the tree checks its pool against the caching allocator after
every step (``torch._inductor.config.triton.slow_path_cudagraph_asserts``). One JSON line per case: each call "ok"
(the eager values), "wrong" (other values), or its error's first line, then the tree's nodes by depth. Compare two
runs with ``scripts/compare_probe_lines.py``.
"""
import json, re, sys, traceback
from pathlib import Path
import torch
if "--emulated" in sys.argv:
    from seam.torch_cuda import emulate_cuda
    emulate_cuda().__enter__()
from torch._inductor import cudagraph_trees
if "--asserts" in sys.argv:
    torch._inductor.config.triton.slow_path_cudagraph_asserts = True


def said(e):
    """An error's class and first line, without the tree's stack trace (its file paths differ between machines); an
    error with no message (a bare ``assert`` of torch's) names the function that raised it instead."""
    lines = str(e).splitlines()
    if not lines:
        frames = traceback.extract_tb(e.__traceback__)
        where = f"{Path(frames[-1].filename).name}:{frames[-1].name}" if frames else "?"
        traceback.print_exception(e, file=sys.stderr)  # the whole trace, for whoever reads the run's log
        return f"{type(e).__name__}: (no message, raised in {where})"
    return f"{type(e).__name__}: {re.sub(r' Stack trace:.*', '', lines[0])[:160]}"


def outcome(got, want):
    try:
        return "ok" if torch.allclose(got.cpu(), want.cpu(), atol=1e-4) else "wrong"
    except Exception as e:  # reading an overwritten output
        return said(e)


def tree_depths():
    manager = cudagraph_trees.get_container(0).tree_manager
    if manager is None:  # a tree of another thread's container (autograd's backward runs elsewhere)
        return None
    depths = []
    def walk(node, depth):
        depths.append(depth)
        for kids in node.children.values():
            for kid in kids:
                walk(kid, depth + 1)
    for roots in manager.roots.values():
        for root in roots:
            walk(root, 0)
    return sorted(depths)


def functions():
    torch.manual_seed(0)
    w = torch.randn(8, 8, device="cuda")
    f1 = lambda x: (x @ w).relu()
    f2 = lambda y: y * 2 + 1
    f3 = lambda y: y.sin() - 3
    return (f1, f2, f3), tuple(torch.compile(f, mode="reduce-overhead") for f in (f1, f2, f3))


def two_paths(mark_steps):
    (f1, f2, f3), (c1, c2, c3) = functions()
    out = []
    with torch.inference_mode():
        for i in range(8):
            if mark_steps:
                torch.compiler.cudagraph_mark_step_begin()
            x = torch.randn(4, 8, device="cuda")
            try:
                y = c1(x)
                z = c2(y) if i % 2 == 0 else c3(y)
                out.append(outcome(z, f2(f1(x)) if i % 2 == 0 else f3(f1(x))))
            except Exception as e:
                out.append(said(e))
    return out


def two_shapes():
    (f1, f2, _), (c1, c2, _) = functions()
    out = []
    with torch.inference_mode():
        for n in (4, 6, 4, 6, 4, 6):
            torch.compiler.cudagraph_mark_step_begin()
            x = torch.randn(n, 8, device="cuda")
            out.append(outcome(c2(c1(x)), f2(f1(x))))
    return out


def two_shapes_one_function():
    (f1, _, _), (c1, _, _) = functions()
    out = []
    with torch.inference_mode():
        for n in (4, 6, 4, 6, 4, 6, 5):
            torch.compiler.cudagraph_mark_step_begin()
            x = torch.randn(n, 8, device="cuda")
            try:
                out.append(outcome(c1(x), f1(x)))
            except Exception as e:
                out.append(said(e))
    return out


def held_across_steps():
    (f1, _, _), (c1, _, _) = functions()
    out = []
    with torch.inference_mode():
        for _ in range(4):
            torch.compiler.cudagraph_mark_step_begin()
            x = torch.randn(4, 8, device="cuda")
            y = c1(x)
            want = f1(x)
            torch.compiler.cudagraph_mark_step_begin()
            c1(torch.randn(4, 8, device="cuda"))
            out.append(outcome(y, want))
    return out


def training():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).cuda()
    twin = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).cuda()
    twin.load_state_dict(model.state_dict())
    compiled = torch.compile(model, mode="reduce-overhead")
    out = []
    for _ in range(5):
        torch.compiler.cudagraph_mark_step_begin()
        x = torch.randn(4, 8, device="cuda")
        compiled(x).sum().backward()
        twin(x).sum().backward()
        out.append(all(bool(torch.allclose(a.grad.cpu(), b.grad.cpu(), atol=1e-4))
                       for a, b in zip(model.parameters(), twin.parameters())))
        for p in (*model.parameters(), *twin.parameters()):
            p.grad = None
    return out


cases = {"two_paths_marked": lambda: two_paths(True), "two_paths_unmarked": lambda: two_paths(False),
         "two_shapes": two_shapes, "two_shapes_one_function": two_shapes_one_function, "held_across_steps": held_across_steps, "training": training}
for case, run in cases.items():
    torch._dynamo.reset()
    try:
        row = {"case": case, "ok": True, "calls": run(), "tree": tree_depths()}
    except Exception as e:
        row = {"case": case, "ok": False, "error": said(e)}
    print(json.dumps(row), flush=True)
