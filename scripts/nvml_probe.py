"""What NVML and the CUDA driver answer through ctypes, before and after torch initialises CUDA (one line each).

    python scripts/nvml_probe.py [--emulated]    # --emulated: inside seam.emulate_cuda()
"""
import ctypes
import os
import sys

import torch

if "--emulated" in sys.argv:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from seam.torch_cuda import emulate_cuda

    emulate_cuda().__enter__()


def show(label, fn):
    try:
        print(label, fn(), flush=True)
    except Exception as e:  # noqa: BLE001 - a probe reports every answer
        print(label, "error", type(e).__name__, str(e).splitlines()[0] if str(e) else "", flush=True)


def driver_count():
    x = ctypes.c_int(-1)
    rc = ctypes.CDLL("libcuda.so.1").cuDeviceGetCount(ctypes.byref(x))
    return rc, x.value


show("has pynvml", lambda: torch.cuda._HAS_PYNVML)
show("count before init", torch.cuda.device_count)
show("cuDeviceGetCount before init", driver_count)
try:
    import pynvml

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    show("name", lambda: pynvml.nvmlDeviceGetName(h))
    show("uuid", lambda: pynvml.nvmlDeviceGetUUID(h))
    show("cc", lambda: pynvml.nvmlDeviceGetCudaComputeCapability(h))
    show("mem", lambda: (lambda m: (m.total, m.free, m.used))(pynvml.nvmlDeviceGetMemoryInfo(h)))
    show("driver", lambda: (pynvml.nvmlSystemGetDriverVersion(), pynvml.nvmlSystemGetCudaDriverVersion(),
                            pynvml.nvmlSystemGetNVMLVersion()))
    show("procs before init", lambda: len(pynvml.nvmlDeviceGetComputeRunningProcesses(h)))
    show("index", lambda: pynvml.nvmlDeviceGetIndex(h))
    show("by uuid", lambda: pynvml.nvmlDeviceGetIndex(pynvml.nvmlDeviceGetHandleByUUID(pynvml.nvmlDeviceGetUUID(h))))
    show("handle 1", lambda: pynvml.nvmlDeviceGetHandleByIndex(1))
except Exception as e:  # noqa: BLE001
    print("pynvml error", type(e).__name__, e)
y = torch.ones(1, device="cuda")
show("cuDeviceGetCount after init", driver_count)
for f in ("temperature", "power_draw", "clock_rate", "utilization", "memory_usage", "device_memory_used"):
    show(f, getattr(torch.cuda, f))
show("mem_get_info", torch.cuda.mem_get_info)
show("reserved", torch.cuda.memory_reserved)
show("procs after init", lambda: [(p.pid == os.getpid(), p.usedGpuMemory)
                                  for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)])
show("list_gpu_processes", torch.cuda.list_gpu_processes)
