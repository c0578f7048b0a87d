"""Named selections: a list of test paths defined once (``selections:`` in any gate file) and used
by name (``@name``) in any gate's ``select``, so a new test file is added in one place.

    version: 1
    selections:
      seam-and-drivers: [tests/seam, tests/drivers/test_dense_seam.py, ...]
    gates:
      - id: g2-isolation-dense
        select: ["@seam-and-drivers"]

Names are shared by every gate file of one run (a name defined twice is an error naming both
places), and an entry may itself use a name defined anywhere. A gate's ``select`` is expanded in
place, in order, without repeats: the gate then means exactly what the written-out list meant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from mutations.document import Node
from mutations.shape import ID_PATTERN, ShapeChecker, describe, suggestion

#: A ``select`` entry naming a selection starts with this.
PREFIX = "@"


@dataclass
class Selections:
    """Every named selection of a run's gate files: name -> (entries, where it was defined)."""

    defined: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def read(self, node: Node | None, shape: ShapeChecker, check: Callable[[str, Node], bool]) -> None:
        """Read a file's ``selections:`` mapping; ``check(entry, node)`` validates each plain entry."""
        if node is None:
            return
        if not node.is_mapping:
            shape.add(node, "selections", f"'selections' must map names to lists of test paths, got "
                                          f"{describe(node.value)}")
            return
        for key, value in node.value.items():
            where = f"{shape.display}:{value.line}:{value.column}"
            if not isinstance(key, str) or not ID_PATTERN.match(key):
                shape.add(value, "selections", f"selection name {key!r} must match {ID_PATTERN.pattern}")
                continue
            items = shape.string_list(value, f"selection {key!r}", "entries")
            if items is None:
                continue
            if key in self.defined:
                self.problems.append(f"{where}: selection {key!r} is already defined at {self.defined[key][1]}; "
                                     "selection names are shared by every gate file: rename one")
                continue
            good = [entry for entry, item in items if entry.startswith(PREFIX) or check(entry, item)]
            if len(good) == len(items):
                self.defined[key] = (tuple(good), where)

    def expand(self, entries: list[tuple[str, Node]], shape: ShapeChecker, context: str) -> list[tuple[str, Node]] | None:
        """``entries`` with every ``@name`` replaced by its selection, in order, without repeats."""
        out: dict[str, Node] = {}
        ok = True
        for entry, node in entries:
            if not entry.startswith(PREFIX):
                out.setdefault(entry, node)
                continue
            expanded = self._resolve(entry[len(PREFIX):], ())
            if isinstance(expanded, str):
                shape.add(node, context, expanded)
                ok = False
                continue
            for value in expanded:
                out.setdefault(value, node)
        return list(out.items()) if ok else None

    def _resolve(self, name: str, seen: tuple[str, ...]) -> tuple[str, ...] | str:
        if name in seen:
            return f"selection {PREFIX}{name} uses itself ({' -> '.join(PREFIX + n for n in (*seen, name))}); break the cycle"
        if name not in self.defined:
            known = ", ".join(PREFIX + n for n in sorted(self.defined)) or "none defined"
            return (f"unknown selection {PREFIX}{name}{suggestion(name, list(self.defined))} (known: {known}); "
                    f"define it under 'selections:' in a gate file, or write the paths out")
        out: list[str] = []
        for entry in self.defined[name][0]:
            if entry.startswith(PREFIX):
                inner = self._resolve(entry[len(PREFIX):], (*seen, name))
                if isinstance(inner, str):
                    return inner
                out += inner
            else:
                out.append(entry)
        return tuple(dict.fromkeys(out))
