"""torch.cuda on a CPU: ``emulate_cuda()`` gives a CPU-only torch one emulated CUDA device.

Inside it, unmodified code written against ``torch.cuda`` (engines' graph wrappers, capture
libraries, ``torch.cuda.make_graphed_callables``) runs on the CPU: tensors on "cuda" report
``cuda:0`` and compute on the CPU, streams and events order captures, ``CUDAGraph`` records and
replays for real (``seam.emulator``), and what CUDA refuses is refused with torch's own exception
classes and words. ``docs/torch-cuda.md`` lists what is emulated, and what is not.
"""

from seam.torch_cuda.install import ENV, activate, child_environment, emulate_cuda, is_emulating

__all__ = ["ENV", "activate", "child_environment", "emulate_cuda", "is_emulating"]
