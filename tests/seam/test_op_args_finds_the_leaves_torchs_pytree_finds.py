"""``seam.op_args`` walks an operation's arguments and results to the same leaves as ``torch.utils._pytree``.

The emulator's recorder and the graph pools find the tensors of every captured operation through it, in place of
the pytree functions (about half of a recorded ``copy_``'s time, session 40): any leaf it finds differently would
save, alias or count the wrong memory. Trees as the dispatcher hands them (tuples, lists, dicts of tensors, scalars,
``None``, dtypes, sizes) and as operations return them (``torch.return_types`` structseqs), plus the containers it
hands to pytree (a namedtuple, an ``OrderedDict``)."""

from __future__ import annotations

import collections
from typing import Any

import pytest
import torch
from torch.utils._pytree import tree_leaves, tree_map

from seam.op_args import leaves, map_leaves, tensors

Pair = collections.namedtuple("Pair", "left right")
a, b, c = torch.ones(2), torch.zeros(3), torch.arange(4)

TREES: dict[str, Any] = {
    "an_args_tuple": (a, 2, 1.5, None, torch.float16, torch.device("cpu")),
    "a_list_of_tensors_and_nones": ([a, None, b], 0),
    "args_and_kwargs": ((a, [b, c]), {"out": c, "alpha": 2, "dims": [0, 1]}),
    "a_size_stays_one_leaf": (a, torch.Size([2, 3]), (1, 2)),
    "a_structseq_result": torch.max(torch.ones(2, 3), dim=1),
    "a_namedtuple": (Pair(a, [b]), c),
    "an_ordered_dict": collections.OrderedDict(x=a, y=(b, 3)),
    "nested_empty_containers": ((), [], {}, [[a]], {"k": ()}),
    "a_bare_tensor": a,
    "a_bare_scalar": 3,
}


@pytest.mark.parametrize("name", sorted(TREES))
def test_the_leaves_are_pytrees_in_its_order(name: str) -> None:
    tree = TREES[name]
    assert _ids(leaves(tree)) == _ids(tree_leaves(tree))
    assert _ids(tensors(tree)) == _ids([t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)])


@pytest.mark.parametrize("name", sorted(TREES))
def test_a_map_rebuilds_the_tree_pytree_rebuilds(name: str) -> None:
    tree = TREES[name]

    def doubled(value: Any) -> Any:
        return value * 2 if isinstance(value, torch.Tensor) else value

    mine, theirs = map_leaves(doubled, tree), tree_map(doubled, tree)
    assert _shape(mine) == _shape(theirs)
    for m, t in zip(tree_leaves(mine), tree_leaves(theirs)):
        assert torch.equal(m, t) if isinstance(m, torch.Tensor) else m == t


def _ids(found: list[Any]) -> list[Any]:
    return [id(leaf) if isinstance(leaf, torch.Tensor) else leaf for leaf in found]


def _shape(tree: Any) -> Any:
    """The tree's containers, each by its type, with its leaves left out."""
    if isinstance(tree, dict):
        return type(tree), [(k, _shape(v)) for k, v in tree.items()]
    if isinstance(tree, (tuple, list)) and not isinstance(tree, torch.Size):
        return type(tree), [_shape(v) for v in tree]
    return None
