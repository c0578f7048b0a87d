"""``torch.save`` of a device tensor records its storage as ``cuda:0`` and ``torch.load`` gives it back on the
device, as on a GPU: engines save and load state dicts and checkpoints of device tensors, and
``map_location`` moves them. A file saved on the emulator names the device a GPU's file names."""

from __future__ import annotations

import io

import pytest
import torch


def _saved(obj: object) -> io.BytesIO:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return buffer


def test_a_saved_device_tensor_records_cuda_0_and_loads_back_on_the_device(torch_cuda: str) -> None:
    state = {"weight": torch.arange(6.0, device="cuda").reshape(2, 3), "steps": torch.tensor([7])}
    locations: list[str] = []
    torch.load(_saved(state), map_location=lambda storage, location: locations.append(location) or storage)
    assert sorted(locations) == ["cpu", "cuda:0"]
    loaded = torch.load(_saved(state))
    assert loaded["weight"].device == torch.device("cuda", 0) and loaded["steps"].device.type == "cpu"
    assert loaded["weight"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert (loaded["weight"] * 2).device == torch.device("cuda", 0)


def test_a_view_saved_with_its_base_shares_the_loaded_device_memory(torch_cuda: str) -> None:
    base = torch.zeros(4, device="cuda")
    base_back, view_back = torch.load(_saved((base, base[2:])))
    view_back.fill_(5.0)
    assert base_back.tolist() == [0.0, 0.0, 5.0, 5.0] and view_back.is_cuda


@pytest.mark.parametrize("where", ["cuda", "cuda:0", torch.device("cuda", 0)], ids=["str", "str-index", "device"])
def test_map_location_moves_host_tensors_onto_the_device(torch_cuda: str, where: object) -> None:
    loaded = torch.load(_saved(torch.ones(3)), map_location=where)
    assert loaded.device == torch.device("cuda", 0) and loaded.sum().item() == 3.0


def test_map_location_cpu_brings_a_device_tensor_to_the_host(torch_cuda: str) -> None:
    loaded = torch.load(_saved(torch.ones(3, device="cuda")), map_location="cpu")
    assert loaded.device.type == "cpu" and loaded.sum().item() == 3.0


def test_a_device_the_machine_does_not_have_is_refused_in_torchs_words(torch_cuda: str) -> None:
    missing = torch.cuda.device_count()
    with pytest.raises(RuntimeError, match=f"Attempting to deserialize object on CUDA device {missing} but "
                                           f"torch.cuda.device_count\\(\\) is {missing}"):
        torch.load(_saved(torch.ones(3, device="cuda")), map_location=f"cuda:{missing}")
