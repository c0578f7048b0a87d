"""Device check: importing torch._dynamo (and pytest) initializes no CUDA; a forked child still captures.

Prints one JSON line. Run on a GPU machine: python scripts/device_fork_check.py"""
import json
import os
import sys

import torch
import pytest  # noqa: F401

found = {"torch": torch.__version__}
import torch._dynamo  # noqa: E402,F401

found["initialized_after_dynamo"] = torch.cuda.is_initialized()
pid = os.fork()
if pid == 0:
    try:
        x = torch.ones(4, device="cuda")
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            y = x * 2
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            z = x * 3
        g.replay()
        torch.cuda.synchronize()
        os._exit(0 if float(z.sum()) == 12.0 else 3)
    except Exception as e:  # noqa: BLE001
        print("child:", repr(e), file=sys.stderr)
        os._exit(2)
_, status = os.waitpid(pid, 0)
found["forked_child_exit"] = os.waitstatus_to_exitcode(status)
print(json.dumps(found))
