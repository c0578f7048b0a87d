"""How many objects Python's collector counts per operation on the emulated device, eager and inside a capture:
the figure behind ``seam/torch_cuda/gc_pace.py``'s ``PACE``.

Usage: python scripts/gc_objects_per_op.py [--ops N]   (prints one line per mode: new tracked objects per operation)
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from seam.torch_cuda import emulate_cuda  # noqa: E402


def _body(x: torch.Tensor, n: int) -> torch.Tensor:
    for _ in range(n):
        x = x * 1.5 + 1  # two operations
    return x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200, help="operations measured in each mode (default 200)")
    n = parser.parse_args().ops // 2
    with emulate_cuda():
        x = torch.ones(64, device="cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        gc.disable()
        try:
            with torch.cuda.stream(side):
                warm = torch.cuda.CUDAGraph()  # the first capture's one-time set-up is not counted
                warm.capture_begin()
                _body(x, 2)
                warm.capture_end()
                start = gc.get_count()[0]
                _body(x, n)
                eager = gc.get_count()[0] - start
                graph = torch.cuda.CUDAGraph()
                graph.capture_begin()
                start = gc.get_count()[0]
                _body(x, n)
                captured = gc.get_count()[0] - start
                graph.capture_end()
        finally:
            gc.enable()
    print(f"eager: {eager / (2 * n):.2f} tracked objects per operation")
    print(f"inside a capture: {captured / (2 * n):.2f} tracked objects per operation")


if __name__ == "__main__":
    main()
