"""An aten overload called through torch's generated Python binding where that is provably the same call.

Inside the device mode every operation is called again (``func._op(*args, **kwargs)``): the boxed call, which
builds a stack from the schema, costs 0.4 to 1.7 us more per operation than the generated binding
(``torch.t``, ``torch.native_layer_norm``, ``torch._C._nn.gelu``), a fifth of what the emulator adds to an eager
forward (docs/benchmarks.md, session 20). The binding picks an overload by the arguments it is given, so it is used
for an overload only when no other can be picked:

1. **Static.** The overload writes none of its arguments (calling it twice is harmless, see 2), is in ``aten``,
   and every other overload of its packet that takes or gives a tensor and is not an ``out=`` variant needs an argument
   this call never passes (a positional one past the overload's own positionals, or a keyword one of another
   name): ``addmm.dtype`` needs ``out_dtype``, so ``addmm.default`` qualifies; ``add.Scalar`` takes what
   ``add.Tensor`` takes, so neither does. (Overloads with no tensor in or out, TorchScript's ``add.int``, have no
   Python binding.) The binding is the function of the overload's own name in ``torch._C._VariableFunctions``,
   ``_nn``, ``_fft``, ``_linalg`` or ``_special``; methods are never used. An overload with a ``reduction``
   argument keeps torch's call: the dispatcher leaves out an argument equal to its schema's default, and the
   binding's default for ``reduction`` is written by name (``at::Reduction::Mean``), which torch's argument parser
   reads as the number 0 (``none``), so ``mse_loss(x, y)`` through ``torch._C._nn.mse_loss`` came back unreduced.
2. **Seen, at the first call.** The first call goes through the binding under a recording mode that lets the
   overload itself run and nothing else: if the binding reached exactly this overload, once, and returned, it
   serves every later call; otherwise (another operation reached, a hand-written binding, a decomposition, an
   error) the overload is called as before, now and for good (the error, if any, is then torch's own).

``call_of(func)`` gives the callable: a binding, or ``func._op``, or (before the first call) the checker.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_MODULES = tuple(getattr(torch._C, name) for name in ("_VariableFunctions", "_nn", "_fft", "_linalg", "_special")
                 if hasattr(torch._C, name))


def _writes(schema: Any) -> bool:
    return any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def _of_tensors(schema: Any) -> bool:
    """Whether an overload takes or gives a tensor (TorchScript's ``add.int`` does neither: no Python binding)."""
    return any("Tensor" in str(a.type) for a in (*schema.arguments, *schema.returns))


def _may_take_the_call_of(other: Any, schema: Any) -> bool:
    """Whether ``other`` could parse a call made with ``schema``'s arguments (its positionals by position, its
    keyword-only ones by name): every argument ``other`` requires is one such a call can give."""
    positionals = sum(1 for a in schema.arguments if not a.kwarg_only)
    names = {a.name for a in schema.arguments if a.kwarg_only}
    for i, arg in enumerate(other.arguments):
        if arg.has_default_value():
            continue
        if not ((not arg.kwarg_only and i < positionals) or arg.name in names):
            return False
    return True


def binding_of(func: Any) -> Callable[..., Any] | None:
    """The generated Python binding that can only mean ``func`` (rule 1 of the module docstring), or None."""
    schema = func._schema
    if func.namespace != "aten" or _writes(schema) or any(a.name == "reduction" for a in schema.arguments):
        return None
    packet = func._overloadpacket
    for name in packet.overloads():
        other = getattr(packet, name)
        if other is func or _writes(other._schema) or not _of_tensors(other._schema):
            continue
        if _may_take_the_call_of(other._schema, schema):
            return None
    for module in _MODULES:
        binding = getattr(module, packet.__name__, None)
        if binding is not None:
            return binding
    return None


class _Elsewhere(Exception):
    """The binding reached an operation other than the overload, or the overload again (nothing more has run)."""


class _Seen(TorchDispatchMode):
    """Lets ``func`` run once and nothing else: what a binding reaches, checked before anything runs."""

    def __init__(self, func: Any) -> None:
        super().__init__()
        self.func, self.ran = func, False

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        if func is not self.func or self.ran:
            raise _Elsewhere
        self.ran = True
        return func._op(*args, **(kwargs or {}))


class FastCall:
    """The callable for one overload, decided at its first call (rule 2); ``call`` is what the hot path calls."""

    __slots__ = ("func", "binding", "call")

    def __init__(self, func: Any) -> None:
        self.func = func
        self.binding = binding_of(func)
        self.call: Callable[..., Any] = func._op if self.binding is None else self._first

    def _first(self, *args: Any, **kwargs: Any) -> Any:
        seen = _Seen(self.func)
        try:
            with seen:
                result = self.binding(*args, **kwargs)  # type: ignore[misc]
        except Exception:  # noqa: BLE001 - another operation reached, or the binding refused: torch's call decides
            return self._given_up(*args, **kwargs)
        if not seen.ran:
            return self._given_up(*args, **kwargs)
        self.call = self.binding  # type: ignore[assignment]
        return result

    def _given_up(self, *args: Any, **kwargs: Any) -> Any:
        """The overload called as torch calls it, now and from now on (it writes nothing: the binding may have run it
        once already, and running it again is harmless)."""
        self.call = self.func._op
        return self.func._op(*args, **kwargs)
