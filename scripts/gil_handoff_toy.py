"""A toy of the TestConcurrentCaptures race without torch: where does a thread woken from a barrier get the GIL?

Two threads leave a barrier; each "synchronizes" (``--release``: ``none``, or a zero sleep, which hands the GIL to a
thread waiting for it, as torch's CUDA bindings release it around ``cudaDeviceSynchronize``), then opens a
"capture" of about 100 us of Python with one "torch operation" inside (a zero sleep: torch's bindings release the GIL
around every operation). Counted: runs where the second thread's "synchronize" falls inside the first thread's open
window, the refusal a real capture would meet (docs/torch-cuda.md, session 40).

    python scripts/gil_handoff_toy.py [--release none|sleep0] [--runs 200]
"""

from __future__ import annotations

import argparse
import threading
import time


def _one(release: str) -> bool:
    order: list[str] = []
    barrier = threading.Barrier(2)

    def thread(name: str) -> None:
        barrier.wait()
        order.append(f"{name}:sync")
        if release == "sleep0":
            time.sleep(0)
        order.append(f"{name}:open")
        x = 0
        for i in range(1000):
            x += i
        time.sleep(0)  # a torch operation inside the capture releases the GIL
        for i in range(1000):
            x += i
        order.append(f"{name}:close")

    threads = [threading.Thread(target=thread, args=(n,)) for n in "AB"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = order[1].split(":")[0]
    other = "B" if first == "A" else "A"
    return order.index(f"{first}:open") < order.index(f"{other}:sync") < order.index(f"{first}:close")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", choices=("none", "sleep0"), default="none")
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    hits = sum(_one(args.release) for _ in range(args.runs))
    print(f"release at the synchronize: {args.release}; the other thread's synchronize inside the first's open "
          f"window: {hits} of {args.runs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
