"""H200 probe: does memory made on the caller's stream (not the seam's queue) get handed back to the
caller while the queue still works on it? Prints, for zeros made on each stream, whether the next
tensor of that size on the caller's stream took the same memory, and what it holds after the queue's
pending add.

    python3 scripts/alloc_stream_probe.py        # on the GPU machine
"""

from __future__ import annotations

import torch

MIB = 1 << 20


def case(zeros_on: str, empty_cache: bool) -> str:
    queue, mine = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    if empty_cache:
        torch.cuda.empty_cache()
    queue.wait_stream(mine)
    with torch.cuda.stream(queue if zeros_on == "queue" else mine):
        buf = torch.zeros(4 * MIB, device="cuda")
    mine.wait_stream(queue)
    ptr = buf.data_ptr()
    with torch.cuda.stream(queue):
        torch.cuda._sleep(400_000_000)
        buf.add_(1)
    del buf
    with torch.cuda.stream(mine):
        sevens = torch.full((4 * MIB,), 7.0, device="cuda")
    torch.cuda.synchronize()
    return (f"zeros on {zeros_on}, empty_cache={empty_cache}: same memory={sevens.data_ptr() == ptr}, "
            f"sevens hold {sorted(set(sevens.unique().tolist()))}")


if __name__ == "__main__":
    for zeros_on in ("queue", "mine"):
        for empty in (False, True):
            print(case(zeros_on, empty), flush=True)
