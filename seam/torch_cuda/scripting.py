"""TorchScript under the emulation: a torch function the emulation replaced scripts as the operation it stands for.

``torch.jit.script`` resolves a call of a torch function by identity in its table of builtins
(``torch.jit._builtins``: ``torch.randn`` is ``aten::randn``). The emulation replaces some of those names with
Python wrappers (a bare device ordinal read as ``cuda:0``: ``ordinals.py``), which the table does not hold, so
TorchScript tried to compile the wrapper's source and failed ("module, class, method, function, traceback, frame,
or code object was expected, got builtin_function_or_method": PyTorch's ``test_autocast_cat_jit``). While the
emulation lasts each such wrapper is entered in the table under its original's operation; a scripted function
then calls the operation itself, which the device mode still sees. Leaving the emulation takes the entries out.
"""

from __future__ import annotations

from typing import Any, Iterable

import torch.jit._builtins as _builtins


def register(replaced: Iterable[tuple[Any, Any]]) -> list[int]:
    """Enter each replacement whose original is a TorchScript builtin under the original's operation; the ids
    entered (for ``unregister``)."""
    table = _builtins._get_builtin_table()
    entered: list[int] = []
    for original, replacement in replaced:
        operation = table.get(id(original))
        if operation is not None and id(replacement) not in table:
            table[id(replacement)] = operation
            entered.append(id(replacement))
    return entered


def unregister(entered: Iterable[int]) -> None:
    table = _builtins._get_builtin_table()
    for key in entered:
        table.pop(key, None)
