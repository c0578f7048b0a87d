"""What cuda-python's runtime bindings answer on a real GPU, for the emulator's stand-in to match.

Run on the GPU machine (the device tool), beside cuda-bindings: ``python3 scripts/cuda_bindings_probe.py [QUESTION]``.
Each question runs in its own process (a bad handle may crash the driver) and prints what the bindings returned:
the shapes of a listing asked for 0, 1 or more nodes than there are, a null handle's answers, handles' equality,
hashing and repr, the error names, and which node type each of a few captured operations becomes. The answers of
session 20 are in evidence/h200-device-calls-2026-12-05-session20.txt; seam/torch_cuda/cuda_bindings.py follows them.
"""

import subprocess
import sys

import torch

Q = {}
def q(f): Q[f.__name__] = f; return f

def _graph(body, keep=True):
    g = torch.cuda.CUDAGraph(keep_graph=keep)
    with torch.cuda.graph(g, capture_error_mode="relaxed"):
        out = body()
    return g, out

@q
def listing_shapes():
    import cuda.bindings.runtime as rt
    x, y = torch.zeros(2000, device="cuda"), torch.ones(2000, device="cuda")
    g, _ = _graph(lambda: x + y)
    raw = rt.cudaGraph_t(init_value=g.raw_cuda_graph())
    print("GetNodes(raw)", repr(rt.cudaGraphGetNodes(raw)))
    print("GetNodes(raw, 1)", repr(rt.cudaGraphGetNodes(raw, 1)))
    print("GetNodes(raw, 5)", repr(rt.cudaGraphGetNodes(raw, 5)))
    print("GetRootNodes(raw)", repr(rt.cudaGraphGetRootNodes(raw)))
    print("GetRootNodes(raw, 1)", repr(rt.cudaGraphGetRootNodes(raw, 1)))
    print("GetRootNodes(raw, 3)", repr(rt.cudaGraphGetRootNodes(raw, 3)))
    n = rt.cudaGraphGetNodes(raw, 1)[1][0]
    print("node", repr(n), int(n) != 0, type(n).__name__, n == rt.cudaGraphNode_t(init_value=int(n)),
          hash(n) == hash(rt.cudaGraphNode_t(init_value=int(n))))
    print("type", repr(rt.cudaGraphNodeGetType(n)))
    g.instantiate()
    print("flags", repr(rt.cudaGraphExecGetFlags(rt.cudaGraphExec_t(init_value=g.raw_cuda_graph_exec()))))

@q
def null_graph():
    import cuda.bindings.runtime as rt
    print("GetNodes(NULL)", repr(rt.cudaGraphGetNodes(rt.cudaGraph_t(init_value=0))))
    print("GetRootNodes(NULL)", repr(rt.cudaGraphGetRootNodes(rt.cudaGraph_t(init_value=0))))

@q
def null_node():
    import cuda.bindings.runtime as rt
    print("NodeGetType(NULL)", repr(rt.cudaGraphNodeGetType(rt.cudaGraphNode_t(init_value=0))))

@q
def null_exec():
    import cuda.bindings.runtime as rt
    print("ExecGetFlags(NULL)", repr(rt.cudaGraphExecGetFlags(rt.cudaGraphExec_t(init_value=0))))

@q
def handles_and_errors():
    import cuda.bindings.runtime as rt
    a, b = rt.cudaGraphNode_t(init_value=0x10), rt.cudaGraphNode_t(init_value=0x10)
    print("eq", a == b, "hash", hash(a) == hash(b), "ne", a != rt.cudaGraphNode_t(init_value=0x20),
          "kinds", a != rt.cudaGraph_t(init_value=0x10), "int", int(a), "repr", repr(a))
    inv = rt.cudaError_t.cudaErrorInvalidValue
    print("name", repr(rt.cudaGetErrorName(inv)), "string", repr(rt.cudaGetErrorString(inv)))
    print("count", repr(rt.cudaGetDeviceCount()), "device", repr(rt.cudaGetDevice()))

@q
def node_kinds():
    import cuda.bindings.runtime as rt
    def types(g):
        raw = rt.cudaGraph_t(init_value=g.raw_cuda_graph())
        _, _, c = rt.cudaGraphGetNodes(raw)
        _, nodes, _ = rt.cudaGraphGetNodes(raw, c)
        return [rt.cudaGraphNodeGetType(n)[1].name.replace("cudaGraphNodeType", "") for n in nodes]
    src = torch.arange(64, dtype=torch.float32, device="cuda")
    a, b = torch.randn(64, 64, device="cuda"), torch.randn(64, 64, device="cuda")
    a @ b
    cases = {
        "copy_ contiguous": lambda: torch.empty(64, device="cuda").copy_(src),
        "copy_ dtype change": lambda: torch.empty(64, device="cuda", dtype=torch.float16).copy_(src),
        "clone": lambda: src.clone(),
        "empty": lambda: torch.empty(64, device="cuda"),
        "zeros": lambda: torch.zeros(64, device="cuda"),
        "fill_": lambda: torch.empty(64, device="cuda").fill_(1.0),
        "mm 64": lambda: a @ b,
        "x*2+1": lambda: src * 2 + 1,
        "copy_ transposed": lambda: torch.empty(64, 64, device="cuda").copy_(a.t()),
    }
    for name, body in cases.items():
        try:
            g, _ = _graph(body)
            print(f"{name}: {types(g)}")
        except Exception as e:
            print(f"{name}: {type(e).__name__}: {e}"[:200])

if __name__ == "__main__":
    if len(sys.argv) > 1:
        Q[sys.argv[1]]()
    else:
        for name in Q:
            r = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, timeout=120)
            print(f"== {name} rc={r.returncode}\n{r.stdout}{r.stderr[-600:] if r.returncode else ''}")
