"""``torch.cuda.FloatTensor`` and the other legacy typed constructors make device tensors, and ``isinstance`` with
them asks the tensor's device and dtype, on both arms.

Older code and PyTorch's own ``test_record_stream`` make device tensors so (``torch.cuda.FloatTensor(t.size())``);
on the emulated device a CPU-only build refused them ("type torch.cuda.FloatTensor not available. Torch not compiled
with CUDA enabled.").
"""

from __future__ import annotations

import warnings

import torch


def test_a_size_or_data_makes_a_device_tensor_of_the_types_dtype(torch_cuda: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's "no longer recommended", said once a process
        sized = torch.cuda.FloatTensor(torch.Size([3, 2]))
        data = torch.cuda.LongTensor([1, 2, 3])
        empty = torch.cuda.HalfTensor()
    assert (sized.shape, sized.dtype, sized.device) == (torch.Size([3, 2]), torch.float32, torch.device("cuda", 0))
    assert (data.dtype, data.is_cuda, data.tolist()) == (torch.int64, True, [1, 2, 3])
    assert (empty.shape, empty.dtype, empty.is_cuda) == (torch.Size([0]), torch.float16, True)


def test_isinstance_and_type_ask_the_device_and_the_dtype(torch_cuda: str) -> None:
    x = torch.ones(2, device="cuda")
    assert isinstance(x, torch.cuda.FloatTensor) and not isinstance(x, torch.cuda.DoubleTensor)
    assert not isinstance(torch.ones(2), torch.cuda.FloatTensor)
    assert x.type() == "torch.cuda.FloatTensor"
    y = x.type(torch.cuda.DoubleTensor)
    assert (y.dtype, y.is_cuda) == (torch.float64, True)
    assert torch.cuda.FloatTensor.dtype == torch.float32 and torch.cuda.FloatTensor.is_cuda
