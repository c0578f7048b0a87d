"""``torch.cuda.FloatTensor`` and the other legacy typed constructors, on the emulated device.

Older code and PyTorch's own older tests make device tensors with them (``torch.cuda.FloatTensor(t.size())``,
``torch.cuda.LongTensor([1, 2])``) and test a tensor's kind with ``isinstance(x, torch.cuda.FloatTensor)``. On a
CPU-only build each is a type that refuses ("type torch.cuda.FloatTensor not available. Torch not compiled with CUDA
enabled."). Here each is a class whose call is the host constructor of the same name moved to the device (torch
warns once, in its words, that the constructors are no longer recommended), and whose ``isinstance`` asks the
tensor's device and dtype; ``Tensor.type(torch.cuda.DoubleTensor)`` takes it (``tensor_methods.type_``).
Not modelled: the HOST types' ``isinstance`` (``torch.FloatTensor``) is torch's, which sees the host memory under an
emulated device tensor and says True (a GPU says False).
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

#: The legacy names ``torch.cuda`` has (this torch's, read from its own types), with their dtypes.
NAMES = {name: getattr(torch.cuda, name).dtype for name in dir(torch.cuda)
         if type(getattr(torch.cuda, name, None)).__name__ == "tensortype"}
_WARNED = False
#: torch's words (``python_tensor.cpp``), said once a process.
NOT_RECOMMENDED = ("The torch.cuda.*DtypeTensor constructors are no longer recommended. It's best to use methods "
                   "such as torch.tensor(data, dtype=*, device='cuda') to create tensors.")


class LegacyCudaType(type):
    """The metaclass: calling makes a device tensor; ``isinstance`` asks device and dtype."""

    dtype: torch.dtype
    is_cuda = True
    is_sparse = False

    def __call__(cls, *args: Any, **kwargs: Any) -> torch.Tensor:
        global _WARNED
        if not _WARNED:
            _WARNED = True
            warnings.warn(NOT_RECOMMENDED, UserWarning, stacklevel=2)
        kwargs.pop("device", None)
        host = getattr(torch, cls.__name__)(*args, **kwargs)
        return host.to("cuda")

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, torch.Tensor) and obj.is_cuda and not obj.is_sparse and obj.dtype == cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'torch.cuda.{cls.__name__}'>"


def _make(name: str, dtype: torch.dtype) -> type:
    return LegacyCudaType(name, (), {"dtype": dtype, "__module__": "torch.cuda"})


TYPES = {name: _make(name, dtype) for name, dtype in NAMES.items()}


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``)."""
    return [(torch.cuda, name, value) for name, value in TYPES.items()]
