"""The leaves of an operation's arguments and results, walked in one pass.

torch's dispatcher hands a dispatch mode an operation's arguments as tuples, lists and dicts of tensors and plain
values (never a user's pytree node), and an ATen operation returns a tensor, a tuple or a ``torch.return_types``
structseq of them. ``torch.utils._pytree`` finds the same leaves through a generic lookup of each node's type (is it
a namedtuple, a registered class, ...) that costs more than the walk itself: recording one ``copy_`` in a capture
spent about half its time there (session 40: ~80 us a recorded ``copy_``, ~300 us the first in a process). These
walk the plain containers themselves and hand anything else that is a container (a namedtuple, an ``OrderedDict``)
to ``torch.utils._pytree``, so each gives what the pytree function of the same name gives.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch.utils import _pytree

_Tensor = torch.Tensor


def leaves(tree: Any) -> list[Any]:
    """Every leaf of ``tree`` in order: ``torch.utils._pytree.tree_leaves``."""
    out: list[Any] = []
    _walk(tree, out)
    return out


def _walk(value: Any, out: list[Any]) -> None:
    kind = type(value)
    if kind is tuple or kind is list:
        for item in value:
            if isinstance(item, _Tensor):
                out.append(item)
            else:
                _walk(item, out)
    elif kind is dict:
        for item in value.values():
            _walk(item, out)
    elif isinstance(value, (tuple, list, dict)) and not _pytree.tree_is_leaf(value):  # a structseq, a namedtuple
        out.extend(_pytree.tree_leaves(value))
    else:
        out.append(value)


def tensors(tree: Any) -> list[torch.Tensor]:
    """The tensors among the leaves of ``tree``, in order."""
    return [leaf for leaf in leaves(tree) if isinstance(leaf, _Tensor)]


def map_leaves(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with each leaf replaced by ``fn(leaf)``: ``torch.utils._pytree.tree_map``."""
    kind = type(value := tree)
    if kind is tuple:
        return tuple([map_leaves(fn, item) for item in value])
    if kind is list:
        return [map_leaves(fn, item) for item in value]
    if kind is dict:
        return {key: map_leaves(fn, item) for key, item in value.items()}
    if isinstance(value, (tuple, list, dict)):
        return _pytree.tree_map(fn, value)
    return fn(value)
