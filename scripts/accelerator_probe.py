"""What ``torch.accelerator`` does on a CUDA build: the facts ``seam/torch_cuda/accelerator.py`` follows.

One process, in order: the memory figures before and after CUDA initialises, against ``torch.cuda``'s; the
device checks; ``device_index``; the capability query; the calls inside a capture (last: the capture is refused).
JSON on stdout. Run on the H200 (session 16, tree of ebdeafa), its output is
``evidence/h200-accelerator-probe-ebdeafa.json``:

    python3 scripts/accelerator_probe.py > OUT.json
"""
import json, sys, torch
acc = torch.accelerator
out = {"torch": torch.__version__, "names": sorted(n for n in dir(acc) if not n.startswith("_")),
       "C": sorted(n for n in dir(torch._C) if n.startswith("_accelerator"))}
def tryit(key, fn):
    try:
        v = fn()
        out[key] = v if isinstance(v, (int, float, str, bool, type(None), list, dict)) else repr(v)
    except Exception as e:
        out[key] = f"ERR {type(e).__name__}: {e}"
tryit("init_before", lambda: torch.cuda.is_initialized())
tryit("isAllocInit_before", lambda: torch._C._accelerator_isAllocatorInitialized())
tryit("acc_stats_before", lambda: dict(acc.memory_stats()) if hasattr(acc, "memory_stats") else "absent")
tryit("acc_alloc_before", lambda: acc.memory_allocated() if hasattr(acc, "memory_allocated") else "absent")
tryit("init_after_acc_alloc", lambda: torch.cuda.is_initialized())
tryit("current_accelerator", lambda: str(acc.current_accelerator()))
tryit("current_device_index", lambda: acc.current_device_index())
tryit("init_after_index", lambda: torch.cuda.is_initialized())
x = torch.ones(1000, device="cuda")
tryit("isAllocInit_after", lambda: torch._C._accelerator_isAllocatorInitialized())
tryit("acc_stats_keys", lambda: sorted(acc.memory_stats().keys()))
tryit("cuda_stats_keys", lambda: sorted(torch.cuda.memory_stats().keys()))
tryit("acc_vs_cuda_stats_equal_common", lambda: {k: (v, torch.cuda.memory_stats().get(k)) for k, v in acc.memory_stats().items() if torch.cuda.memory_stats().get(k) != v})
tryit("acc_nested", lambda: repr(torch._C._accelerator_getDeviceStats(0))[:3000])
tryit("acc_alloc", lambda: (acc.memory_allocated(), torch.cuda.memory_allocated()))
tryit("acc_reserved", lambda: (acc.memory_reserved(), torch.cuda.memory_reserved()))
tryit("acc_max", lambda: (acc.max_memory_allocated(), acc.max_memory_reserved()))
tryit("acc_meminfo", lambda: (list(acc.get_memory_info()), list(torch.cuda.mem_get_info())))
tryit("acc_cap", lambda: repr(acc.get_device_capability()))
tryit("acc_cap_str", lambda: repr(acc.get_device_capability("cuda:0")))
tryit("acc_cap_cpu", lambda: repr(acc.get_device_capability("cpu")))
tryit("acc_stream", lambda: repr(acc.current_stream()))
tryit("acc_stream_type", lambda: type(acc.current_stream()).__module__ + "." + type(acc.current_stream()).__qualname__)
tryit("acc_device_index_ctx", lambda: repr(acc.device_index(0)))
def devidx():
    with acc.device_index(0):
        return acc.current_device_index()
tryit("acc_device_index_use", devidx)
tryit("acc_device_index_none", lambda: acc.device_index(None).__enter__())
tryit("acc_set_index_neg", lambda: acc.set_device_index(-1))
tryit("acc_set_index_bad", lambda: acc.set_device_index(5))
tryit("acc_sync_bad", lambda: acc.synchronize(5))
tryit("acc_stats_cpu", lambda: acc.memory_stats("cpu"))
tryit("acc_stats_bad", lambda: acc.memory_stats(7))
tryit("acc_alloc_str", lambda: acc.memory_allocated("cuda"))
del x
tryit("acc_reset_peak", lambda: acc.reset_peak_memory_stats())
tryit("acc_peak_after_reset", lambda: (acc.max_memory_allocated(), torch.cuda.max_memory_allocated()))
tryit("acc_reset_acc", lambda: acc.reset_accumulated_memory_stats())
tryit("acc_empty", lambda: acc.empty_cache())
tryit("acc_empty_host", lambda: acc.empty_host_cache() if hasattr(acc, "empty_host_cache") else "absent")
tryit("acc_reserved_after_empty", lambda: acc.memory_reserved())
tryit("has_Graph", lambda: hasattr(acc, "Graph"))
# in a capture
s = torch.cuda.Stream(); g = torch.cuda.CUDAGraph(); y = torch.zeros(4, device="cuda")
with torch.cuda.stream(s):
    g.capture_begin()
    tryit("cap_acc_sync", lambda: acc.synchronize())
    tryit("cap_acc_empty", lambda: acc.empty_cache())
    tryit("cap_acc_stats_n", lambda: len(acc.memory_stats()))
    tryit("cap_acc_meminfo", lambda: list(acc.get_memory_info()))
    tryit("cap_acc_stream", lambda: acc.current_stream() == s)
    try:
        g.capture_end()
    except Exception as e:
        out["cap_end"] = f"ERR {type(e).__name__}: {e}"
json.dump(out, sys.stdout, indent=1, default=str)
