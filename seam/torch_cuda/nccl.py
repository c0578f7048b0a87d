"""NCCL process groups on the emulated device: ``torch.distributed``'s ``"nccl"`` backend, carried by Gloo.

Engines start ``torch.distributed`` with NCCL even on one GPU (vLLM's and SGLang's workers init a group of one rank,
``init_process_group("nccl")`` or ``"cpu:gloo,cuda:nccl"``) and put collectives inside their CUDA graphs. A CPU-only
torch has no NCCL ("Distributed package doesn't have NCCL built in"), so none of that ran emulated. While emulating,
``torch.distributed`` says NCCL is there (``is_nccl_available()``, ``ProcessGroupNCCL``) and a group's NCCL backend
is a ``ProcessGroupNCCL`` here: a Gloo backend (the device's memory is the host's) under NCCL's name and options,
made on the same store, so ranks in several processes meet as NCCL's would. torch's own Python makes and registers it
for the ``cuda`` device as it registers NCCL's (``distributed_c10d._new_process_group_helper``, unmodified);
``dist.get_backend()`` says ``nccl``. The collectives it runs on device tensors, eagerly and inside a capture, are
``collectives.py``'s.

Worked example: ``dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)`` inside
``emulate_cuda()`` registers a ``ProcessGroupNCCL`` for ``cuda``; ``dist.all_reduce(x)`` of a device tensor runs
Gloo's all-reduce on ``x``'s memory; a host tensor on that group is refused as on a GPU ("No backend type associated
with device type cpu").
"""

from __future__ import annotations

import datetime
from typing import Any

import torch

#: The module whose names ``patches`` replaces (``on_import.watch``).
MODULE = "torch.distributed.distributed_c10d"
#: NCCL's default timeout in a CUDA build (``torch._C._distributed_c10d._DEFAULT_PG_NCCL_TIMEOUT``: ten minutes).
DEFAULT_TIMEOUT = datetime.timedelta(minutes=10)


class Options:
    """``ProcessGroupNCCL.Options``: what torch's Python sets on it (``_new_process_group_helper``)."""

    def __init__(self, is_high_priority_stream: bool = False) -> None:
        self.is_high_priority_stream = is_high_priority_stream
        self._timeout = DEFAULT_TIMEOUT
        self.backend = "nccl"
        self.global_ranks_in_group: list[int] = []
        self.group_name = ""
        self.split_from: Any = None
        self.split_color = 0
        self.config: Any = None


#: The groups' NCCL backends made while emulating, held so that the backend a process group gives back is this
#: Python object (pybind11 keeps a Python subclass's instance only while something holds it).
_MADE: list[Any] = []


def cuda_backend(group: Any) -> Any:
    """``group``'s backend for the ``cuda`` device, or None where it has none."""
    try:
        return group._get_backend(torch.device("cuda"))
    except RuntimeError:
        return None


def emulated_backend(group: Any) -> Any:
    """``group``'s emulated NCCL backend, or None (no group, or its ``cuda`` backend is not one)."""
    backend = cuda_backend(group) if group is not None else None
    return backend if is_emulated(backend) else None


def _prune() -> None:
    """Let go of the backends of groups destroyed since (each holds Gloo's threads): those no live group has."""
    from torch.distributed.distributed_c10d import _world
    live = {id(cuda_backend(group)) for group in list(_world.pg_map)}
    _MADE[:] = [backend for backend in _MADE if id(backend) in live]


def _gloo() -> Any:
    from torch._C._distributed_c10d import ProcessGroupGloo
    return ProcessGroupGloo


_CLASS: type | None = None


def _backend_class() -> type:
    """``ProcessGroupNCCL``: made on first use (importing ``torch.distributed`` is not free)."""
    global _CLASS
    if _CLASS is not None:
        return _CLASS

    class ProcessGroupNCCL(_gloo()):  # type: ignore[misc, valid-type]
        """NCCL's backend of a process group, emulated: Gloo's collectives on the device's (host) memory."""

        Options = Options

        def __init__(self, store: Any, rank: int, size: int, options: Options | None = None) -> None:
            options = options if options is not None else Options()
            super().__init__(store, rank, size, options._timeout)
            self._nccl_options = options
            #: Whether NCCL would have made its communicator by now: at the first collective outside a capture, or
            #: eagerly (``init_process_group(device_id=...)``); a first collective inside a capture is refused.
            self.connected = False
            _prune()
            _MADE.append(self)

        @property
        def options(self) -> Options:  # the GPU's backend gives its NCCL options
            return self._nccl_options

        def name(self) -> str:
            return "nccl"

        @property
        def uid(self) -> int:
            return id(self)

        # NCCL's own calls that torch's Python makes (a split group, an abort, a timeout): nothing to do over Gloo,
        # which connected every rank when it was made.
        def eager_connect_single_device(self, device: Any = None) -> None:
            self.connected = True

        def perform_nocolor_split(self, device: Any = None) -> None:
            return None

        def _group_start(self) -> None:
            return None

        def _group_end(self) -> None:
            return None

        def _add_ephemeral_timeout(self, timeout: Any) -> None:
            return None

    ProcessGroupNCCL.__module__ = "torch.distributed.distributed_c10d"
    ProcessGroupNCCL.__qualname__ = "ProcessGroupNCCL"
    _CLASS = ProcessGroupNCCL
    return _CLASS


def is_emulated(backend: Any) -> bool:
    """Whether ``backend`` is an emulated NCCL backend."""
    return _CLASS is not None and isinstance(backend, _CLASS)


def patches(module: Any) -> list[tuple[Any, str, Any]]:
    """For ``on_import.watch`` on ``torch.distributed.distributed_c10d``: NCCL said to be built, its class, its
    default timeout (a CPU-only build warns that it has none)."""
    import torch.distributed as dist
    cls = _backend_class()
    out = [(module, "_NCCL_AVAILABLE", True), (module, "ProcessGroupNCCL", cls),
           (module, "default_pg_nccl_timeout", DEFAULT_TIMEOUT), (dist, "ProcessGroupNCCL", cls)]
    constants = getattr(dist, "constants", None)
    if constants is not None:
        out.append((constants, "default_pg_nccl_timeout", DEFAULT_TIMEOUT))
    return out


#: The NCCL each torch release's CUDA 13 wheels carry (pytorch/pytorch's RELEASE.md compatibility matrix: 2.11 ->
#: 2.28.9, 2.12 and 2.13 -> 2.29.7): ``torch.cuda.nccl.version()`` names the one of the torch it runs on.
_VERSIONS = {(2, 11): (2, 28, 9), (2, 12): (2, 29, 7), (2, 13): (2, 29, 7)}


def version_tuple() -> tuple[int, int, int]:
    release = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    return _VERSIONS.get(release, _VERSIONS[max(_VERSIONS)])  # type: ignore[arg-type]


def _nccl_version() -> int:
    """``torch._C._nccl_version()``: major, minor and patch in one number, as torch's C++ packs them."""
    major, minor, patch = version_tuple()
    return (major << 32) | (minor << 16) | patch


def _nccl_version_suffix() -> bytes:
    return b""


def library_patches() -> list[tuple[Any, str, Any]]:
    """``torch._C``'s NCCL queries (``torch.cuda.nccl.version()``; torch's distributed logger reads it when a
    collective of an NCCL group raises), those a CPU-only build lacks."""
    return [(torch._C, name, value) for name, value in (("_nccl_version", _nccl_version),
                                                           ("_nccl_version_suffix", _nccl_version_suffix))
            if not hasattr(torch._C, name)]


def forget() -> None:
    """Leaving the emulation: the backends made in it are no longer held here."""
    _MADE.clear()
