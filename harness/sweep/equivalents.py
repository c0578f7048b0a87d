"""Reviewed equivalent mutants: survivors no test of behaviour can tell apart, each with its reason.

One YAML file (``[tool.seamgate.sweep] equivalents``, or ``--equivalents FILE``), the format
``scripts/mutation_sweep.py`` reads too::

    version: 1
    equivalent:
      - mutant: pkg.mod.x_f__mutmut_3          # mutmut's name
        line: "return max(FLOOR, 5 * (wall or 1.0))"   # the text of its + line(s), joined by " / "
        reason: >-
          Why no test can see it.

mutmut renumbers the mutants of a function when the function changes, so an entry pins the text of
the mutated line: an entry whose text no longer matches is STALE, and the mutant counts as a
survivor again until someone reviews it. An equivalent mutant leaves the score's denominator and is
listed apart. Only a survivor can be equivalent: a killed mutant listed here stays killed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import yaml

from harness.errors import ConfigError

_KEYS = ("mutant", "line", "reason")


@dataclass(frozen=True)
class Equivalent:
    """One reviewed entry."""

    mutant: str
    #: The mutated line(s) as the diff's ``+`` lines, stripped and joined by `` / ``.
    line: str
    reason: str
    #: ``file:line`` of the entry, for messages.
    where: str


def load_equivalents(path: Path | None) -> dict[str, Equivalent]:
    """mutant id -> entry; ``{}`` for no file. ``ConfigError`` naming the file, line and key for a bad one."""
    if path is None:
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the equivalent-mutants file ({exc.strerror}); fix the path "
                          "([tool.seamgate.sweep] equivalents or --equivalents)") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    data = yaml.safe_load(text) if root is not None else None
    if not isinstance(data, dict) or not isinstance(data.get("equivalent", []), list):
        raise ConfigError(f"{path}: expected a mapping with 'version: 1' and a list 'equivalent:' of entries "
                          "(mutant, line, reason)")
    nodes = _entry_nodes(root)
    found: dict[str, Equivalent] = {}
    problems = []
    for index, entry in enumerate(data.get("equivalent") or []):
        where = f"{path}:{nodes[index].start_mark.line + 1}" if index < len(nodes) else str(path)
        if not isinstance(entry, dict):
            problems.append(f"{where}: entry {index + 1} must be a mapping of mutant, line, reason")
            continue
        missing = [k for k in _KEYS if not isinstance(entry.get(k), str) or not entry[k].strip()]
        unknown = sorted(set(entry) - set(_KEYS))
        if missing or unknown:
            what = (f"lacks {', '.join(missing)}" if missing else "") + ("; " if missing and unknown else "") + \
                   (f"has unknown key(s) {', '.join(unknown)}" if unknown else "")
            problems.append(f"{where}: entry {index + 1} {what}; each entry needs mutant (mutmut's name), "
                            "line (the text of its + line) and reason")
            continue
        if entry["mutant"] in found:
            problems.append(f"{where}: mutant {entry['mutant']} is listed twice (first at {found[entry['mutant']].where})")
            continue
        found[entry["mutant"]] = Equivalent(entry["mutant"], entry["line"].strip(), entry["reason"].strip(), where)
    if problems:
        raise ConfigError("\n".join(problems))
    return found


def _entry_nodes(root: yaml.Node | None) -> list[yaml.Node]:
    if not isinstance(root, yaml.MappingNode):
        return []
    for key, value in root.value:
        if getattr(key, "value", None) == "equivalent" and isinstance(value, yaml.SequenceNode):
            return list(value.value)
    return []


def judge_equivalent(mutant: str, added: str, entries: Mapping[str, Equivalent]) -> tuple[bool, str]:
    """``(True, reason)`` when a reviewed entry explains the survivor ``mutant`` whose ``+`` lines are
    ``added``; ``(False, why)`` otherwise (``why`` names a STALE entry, or is empty)."""
    entry = entries.get(mutant)
    if entry is None:
        return False, ""
    if entry.line == added.strip():
        return True, entry.reason
    return False, (f"equivalence entry at {entry.where} is STALE: it pins {entry.line!r}, the mutant now writes "
                   f"{added!r}; review it again")
