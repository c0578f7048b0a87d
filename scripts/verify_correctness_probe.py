"""dynamo's verify_correctness over compiled training steps in a CUDA graph tree: each step's gradient, or what stopped.

The cudagraphs backend, the loss returned and backward called outside the compiled function, four models.

Run on a GPU as it is; emulated with ``SEAM_EMULATE_CUDA=1 PYTHONPATH=seam/torch_cuda/autostart:.``. Session 33: on
the H200 all four models give 4 steps of eager's gradients; emulated, ``matmul`` stopped at the tree's recording (the
compile-time run, with the device mode off, made no cuBLAS handle in the model); since session 34 all four do
(``seam/torch_cuda/compile_time_runs.py``, docs/torch-cuda.md).

    python scripts/verify_correctness_probe.py [--trace] {sum,mean,factory,matmul}
"""

from __future__ import annotations

import argparse
import traceback

import torch
import torch._dynamo

MODELS = {
    "sum": lambda x, y: ((x + y) * y).sum(),
    "mean": lambda x, y: (x * y).pow(2).mean(),
    "factory": lambda x, y: (torch.zeros(3, device="cuda").add_(3) * x * y).sum(),
    "matmul": lambda x, y: torch.nn.functional.gelu(x.view(3, 1) @ y.view(1, 3)).pow(2).mean(),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--trace", action="store_true", help="print the whole traceback of an error")
    args = parser.parse_args()
    y = torch.tensor([1.5, 0.25, -2.0], device="cuda")
    with torch._dynamo.config.patch(verify_correctness=True):
        step = torch.compile(MODELS[args.model], backend="cudagraphs")
        x = torch.tensor([0.5, -1.0, 2.0], device="cuda", requires_grad=True)
        try:
            for i in range(4):
                x.grad = None
                step(x, y).backward()
                print("step", i, x.grad.tolist())
                with torch.no_grad():
                    x.sub_(0.1 * x.grad)
        except Exception as err:  # the probe reports what stopped the steps
            print("RESULT", type(err).__name__, str(err).splitlines()[0][:200])
            if args.trace:
                traceback.print_exc()
            return 1
    print("RESULT ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
