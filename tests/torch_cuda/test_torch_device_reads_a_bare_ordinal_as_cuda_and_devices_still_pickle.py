"""``torch.device(0)`` is ``cuda:0`` on a CUDA build, and so under the emulation; the devices it makes
are torch's own: ``isinstance`` holds, they compare equal to the spelled-out device, and they pickle
and ``torch.save`` as on a GPU. Run on both arms (the ``torch_cuda`` fixture)."""

from __future__ import annotations

import io
import pickle

import torch


def test_a_bare_ordinal_is_the_cuda_device_of_that_index(torch_cuda: str) -> None:
    assert torch.device(0) == torch.device("cuda", 0)
    assert torch.device(0).type == "cuda"
    assert isinstance(torch.device(0), torch.device)
    assert isinstance(torch.device("cpu"), torch.device)


def test_a_device_pickles_and_unpickles_to_an_equal_device(torch_cuda: str) -> None:
    for made in (torch.device("cuda", 0), torch.device(0), torch.device("cpu")):
        back = pickle.loads(pickle.dumps(made))
        assert back == made
        assert isinstance(back, torch.device)


def test_torch_save_of_a_dict_holding_a_device_loads_it_back(torch_cuda: str) -> None:
    buffer = io.BytesIO()
    torch.save({"device": torch.device(0), "step": 3}, buffer)
    buffer.seek(0)
    assert torch.load(buffer) == {"device": torch.device("cuda", 0), "step": 3}
