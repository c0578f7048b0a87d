"""pytest plugin for the H200: after each test, does ``empty_cache()`` still release a freed 96 MiB segment?

Writes to ``$DIAG_OUT`` the first test after which it does not (with the allocator's figures): the test that left
the process's caching allocator counting a capture underway (raw torch 2.11 does so once CUDA refuses a capture's
end). Session 16 found with it that a ``CudaBackend`` capture begun without a pool leaked so (fixed in 0794eb4;
``evidence/h200-device-calls-2026-12-04-session16.txt``, call 4). It changes what it watches (an allocation and
two ``empty_cache()`` after each test): use it to find a cause, not to judge a run.

    DIAG_OUT=/tmp/diag.txt SEAM_ARMS=cuda python3 -m pytest -p scripts.allocator_leak_plugin tests/...
"""
import os
import torch

_done = []


def pytest_runtest_logfinish(nodeid, location):
    if _done or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return
    try:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        before = torch.cuda.memory_reserved()
        block = torch.empty(96 << 20, dtype=torch.uint8, device="cuda")
        del block
        torch.cuda.empty_cache()
        left = torch.cuda.memory_reserved() - before
    except Exception as err:  # a fraction set, an OOM: not this probe's business
        with open(os.environ["DIAG_OUT"], "a") as f:
            f.write(f"{os.path.basename(os.environ.get('SEAMGATE_FILE_ORDER', ''))} probe error after {nodeid}: {type(err).__name__}: {str(err)[:200]}\n")
        return
    if left >= 96 << 20:
        _done.append(nodeid)
        st = torch.cuda.memory_stats()
        with open(os.environ["DIAG_OUT"], "a") as f:
            f.write(f"{os.path.basename(os.environ.get('SEAMGATE_FILE_ORDER', ''))} FIRST: empty_cache released nothing after {nodeid}; reserved {torch.cuda.memory_reserved()} "
                    f"allocated {torch.cuda.memory_allocated()} segments {st.get('segment.all.current')}\n")
