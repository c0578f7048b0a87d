"""CUDA graph trees (``torch.compile(mode="reduce-overhead")``, ``backend="cudagraphs"``) on the emulated device.

torch's tree manager (``torch._inductor.cudagraph_trees``) records a compiled function into a ``torch.cuda.CUDAGraph``
(the emulated one) and replays it; around that it reads 12 functions of a CUDA build's ``torch._C`` that a CPU-only
build lacks (a CUDA build's own are replaced: they would ask its allocator about CPU memory). Seven stand in
here, four in ``checkpoints.py``, the twelfth (``_cuda_cudaCachingAllocator_raw_delete``) in ``mempool.py``:

- **An output a later replay overwrote.** When a replay writes over the memory of an earlier call's outputs, the
  tree marks those tensors (``_set_storage_access_error_msg``) and their storages
  (``_set_storage_data_ptr_access_error_msg``) with its message, "Error: accessing tensor output of CUDAGraphs that
  has been overwritten by a subsequent run. ...". On a GPU reading such a tensor raises a RuntimeError of that
  message; here the device mode refuses every operation that reads one (``refuse_overwritten``), and so does
  printing. Its shape, dtype and device stay readable, as on a GPU. While no tensor is marked (``MARKED`` empty),
  the device mode pays one test per operation.
- **The pool's bookkeeping.** The tree's checkpoints of its pool (``_cuda_getCheckpointState``,
  ``_cuda_setCheckpointPoolState``), its frees of a generation's live outputs (``_free_And_Remove_DeleterFn``) and
  its raw frees (``_cuda_cudaCachingAllocator_raw_delete``) act on the caching allocator's model: ``checkpoints.py``,
  ``mempool.raw_delete``. A block a recording takes back loses the mark its last owner got (``unmark``): on a GPU the
  new tensor's storage is a new one. ``_cuda_checkPoolLiveAllocations`` answers from the allocator model (a pool's
  allocated blocks against the addresses given), to the tree's own check of its pool too.
- ``_tensors_data_ptrs_at_indices_equal``: the tensors' data pointers, compared at the indices, as torch's C++ does.
- ``_cuda_isHistoryEnabled``: whether ``torch.cuda.memory._record_memory_history`` is recording
  (``memory_history.py``); cuDNN's benchmark-cache flag (``_cuda_get_conv_benchmark_empty_cache`` and its setter):
  kept, no cuDNN here.

``torch.compile(mode="reduce-overhead")`` compiles its graph as the ``cudagraphs`` backend does
(``compiling.py``: aot_eager's graph in a tree), since inductor's kernels need Triton.
"""

from __future__ import annotations

import weakref
from typing import Any, Sequence

import torch

from seam.torch_cuda.runtime import runtime

#: The live tensors and storages the tree marked overwritten, by ``id`` (a weak reference each, whose death drops the
#: entry): non-empty only while an overwritten output lives (the device mode tests it once per operation).
MARKED: dict[int, "weakref.ref[Any]"] = {}
#: The attribute a marked tensor or storage carries: the tree's message.
_ATTR = "_seam_overwritten"
_conv_benchmark_empty_cache = [True]


def _mark(obj: Any, message: str) -> None:
    setattr(obj, _ATTR, str(message))
    key = id(obj)
    MARKED[key] = weakref.ref(obj, lambda _ref, key=key: MARKED.pop(key, None))


def unmark(storage: Any) -> None:
    """``storage``'s memory serves a new tensor (``pools.Pool.place``): on a GPU that tensor gets a storage of its own
    over the block, which the tree never marked, so the mark the block's last owner got goes."""
    if getattr(storage, _ATTR, None) is not None:
        delattr(storage, _ATTR)
        MARKED.pop(id(storage), None)


def set_storage_access_error_msg(tensor: torch.Tensor, message: str) -> None:
    """``torch._C._set_storage_access_error_msg``: reading ``tensor`` raises ``message`` from now on."""
    _mark(tensor, message)


def set_storage_data_ptr_access_error_msg(storage: Any, message: str) -> None:
    """``torch._C._set_storage_data_ptr_access_error_msg``: reading any tensor of ``storage`` (torch's storage, or its
    address as the tree holds it: ``StorageWeakRef.cdata``) raises ``message``. The mark goes on torch's Python object
    of the storage, which torch keeps while the storage lives (``kinds.py`` marks memory kinds there too)."""
    if isinstance(storage, int):
        storage = torch.UntypedStorage._new_with_weak_ptr(storage)
    _mark(storage, message)


def overwritten(tensor: torch.Tensor) -> str | None:
    """The tree's message when ``tensor`` (or its storage) was marked overwritten, else None."""
    message = getattr(tensor, _ATTR, None)
    if message is None:
        message = getattr(tensor.untyped_storage(), _ATTR, None)
    return message


def refuse_overwritten(values: Sequence[Any]) -> None:
    """Raise the tree's RuntimeError when a tensor among ``values`` (or in a list among them) was overwritten."""
    for value in values:
        if isinstance(value, torch.Tensor):
            message = overwritten(value)
            if message is not None:
                raise RuntimeError(message)
        elif isinstance(value, (list, tuple)):
            refuse_overwritten(value)


def tensors_data_ptrs_at_indices_equal(tensors: Sequence[Any], data_ptrs: Sequence[Any],
                                       indices: Sequence[int]) -> bool:
    return all(tensors[i].data_ptr() == data_ptrs[i] for i in indices)


def check_pool_live_allocations(device: Any, pool: Any, live_data_ptrs: Any) -> bool:
    """torch's ``_cuda_checkPoolLiveAllocations``: whether the allocated blocks of the private pool ``pool`` are
    exactly those that start at ``live_data_ptrs`` (the model's addresses, what ``data_ptr()`` says); a pool the
    allocator has never made is refused, in its words. Blocks only graphs still hold are freed first, as a GPU's
    are freed when their last tensor goes (``allocator.read``). CUDA graph trees ask it after every step under
    ``slow_path_cudagraph_asserts`` (``cudagraph_trees.check_memory_pool``)."""
    allocator = runtime().allocator.read()
    pool_id = tuple(pool)
    if pool_id not in allocator.private:
        raise RuntimeError("Could not find pool of id")
    live = {block.address for block in allocator.active.values() if block.pool.pool_id == pool_id}
    return live == set(live_data_ptrs)


def is_history_enabled() -> bool:
    return runtime().allocator.trace is not None


def get_conv_benchmark_empty_cache() -> bool:
    return _conv_benchmark_empty_cache[0]


def set_conv_benchmark_empty_cache(enable: bool) -> None:
    _conv_benchmark_empty_cache[0] = bool(enable)


def patches() -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement) for the installation: ``torch._C``'s names a CPU-only build lacks, replaced on a CUDA
    build too (its own would ask a CUDA runtime or its allocator about device memory that is CPU memory here)."""
    by_name = {
        "_set_storage_access_error_msg": set_storage_access_error_msg,
        "_set_storage_data_ptr_access_error_msg": set_storage_data_ptr_access_error_msg,
        "_tensors_data_ptrs_at_indices_equal": tensors_data_ptrs_at_indices_equal,
        "_cuda_checkPoolLiveAllocations": check_pool_live_allocations,
        "_cuda_isHistoryEnabled": is_history_enabled,
        "_cuda_get_conv_benchmark_empty_cache": get_conv_benchmark_empty_cache,
        "_cudnn_set_conv_benchmark_empty_cache": set_conv_benchmark_empty_cache,
    }
    return [(torch._C, name, value) for name, value in by_name.items()]
