"""How far a random device operation moves its generator's Philox offset, as torch's CUDA kernels do.

torch's distribution kernels (``uniform_``, ``normal_``, ``random_``, ``exponential_``, ``bernoulli_``
with a float ``p``, and the factories built on them: ``rand``, ``randn``, ``randint``, ``*_like``) and
fused dropout launch at most ``SMs x (2048 / 256)`` blocks of 256 threads; each thread draws 4 numbers
(2 for 64-bit types) per round, and the offset moves on by 4 per round
(``calc_execution_policy``). On the H200 (132 SMs) a float draw of up to 1,081,344 numbers moves it by
4, 4M numbers by 16, 4M doubles by 32 (``tests/fidelity/cuda_corpus.py``:
``the_generator_offset_moves_by_what_each_kernel_draws``). Measured, not derived: ``bernoulli`` with a
tensor of probabilities moves it by 12 (its kernel asks for 10, rounded up to 4s); ``randperm`` of 10
by 16; ``multinomial`` by 4.
"""

from __future__ import annotations

from typing import Any

import torch

BLOCK = 256
SMS = 132
BLOCKS_PER_SM = 2048 // BLOCK
ROUND = 4
_WIDE = (torch.float64, torch.int64, torch.complex128)
#: Operations whose step was measured rather than computed (name of the overload packet, overload).
_MEASURED = {("bernoulli", "default"): 12, ("bernoulli_", "Tensor"): 12, ("randperm", None): 16,
             ("multinomial", None): 4}


def step(func: Any, result: Any) -> int:
    """The offset increment of the random operation ``func`` that made ``result``."""
    name = func._overloadpacket.__name__
    for key in ((name, func._overloadname), (name, None)):
        if key in _MEASURED:
            return _MEASURED[key]
    out = result[0] if isinstance(result, (tuple, list)) and result else result
    if not isinstance(out, torch.Tensor):
        return ROUND
    numel = out.numel()
    if numel == 0:
        return 0
    unroll = 2 if out.dtype in _WIDE else 4
    grid = min(SMS * BLOCKS_PER_SM, (numel + BLOCK - 1) // BLOCK)
    return ((numel - 1) // (BLOCK * grid * unroll) + 1) * ROUND
