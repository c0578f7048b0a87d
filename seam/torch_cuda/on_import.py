"""Replacements in torch modules the emulation does not import itself: made when such a module is first imported.

Some of what the emulation replaces lives in modules that cost a second to import (dynamo's ``output_graph``), which
most programs never import: importing them at every ``emulate_cuda()`` entry, and in every child process that starts
emulated, would cost each of them that second. So each such module is watched for: if it is imported already when the
emulation begins, its replacements are made at once; else an import finder placed first on ``sys.meta_path`` lets
the import run as it would and makes them as the module finishes loading. Each replacement is handed to the
installation (``install.py``), which puts the module's own value back on the way out like any other; the finder
leaves ``sys.meta_path`` then too.

    watch({"torch._dynamo.output_graph": lambda module: [(module.WrapperBackend, "__call__", call)]}, replace)
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any, Callable, Mapping, Sequence

#: (owner, name, replacement), as in ``install._patches``.
Patch = tuple[Any, str, Any]
#: A watched module's replacements, made from the module once it is loaded.
Patches = Callable[[types.ModuleType], Sequence[Patch]]


class _ThenReplace(importlib.abc.Loader):
    """The module's own loader, then its replacements."""

    def __init__(self, loader: Any, then: Callable[[types.ModuleType], None]) -> None:
        self.loader = loader
        self.then = then

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self.loader.exec_module(module)
        self.then(module)


class _Watch(importlib.abc.MetaPathFinder):
    """Finds a watched module where the import system would (torch's modules are plain files) and wraps its loader."""

    def __init__(self, wanted: Mapping[str, Patches], replace: Callable[[Sequence[Patch]], None]) -> None:
        self.wanted = dict(wanted)
        self.replace = replace

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        patches = self.wanted.pop(name, None)
        if patches is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _ThenReplace(spec.loader, lambda module: self.replace(patches(module)))
        return spec


_WATCHES: list[_Watch] = []


def watch(wanted: Mapping[str, Patches], replace: Callable[[Sequence[Patch]], None]) -> None:
    """Have ``replace`` make each module's replacements: now for a module imported already, else at its import."""
    later = {}
    for name, patches in wanted.items():
        module = sys.modules.get(name)
        if module is not None:
            replace(patches(module))
        else:
            later[name] = patches
    if later:
        finder = _Watch(later, replace)
        _WATCHES.append(finder)
        sys.meta_path.insert(0, finder)


def stop() -> None:
    """Take every finder ``watch`` placed out of ``sys.meta_path`` (what they replaced is the installation's)."""
    while _WATCHES:
        finder = _WATCHES.pop()
        while finder in sys.meta_path:
            sys.meta_path.remove(finder)
