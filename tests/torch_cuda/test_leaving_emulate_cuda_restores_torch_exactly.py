"""Leaving ``emulate_cuda()`` restores torch exactly: every replaced name, the Tensor methods, the
mode stack and the environment, also when the block raises and when blocks nest."""

from __future__ import annotations

import os

import pytest
import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

from seam.torch_cuda import emulate_cuda, is_emulating
from seam.torch_cuda.install import _MISSING, _patches


def _snapshot() -> dict[tuple[int, str], object]:
    out = {}
    for owner, name, _ in _patches():
        here = owner.__dict__ if isinstance(owner, type) else vars(owner)
        out[(id(owner), name)] = here.get(name, _MISSING)
    return out


def test_every_replaced_name_is_torchs_own_again_after_the_block() -> None:
    before = _snapshot()
    env = (os.environ.get("SEAM_EMULATE_CUDA"), os.environ.get("PYTHONPATH"))
    modes = len(_get_current_dispatch_mode_stack())
    with emulate_cuda():
        assert torch.cuda.is_available()
        assert _snapshot() != before
    after = _snapshot()
    changed = [key for key in before if before[key] is not after[key]]
    assert changed == []
    assert (os.environ.get("SEAM_EMULATE_CUDA"), os.environ.get("PYTHONPATH")) == env
    assert len(_get_current_dispatch_mode_stack()) == modes
    assert not is_emulating()


def test_a_block_that_raises_restores_torch_too() -> None:
    before = _snapshot()
    with pytest.raises(ValueError, match="inside"):
        with emulate_cuda():
            raise ValueError("inside")
    assert [k for k in before if before[k] is not _snapshot()[k]] == []
    assert not is_emulating()


def test_nested_blocks_share_the_outermost_installation() -> None:
    with emulate_cuda():
        x = torch.ones(2, device="cuda")
        with emulate_cuda():
            assert x.is_cuda
        assert is_emulating()
        assert torch.ones(1, device="cuda").device == torch.device("cuda", 0)
    assert not is_emulating()


def test_a_tensor_made_inside_is_a_plain_cpu_tensor_after_the_block() -> None:
    with emulate_cuda():
        x = torch.ones(2, device="cuda")
    assert x.device == torch.device("cpu")
    assert not x.is_cuda
    assert (x + torch.ones(2)).tolist() == [2.0, 2.0]


def test_the_decorator_form_emulates_only_during_the_call() -> None:
    @emulate_cuda()
    def make() -> bool:
        return torch.ones(1, device="cuda").is_cuda

    assert make() is True
    assert not is_emulating()


def test_each_block_starts_from_a_fresh_device() -> None:
    with emulate_cuda():
        s = torch.cuda.Stream()
        torch.cuda.set_stream(s)
        torch.cuda.manual_seed(123)
        first = torch.rand(3, device="cuda").tolist()
    with emulate_cuda():
        assert torch.cuda.current_stream() == torch.cuda.default_stream()
        torch.cuda.manual_seed(123)
        assert torch.rand(3, device="cuda").tolist() == first


def test_torch_generator_and_the_default_generators_are_torchs_own_again_after_the_block() -> None:
    generator_class, defaults = torch.Generator, torch.cuda.default_generators
    with emulate_cuda():
        assert torch.Generator(device="cuda").device.type == "cuda"  # made on the emulated device
        assert torch.cuda.default_generators is not defaults
    assert torch.Generator is generator_class
    assert torch.cuda.default_generators is defaults
    assert type(torch.Generator()) is generator_class


def test_a_raw_block_left_undeleted_goes_with_its_block() -> None:
    # a raw block is the runtime's, like every other device memory: the next block (the next test) neither
    # holds it nor can free it by its address
    with emulate_cuda():
        address = torch.cuda.caching_allocator_alloc(4096)
    with emulate_cuda():
        with pytest.raises(RuntimeError, match="invalid device pointer"):
            torch.cuda.caching_allocator_delete(address)


@pytest.mark.skipif(torch.backends.cuda.is_built(), reason="a CUDA build registers its own CUDA device guard")
def test_the_cuda_device_guard_a_cpu_only_torch_gets_inside_is_gone_after_the_block() -> None:
    """Inside, a fake CUDA tensor can be indexed (torch.compile traces so, the device mode off: ``seam/torch_cuda/
    device_guard.py``); after the block a CPU-only torch refuses it again, as before any emulation, and again after
    a second block."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._python_dispatch import _disable_current_modes

    def index_a_fake_cuda_tensor() -> list[int]:
        with _disable_current_modes(), FakeTensorMode():
            return list(torch.empty(8, device="cuda")[2:5].shape)

    for _ in range(2):
        with emulate_cuda():
            assert index_a_fake_cuda_tensor() == [3]
        with pytest.raises(RuntimeError, match="PyTorch is not linked with support for cuda devices"):
            index_a_fake_cuda_tensor()


def test_the_factories_kernels_at_torchs_cuda_key_are_torchs_own_again_after_the_block() -> None:
    """Inside, an aten factory reached on torch's CUDA key while every mode is off makes a device tensor
    (``seam/torch_cuda/device_factories.py``); after the block the key has what it had before (no kernel on a CPU-only
    build, torch's own on a CUDA one), twice over."""
    from torch.utils._python_dispatch import _disable_current_modes

    def cuda_kernels() -> list[bool]:
        return [torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{name}", "CUDA")
                for name in ("empty.memory_format", "empty_strided", "tril_indices", "triu_indices")]

    before = cuda_kernels()
    for _ in range(2):
        with emulate_cuda():
            assert all(cuda_kernels())
            with _disable_current_modes():
                made = torch.ops.aten.empty.memory_format([3], device=torch.device("cuda", 0))
            assert made.is_cuda and made.shape == (3,)
        assert cuda_kernels() == before
