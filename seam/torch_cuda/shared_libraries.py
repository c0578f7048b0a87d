"""NVML, the CUDA driver and NCCL, loaded through ``ctypes``, are the emulated device's while ``emulate_cuda()`` is on.

Code reaches the GPU around ``torch.cuda`` too: vLLM decides that it runs on CUDA by NVML (pynvml's ``nvmlInit`` and
``nvmlDeviceGetCount``), torch counts devices through NVML with ``CUDA_VISIBLE_DEVICES`` applied
(``_device_count_nvml``) and reads temperature, power, clocks and used memory through pynvml, PyTorch's
``test_lazy_init`` asks the driver itself, and vLLM's and SGLang's NCCL communicators call ``libnccl.so.2``. A CPU
machine has none of these libraries, so every such call failed under the emulation where a GPU answers. While the
emulation is on, ``ctypes.CDLL`` of ``libnvidia-ml.so*``, ``libcuda.so*`` or ``libnccl.so*`` (any folder;
``ctypes.cdll.LoadLibrary`` and ``ctypes.util.find_library`` too) gives an ``EmulatedLibrary``: its functions are
Python, take the ctypes arguments the C functions take (``byref`` targets are written, string buffers filled) and
return the library's status codes (``nvml.py``, ``driver_api.py``, ``nccl_library.py``). A function the emulation
has no answer for returns the library's "not supported"; no binding sees a missing symbol.

A binding may keep the library object for the process (pynvml does), past the block. So each function asks at every
call whether the emulation is on; when it is not, it calls the real library, loaded then with ctypes' own loader, or,
where there is none (a CPU machine), returns the library's "not found", as a load there would have failed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import sys
from typing import Any, Callable

#: Set True by the installation while the emulation is on (``install.py`` replaces it and puts False back).
ACTIVE = False

_ORIGINAL_INIT = ctypes.CDLL.__init__
_ORIGINAL_FIND = ctypes.util.find_library
#: File names of the emulated libraries (a folder before them is allowed) -> the library's key in ``_TABLES``.
_NAMES = ((re.compile(r"libnvidia-ml\.so(\.\d+)*$"), "nvml"), (re.compile(r"libcuda\.so(\.\d+)*$"), "cuda"),
          (re.compile(r"libnccl\.so(\.\d+)*$"), "nccl"))
#: What ``ctypes.util.find_library`` answers for them while emulating (on a GPU machine, their sonames).
_FOUND = {"nvidia-ml": "libnvidia-ml.so.1", "cuda": "libcuda.so.1", "nccl": "libnccl.so.2"}


class Library:
    """One emulated library: its functions by name, what an unknown one returns, and what a call returns once the
    emulation is off where the real library is missing."""

    def __init__(self, key: str, functions: dict[str, Callable[..., Any]], not_supported: int,
                 not_found: int) -> None:
        self.key = key
        self.functions = functions
        self.not_supported = not_supported
        self.not_found = not_found


_TABLES: dict[str, Library] = {}
#: The real libraries, loaded by name at the first call made while the emulation is off (None: no such library here).
_REAL: dict[str, Any] = {}


def _key(name: Any) -> str | None:
    if not isinstance(name, str):
        return None
    base = os.path.basename(name)
    return next((key for pattern, key in _NAMES if pattern.match(base)), None)


class Function:
    """A function of an emulated library. ``restype``, ``argtypes`` and ``errcheck`` can be set, as on a ctypes
    function; they are handed to the real function when the call goes there."""

    def __init__(self, key: str, library_name: str, name: str) -> None:
        self.key, self.library_name, self.__name__ = key, library_name, name
        self.restype: Any = ctypes.c_int
        self.argtypes: Any = None
        self.errcheck: Any = None

    def __call__(self, *args: Any) -> Any:
        library = _TABLES[self.key]
        if ACTIVE:
            answer = library.functions.get(self.__name__)
            return library.not_supported if answer is None else answer(*args)
        real = _real_function(self)
        return library.not_found if real is None else real(*args)

    def __repr__(self) -> str:
        return f"<emulated {self.__name__} of {self.library_name}>"


def _real_function(emulated: Function) -> Any:
    if emulated.library_name not in _REAL:
        try:
            _REAL[emulated.library_name] = ctypes.CDLL(emulated.library_name)
        except OSError:
            _REAL[emulated.library_name] = None
    library = _REAL[emulated.library_name]
    if library is None:
        return None
    real = getattr(library, emulated.__name__)
    real.restype = emulated.restype
    if emulated.argtypes is not None:
        real.argtypes = emulated.argtypes
    if emulated.errcheck is not None:
        real.errcheck = emulated.errcheck
    return real


class EmulatedLibrary(ctypes.CDLL):
    """What ``ctypes.CDLL`` gives for an emulated library while the emulation is on: a ``CDLL`` whose functions are
    ``Function`` objects (``CDLL.__getattr__`` keeps each on the object, as it keeps a C function)."""

    _key_: str

    def __getitem__(self, name: Any) -> Function:
        if not isinstance(name, str):
            raise AttributeError(f"{self._name}: functions of an emulated library are found by name, not {name!r}")
        return Function(self._key_, self._name, name)

    def __repr__(self) -> str:
        return f"<seamgate's emulated {self._name}>"


def _init(self: ctypes.CDLL, name: Any, *args: Any, **kwargs: Any) -> None:
    key = _key(name) if type(self) is ctypes.CDLL else None
    if key is None or key not in _TABLES:
        _ORIGINAL_INIT(self, name, *args, **kwargs)
        return
    self._name = name
    self._handle = 0
    self.__class__ = EmulatedLibrary
    self._key_ = key


def _find_library(name: str) -> str | None:
    return _FOUND.get(name) or _ORIGINAL_FIND(name)


def patches(*libraries: Library) -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement) for ``install.py``: ``libraries`` are emulated from now on."""
    _TABLES.update((library.key, library) for library in libraries)
    return [(sys.modules[__name__], "ACTIVE", True), (ctypes.CDLL, "__init__", _init),
            (ctypes.util, "find_library", _find_library)]


def write_string(buffer: Any, length: Any, text: str) -> bool:
    """Fill a C string buffer of ``length`` bytes with ``text`` and its NUL; False where it does not fit."""
    data = text.encode()
    if len(data) + 1 > value_of(length):
        return False
    ctypes.memmove(buffer, data + b"\0", len(data) + 1)
    return True


_BYREF = type(ctypes.byref(ctypes.c_int()))


def target(arg: Any) -> Any:
    """The object a pointer argument names: ``byref(x)`` and ``pointer(x)`` give ``x``."""
    if isinstance(arg, _BYREF):
        return arg._obj
    if isinstance(arg, ctypes._Pointer):
        return arg.contents
    return arg


def value_of(arg: Any) -> int:
    """A by-value integer argument: a Python int or a ctypes integer."""
    return int(getattr(arg, "value", arg))


def address_of(arg: Any) -> int | None:
    """A handle passed by value: a pointer, a ``c_void_p`` or an int."""
    if isinstance(arg, int):
        return arg
    if isinstance(arg, ctypes.c_void_p):
        return arg.value
    if isinstance(arg, ctypes._Pointer):
        return ctypes.cast(arg, ctypes.c_void_p).value
    return None


def set_address(arg: Any, address: int) -> None:
    """Write a handle through a pointer argument (its target is a pointer or a ``c_void_p``)."""
    ctypes.c_void_p.from_address(ctypes.addressof(target(arg))).value = address
