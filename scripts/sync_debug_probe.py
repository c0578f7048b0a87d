"""Which operations torch's sync debug mode flags: per case, its warnings in mode "warn" and its error in "error".

Plain torch on a GPU machine (``python3 scripts/sync_debug_probe.py``), or on the emulated device here (``--emulated``);
one JSON line per case. Its H100 answers (all 42 cases, session 23, at 5c7867f) are
``evidence/h100-sync-debug-probe-5c7867f.jsonl``, and ``seam/torch_cuda/sync_debug.py`` follows them.
"""
import json, sys, warnings
import torch
if "--emulated" in sys.argv:
    from seam.torch_cuda import emulate_cuda
    emulate_cuda().__enter__()
d = "cuda"
x = torch.randn(4, 3, device=d)
pinned = torch.empty(4, 3).pin_memory()
side = torch.cuda.Stream()
ev = torch.cuda.Event()
ev.record()
cases = {
    "item": lambda: x[0, 0].item(), "tolist": lambda: x.tolist(), "cpu": lambda: x.cpu(),
    "bool": lambda: bool(x[0, 0] > 0), "nonzero": lambda: x.nonzero(), "masked_select": lambda: x[x > 0],
    "unique": lambda: torch.unique(x), "equal": lambda: torch.equal(x, x),
    "repeat_interleave_tensor": lambda: torch.repeat_interleave(torch.tensor([1, 2], device=d)),
    "d2h_blocking": lambda: pinned.copy_(x), "d2h_non_blocking_pinned": lambda: pinned.copy_(x, non_blocking=True),
    "d2h_pageable": lambda: torch.empty(4, 3).copy_(x),
    "h2d_pageable": lambda: x.copy_(torch.ones(4, 3)), "h2d_pinned_non_blocking": lambda: x.copy_(pinned, non_blocking=True),
    "tensor_factory_from_list": lambda: torch.tensor([1.0, 2.0], device=d), "to_cuda": lambda: torch.ones(3).to(d),
    "d2d_copy": lambda: x.clone().copy_(x), "sum": lambda: x.sum(), "argmax": lambda: x.argmax(),
    "cuda_synchronize": lambda: torch.cuda.synchronize(), "stream_synchronize": lambda: side.synchronize(),
    "event_synchronize": lambda: ev.synchronize(), "event_query": lambda: ev.query(), "stream_query": lambda: side.query(),
    "memory_stats": lambda: torch.cuda.memory_stats(), "empty_cache": lambda: torch.cuda.empty_cache(),
    "randperm": lambda: torch.randperm(8, device=d), "multinomial": lambda: torch.multinomial(torch.ones(4, device=d), 2),
    "sort": lambda: x.sort(), "topk": lambda: x.topk(2), "index_host_long": lambda: x[torch.tensor([0, 1])],
    "index_device_long": lambda: x[torch.tensor([0, 1], device=d)], "print": lambda: repr(x),
    "mm": lambda: x @ x.T, "graph_capture_replay": None,
    "index_put_host_ids": lambda: x.index_put_((torch.tensor([0, 1]),), torch.zeros(2, 3, device=d)),
    "setitem_device_ids": lambda: x.__setitem__(torch.tensor([0, 1], device=d), 1.0),
    "setitem_mask": lambda: x.__setitem__(x > 0, 0.0), "masked_fill": lambda: x.masked_fill(x > 0, 0.0),
    "index_select_device": lambda: x.index_select(0, torch.tensor([0, 1], device=d)),
    "cumsum_then_item": lambda: x.cumsum(0)[-1, 0].item(), "bincount": lambda: torch.bincount(torch.tensor([0, 1], device=d)),
}
def capture_replay():
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        x.mul(2)  # the warm-up
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        y = x * 2
    g.replay()
    return y
cases["graph_capture_replay"] = capture_replay
print(json.dumps({"torch": torch.__version__, "mode_default": torch.cuda.get_sync_debug_mode()}), flush=True)


def run(call, mode):
    """``call`` in sync debug ``mode``: "ok" or its error's first words, and the synchronizing warnings it gave."""
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode(mode)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            call()
            outcome = "ok"
        except Exception as e:
            outcome = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    torch.cuda.set_sync_debug_mode(0)
    return outcome, [str(w.message).splitlines()[0][:120] for w in said if "synchroniz" in str(w.message)]


for name, call in cases.items():
    warn_mode, warned = run(call, "warn")
    error_mode, _ = run(call, "error")
    print(json.dumps({"case": name, "warn_mode": warn_mode, "warnings": warned, "error_mode": error_mode}), flush=True)
