"""torch's CUDA hooks say CUDA is built while autograd's engine runs a backward of fake device tensors.

torch.compile traces a training step's backward (AOTAutograd's joint graph) by running autograd's engine on fake
tensors whose device is ``cuda:0``. The engine treats a gradient on an accelerator by the accelerator's streams: a
node's stream is its input's stream only where that device type is the accelerator (``Node::stream``), and a
gradient on an accelerator with no producer stream takes the accelerator's current one
(``InputBuffer::add``: ``at::accelerator::getCurrentStream``). Which device type is the accelerator, C++ asks the
CUDA hooks (``at::detail::getCUDAHooks().isBuilt()``, in ``at::accelerator::getAccelerator``); a CPU-only build's
hooks say no, so every such trace raised "Cannot access accelerator device when none is available.", and a CUDA
build on a machine without a GPU raised "hasPrimaryContext expects a valid device index" where the engine notes the
caller's stream of each device with a context (``GraphTask::stash_current_streams``).

So while the engine runs a backward with a fake tensor mode on (``backward_streams.run_backward``), the hooks
object's virtual table is a copy of its own with two entries replaced: ``isBuilt`` says True and
``hasPrimaryContext`` says True for the emulated device (index 0) alone, as on a machine with one GPU. The streams the
engine then asks for are those of the fake CUDA device guard (``device_guard.py``). The table is the object's own
again when the last such backward ends. The emulated device's own tensors are CPU tensors to C++, so a backward
without a fake mode is left as it is (and pays nothing).

Found through ``ctypes``: ``at::detail::getCUDAHooks`` in libtorch_cpu; the object's class is read from its run-time
type name (``at::CUDAHooksInterface`` on a CPU-only build, ``at::cuda::detail::CUDAHooks`` on a CUDA one), and the
two entries' places (2 and 4, after the two destructors: ``AcceleratorHooksInterface`` declares ``isBuilt``,
``isAvailable``, ``hasPrimaryContext`` first) are those of torch 2.11 to 2.13, the versions measured. Where any of
it is not found, nothing is replaced and ``available()`` is False: compiling a device tensor that requires grad is
then refused, as before (``compiling.py``). Where the hooks say a GPU is there (``isAvailable``: the emulated arm on a
GPU machine), torch's own hooks already answer as a GPU build does: nothing is replaced, and ``available()`` is True.
"""

from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager
from typing import Any, Iterator

import torch

from seam.torch_cuda.device_guard import torch_library

#: ``at::detail::getCUDAHooks()``.
GET_HOOKS = "_ZN2at6detail12getCUDAHooksEv"
#: The run-time type names of the CUDA hooks a CPU-only and a CUDA build make.
HOOK_CLASSES = (b"N2at18CUDAHooksInterfaceE", b"N2at4cuda6detail9CUDAHooksE")
#: Places in the virtual table (after the complete and the deleting destructor).
IS_BUILT, IS_AVAILABLE, HAS_PRIMARY_CONTEXT = 2, 3, 4
#: The interface's virtual table, which libtorch_cpu exports (a CUDA build's ``CUDAHooks`` table is not exported; it
#: overrides the interface's functions, and every call through ``getCUDAHooks()`` is to one of those).
INTERFACE_TABLE = "_ZTVN2at18CUDAHooksInterfaceE"
#: ``dladdr1``'s request for the symbol's ELF entry (glibc's ``RTLD_DL_SYMENT``).
_RTLD_DL_SYMENT = 1
_POINTER = ctypes.sizeof(ctypes.c_void_p)
#: The torch versions whose ``AcceleratorHooksInterface`` was read for the places above. Only the first bounds
#: ``_find``: a newer torch is trusted to keep the places unmeasured (a moved slot would call the wrong function).
MEASURED = ((2, 11), (2, 13))

_BOOL_OF_THIS = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p)
_BOOL_OF_INDEX = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_int8)


def _built(this: int) -> bool:
    return True


def _has_primary_context(this: int, index: int) -> bool:
    return index == 0


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


class _Elf64Sym(ctypes.Structure):
    _fields_ = [("st_name", ctypes.c_uint32), ("st_info", ctypes.c_ubyte), ("st_other", ctypes.c_ubyte),
                ("st_shndx", ctypes.c_uint16), ("st_value", ctypes.c_uint64), ("st_size", ctypes.c_uint64)]


def _functions_of_the_interface(lib: Any) -> int | None:
    """How many virtual functions the interface has: its exported table's size (its ELF symbol's, which glibc's
    ``dladdr1`` hands back) less the offset to the top and the type's information that come first; None where the
    table or ``dladdr1`` is not there (then the hooks are not swapped)."""
    try:
        address = ctypes.addressof(ctypes.c_void_p.in_dll(lib, INTERFACE_TABLE))
        dladdr1 = ctypes.CDLL(None).dladdr1
    except (OSError, ValueError, AttributeError):
        return None
    dladdr1.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo), ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
    info, entry = _DlInfo(), ctypes.c_void_p()
    if not dladdr1(address, ctypes.byref(info), ctypes.byref(entry), _RTLD_DL_SYMENT) or not entry.value:
        return None
    return _Elf64Sym.from_address(entry.value).st_size // _POINTER - 2


class _Hooks:
    """The hooks object's table pointer, its own table's address, and the copy that says CUDA is built."""

    def __init__(self, pointer: Any, own: int, functions: int) -> None:
        self.pointer, self.own = pointer, own
        self.callbacks = (_BOOL_OF_THIS(_built), _BOOL_OF_INDEX(_has_primary_context))
        self.table = (ctypes.c_void_p * functions)(*(ctypes.c_void_p * functions).from_address(own))
        self.table[IS_BUILT] = ctypes.cast(self.callbacks[0], ctypes.c_void_p).value
        self.table[HAS_PRIMARY_CONTEXT] = ctypes.cast(self.callbacks[1], ctypes.c_void_p).value
        self.users = 0


_lock = threading.Lock()
#: What ``_find`` found, once: the hooks to swap, ``TORCHS_OWN`` (a GPU is there), or None (not reachable).
_found: list[Any] = []
#: A GPU is there: torch's hooks say CUDA is built and the device has a context, as they must.
TORCHS_OWN = "torch's own hooks"


def _class_name(table: int) -> bytes:
    typeinfo = ctypes.c_void_p.from_address(table - _POINTER).value
    name = ctypes.c_void_p.from_address(typeinfo + _POINTER).value if typeinfo else None
    return ctypes.string_at(name) if name else b""


def _find() -> Any:
    if tuple(int(p) for p in torch.__version__.split(".")[:2]) < MEASURED[0]:
        return None
    try:
        lib = torch_library("libtorch_cpu.so")
        get = getattr(lib, GET_HOOKS)
    except (OSError, AttributeError):
        return None
    get.restype = ctypes.c_void_p
    hooks = get()
    pointer = ctypes.c_void_p.from_address(hooks)
    own = pointer.value
    functions = _functions_of_the_interface(lib)
    if not own or _class_name(own).lstrip(b"*") not in HOOK_CLASSES or (functions or 0) <= HAS_PRIMARY_CONTEXT:
        return None
    if ctypes.cast(ctypes.c_void_p.from_address(own + IS_AVAILABLE * _POINTER).value, _BOOL_OF_THIS)(hooks):
        return TORCHS_OWN  # a GPU is there: torch's hooks are right as they are
    return _Hooks(pointer, own, functions)


def _state() -> Any:
    with _lock:
        if not _found:
            _found.append(_find())
        return _found[0]


def _hooks() -> _Hooks | None:
    """The hooks to swap, where a CPU-only build or a CUDA build without a GPU needs it; else None."""
    found = _state()
    return found if isinstance(found, _Hooks) else None


def available() -> bool:
    """Whether autograd's engine sees CUDA built while it traces (swapped in, or torch's own with a GPU there)."""
    return _state() is not None


@contextmanager
def cuda_is_built() -> Iterator[None]:
    """Inside: torch's C++ takes CUDA for the accelerator and the emulated device for the one with a context."""
    hooks = _hooks()
    if hooks is None:
        yield
        return
    with _lock:
        hooks.users += 1
        hooks.pointer.value = ctypes.addressof(hooks.table)
    try:
        yield
    finally:
        with _lock:
            hooks.users -= 1
            if not hooks.users:
                hooks.pointer.value = hooks.own
