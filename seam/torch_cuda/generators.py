"""Emulated CUDA generators: ``torch.Generator(device="cuda")`` and ``torch.cuda.default_generators``.

A CPU-only torch cannot make a CUDA generator (its C++ asks for ATen_cuda), and the argument parser of
``torch.randn(..., generator=g)`` takes nothing but a ``torch._C.Generator``. So the emulated one IS
one: a subclass whose C++ half is a CPU generator that only serves as the CPU kernel's scratch, and
whose state is a ``DeviceRng`` (CUDA's seed and Philox offset). Before each draw the scratch is
seeded from that state (``eager_draw``, ``record_draw``, ``replay_draw``), as the device mode's
CPU default generator is for the default device generator.

While ``torch.cuda`` is emulated, ``torch.Generator`` is ``Generator`` below: ``device="cuda"`` makes an
emulated one, anything else torch's own (``isinstance(g, torch.Generator)`` holds for both, through the
metaclass). ``torch.cuda.default_generators[0]`` is the device's default generator, whose state is
``runtime().rng``: the one ``torch.cuda.manual_seed`` seeds and device random operations draw from.

Worked example: ``g = torch.Generator(device="cuda"); g.manual_seed(1); x.normal_(generator=g)``. The
device mode sees ``aten.normal_`` with ``generator=`` a C++ wrapper of ``g``'s scratch; ``emulated``
finds ``g`` by the scratch's address, ``eager_draw`` seeds the scratch from ``g``'s (seed, offset), the
CPU kernel draws, and ``g``'s offset moves on as the CUDA kernel's would (``philox.step``).
"""

from __future__ import annotations

import contextlib
import random
import weakref
from typing import Any, Iterator

import torch

from seam.torch_cuda import cuda_errors
from seam.torch_cuda.ordinals import TORCH_DEVICE, as_cuda
from seam.torch_cuda.runtime import DEVICE, DeviceRng, runtime

_Base = torch._C.Generator
#: What ``createCUDAGenerator`` seeds a new CUDA generator with (``default_rng_seed_val``).
DEFAULT_RNG_SEED = 67280421310721
#: Emulated generators by the address of their C++ half: the device mode receives a fresh Python
#: wrapper of that half, never the object the caller made.
_BY_CDATA: "weakref.WeakValueDictionary[int, Generator]" = weakref.WeakValueDictionary()


class _GeneratorMeta(type(_Base)):  # type: ignore[misc]
    """Lets ``Generator`` stand in for ``torch.Generator``: torch's own generators are instances too."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Generator:
            return type(_Base).__instancecheck__(_Base, instance)
        return super().__instancecheck__(instance)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        if cls is Generator:
            return type(_Base).__subclasscheck__(_Base, subclass)
        return super().__subclasscheck__(subclass)


def _refuse_if_capturing(what: str) -> None:
    rt = runtime()
    if rt.capture_of(rt.current_stream()._id) is not None:
        raise cuda_errors.torch_error(cuda_errors.not_capturing(what), f"{what} while the stream captures")


class Generator(_Base, metaclass=_GeneratorMeta):
    """``torch.Generator`` under emulation: ``device="cuda"`` makes an emulated CUDA generator."""

    def __new__(cls, device: Any = "cpu") -> Any:
        parsed = TORCH_DEVICE(as_cuda(device))  # a bare ordinal is the accelerator's, as on a CUDA build
        if parsed.type != "cuda":
            return _Base(device)
        if parsed.index not in (None, 0):
            raise RuntimeError("The device_index is invalid.")
        _refuse_if_capturing("Cannot construct a new CUDAGeneratorImpl")
        made = cls._with_state(DeviceRng(DEFAULT_RNG_SEED))
        # The device as given: ``"cuda"`` has no index (H200, torch 2.11: ``device(type='cuda')``), as
        # torch's CUDA generator keeps the index it was made with; the default generators have theirs.
        made._device = parsed
        return made

    @classmethod
    def _with_state(cls, state: DeviceRng | None) -> "Generator":
        """An emulated generator on ``state`` (None: the device's default, ``runtime().rng``)."""
        self = _Base.__new__(cls)
        self._own = state
        self._device = DEVICE
        _BY_CDATA[self._cdata] = self
        return self

    # -- the state: one object, shared by graphsafe_get_state, swapped by graphsafe_set_state ----------
    @property
    def _state(self) -> DeviceRng:
        return self._own if self._own is not None else runtime().rng

    @_state.setter
    def _state(self, state: DeviceRng) -> None:
        if self._own is None:
            runtime().rng = state  # the default generator: the device's RNG follows it
        else:
            self._own = state

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return self._device

    def manual_seed(self, seed: int) -> "Generator":  # type: ignore[override]
        state = self._state
        rt = runtime()
        if rt.capture_of(rt.current_stream()._id) is not None and int(seed) & 0xFFFFFFFFFFFFFFFF != state.seed:
            raise cuda_errors.torch_error(cuda_errors.SEED_IN_CAPTURE, "a new seed while the stream captures")
        state.manual_seed(int(seed))
        return self

    def seed(self) -> int:  # type: ignore[override]
        _refuse_if_capturing("Cannot call CUDAGeneratorImpl::seed")
        new = random.getrandbits(63)
        self._state.manual_seed(new)
        return new

    def initial_seed(self) -> int:  # type: ignore[override]
        return self._state.seed

    def get_state(self) -> torch.Tensor:  # type: ignore[override]
        return self._state.get_state()

    def set_state(self, new_state: torch.Tensor) -> "Generator":  # type: ignore[override]
        self._state.set_state(new_state)
        return self

    def get_offset(self) -> int:  # type: ignore[override]
        return self._state.offset

    def set_offset(self, offset: int) -> "Generator":  # type: ignore[override]
        if int(offset) % 4:
            raise RuntimeError("offset must be a multiple of 4")
        self._state.offset = int(offset)
        return self

    def graphsafe_get_state(self) -> "Generator":  # type: ignore[override]
        """A generator on this one's state object (not a copy): what either draws, both see."""
        return Generator._with_state(self._state)

    def graphsafe_set_state(self, other: Any) -> "Generator":  # type: ignore[override]
        found = emulated(other)
        if found is None:
            raise RuntimeError("Expected a CUDA Generator")
        self._state = found._state
        return self

    def clone_state(self) -> "Generator":  # type: ignore[override]
        return Generator._with_state(self._state.clone())

    def __reduce__(self) -> Any:
        state = self._state
        return _rebuild, (state.seed, state.offset)


def _rebuild(seed: int, offset: int) -> Generator:
    """Unpickle an emulated CUDA generator (a new one, at the pickled seed and offset)."""
    return Generator._with_state(DeviceRng(seed, offset))


_default: Generator | None = None


def default_generator() -> Generator:
    """``torch.cuda.default_generators[0]``: its state is ``runtime().rng``, whichever runtime is current."""
    global _default
    if _default is None:
        _default = Generator._with_state(None)
    return _default


def emulated(generator: Any) -> Generator | None:
    """The emulated CUDA generator behind ``generator`` (the caller's object or torch's wrapper of it)."""
    if generator is None:
        return None
    return _BY_CDATA.get(getattr(generator, "_cdata", None))  # type: ignore[arg-type]


def _drawn_by(kwargs: dict[str, Any]) -> tuple[DeviceRng, Any]:
    """(the device state a device operation draws from, the CPU generator its kernel will use)."""
    given = kwargs.get("generator")
    if given is None:
        return runtime().rng, None
    found = emulated(given)
    if found is None:
        raise RuntimeError(f"Expected a 'cuda' device type for generator but found '{given.device.type}'")
    return found._state, given


def refuse_device_generator_on_host(kwargs: dict[str, Any]) -> None:
    """A host kernel given an emulated CUDA generator: refused, in torch's words."""
    if emulated(kwargs.get("generator")) is not None:
        raise RuntimeError("Expected a 'cpu' device type for generator but found 'cuda'")


@contextlib.contextmanager
def _seeded(kernel_generator: Any, seed: int) -> Iterator[None]:
    """The CPU kernel draws as the device would at ``seed``: from the given generator's scratch, or
    from the CPU's default generator, which is left as it was."""
    if kernel_generator is not None:
        _Base.manual_seed(kernel_generator, seed)
        yield
        return
    cpu = torch.random.default_generator
    saved = cpu.get_state()
    cpu.manual_seed(seed)
    try:
        yield
    finally:
        cpu.set_state(saved)


def eager_draw(kwargs: dict[str, Any]) -> tuple[DeviceRng, contextlib.AbstractContextManager[None]]:
    """One random device operation outside a capture: (its generator's state, the context to run it
    in, at that state's offset; ``DeviceRng.advance`` then moves the offset on)."""
    state, kernel_generator = _drawn_by(kwargs)
    return state, _seeded(kernel_generator, state.next_draw_seed())


def record_draw(kwargs: dict[str, Any]) -> tuple[DeviceRng, int, contextlib.AbstractContextManager[None]]:
    """One random device operation recorded in a capture: (its state, its offset inside the graph,
    the context to record it in). Refused when its generator is not registered with the graph."""
    state, kernel_generator = _drawn_by(kwargs)
    at = state.capture_draw()
    return state, at, _seeded(kernel_generator, state.replay_seed(at))


def replay_draw(state: DeviceRng, at: int, kwargs: dict[str, Any]) -> contextlib.AbstractContextManager[None]:
    """A recorded draw re-issued by a replay: at the replay's base offset plus its own."""
    return _seeded(kwargs.get("generator"), state.replay_seed(at))
