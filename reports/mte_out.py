"""mutation-testing-elements report: a sweep in the schema Stryker's HTML report and dashboard read.

Schema version 2 (``stryker-mutator/mutation-testing-elements``, ``packages/report-schema``): a
``files`` object keyed by path, each with its language, its full unmutated source and its mutants
(id, mutatorName, location with 1-based start and end, status, killedBy, coveredBy), and the test
files whose cases killed or covered a mutant. Our statuses map onto theirs:

==============  ==============  ==========================================================
seamgate        schema          why
==============  ==============  ==========================================================
killed          Killed          every killer is listed (Stryker lists the first)
survived        Survived
no_coverage     NoCoverage
timeout         Timeout
error           RuntimeError    the mutant broke import or collection when the tests ran
equivalent      Ignored         out of the score; ``statusReason`` says why (reviewed)
owed            Ignored         not run; ``statusReason`` says why (``Pending`` is newer
                                than some viewers)
==============  ==============  ==========================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from reports.mutants import MutantOutcome, SweepResult
from reports.outcome import counted

SCHEMA_VERSION = "2"
STATUS = {"killed": "Killed", "survived": "Survived", "no_coverage": "NoCoverage", "timeout": "Timeout",
          "error": "RuntimeError", "equivalent": "Ignored", "owed": "Ignored"}
#: Thresholds the viewers colour a score by (Stryker's defaults).
THRESHOLDS = {"high": 80, "low": 60}


def location(m: MutantOutcome) -> dict[str, Any]:
    """1-based start and an end that is never before the start (the schema wants both)."""
    start = {"line": max(1, m.line), "column": max(1, m.column)}
    end_line = max(m.end_line, start["line"])
    end_column = m.end_column if m.end_column and end_line > start["line"] else max(m.end_column, start["column"] + 1)
    return {"start": start, "end": {"line": end_line, "column": max(1, end_column)}}


def replacement(m: MutantOutcome) -> str | None:
    """What the mutant put in place of its location's text (``None``: the diff adds nothing).

    For a one-line change (one ``-`` and one ``+`` line) it is the mutated line's text between what
    the location leaves alone on either side (``a + b`` -> ``a - b``; an empty location is an
    insertion, a located text that is gone a deletion: ``""``); otherwise the added lines, stripped
    and joined.
    """
    lines = m.diff.splitlines()
    removed = [line[1:] for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
    if not added:
        return None
    if len(removed) == len(added) == 1 and m.end_line in (0, m.line) and m.end_column >= m.column >= 1:
        old, new = removed[0], added[0]
        prefix, suffix = old[: m.column - 1], old[m.end_column - 1:]
        if new.startswith(prefix) and new.endswith(suffix) and len(new) >= len(prefix) + len(suffix):
            return new[len(prefix): len(new) - len(suffix)]
    return "\n".join(line.strip() for line in added)


def mutant_to_mte(m: MutantOutcome) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": m.id, "mutatorName": m.mutator or "unknown", "location": location(m), "status": STATUS[m.status],
        "killedBy": list(m.killers), "coveredBy": list(m.covered_by),
    }
    text = replacement(m)
    if text is not None:
        data["replacement"] = text
    if m.reason:
        data["statusReason"] = f"{m.status}: {m.reason}"
    elif m.status == "killed":
        data["statusReason"] = f"killed by {counted(len(m.killers), 'case')}"
    if m.wall:
        data["duration"] = round(m.wall * 1000.0, 1)
    return data


def _language(path: str) -> str:
    suffix = Path(path).suffix
    return "python" if suffix in (".py", ".pyi") else suffix[1:] or "text"


def _test_files(sweep: SweepResult) -> dict[str, Any]:
    files: dict[str, list[dict[str, str]]] = {}
    seen: set[str] = set()
    for m in sweep.mutants:
        for nodeid in (*m.killers, *m.covered_by):
            if nodeid not in seen:
                seen.add(nodeid)
                path, _, name = nodeid.partition("::")
                files.setdefault(path, []).append({"id": nodeid, "name": name or nodeid})
    return {path: {"tests": tests} for path, tests in sorted(files.items())}


def sweep_to_mte(sweep: SweepResult, read_source: Callable[[str], str | None]) -> dict[str, Any]:
    """The report for ``sweep``; ``read_source(path)`` gives a mutated file's unmutated text (``None``: unknown)."""
    files: dict[str, Any] = {}
    for m in sweep.mutants:
        entry = files.get(m.file)
        if entry is None:
            entry = files[m.file] = {"language": _language(m.file), "source": read_source(m.file) or "", "mutants": []}
        entry["mutants"].append(mutant_to_mte(m))
    return {
        "schemaVersion": SCHEMA_VERSION, "thresholds": dict(THRESHOLDS), "files": files,
        "testFiles": _test_files(sweep),
        "framework": {"name": "seamgate", "dependencies": {"mutmut": sweep.generator} if sweep.generator else {}},
        "config": {"scope": list(sweep.scope), "arm": sweep.arm},
    }


def source_reader(root: Path) -> Callable[[str], str | None]:
    """Read mutated files from the project at ``root`` (the tree the sweep ran on)."""
    def read(rel: str) -> str | None:
        path = root / rel
        try:
            return path.read_text(encoding="utf-8") if path.is_file() else None
        except (OSError, UnicodeDecodeError):
            return None
    return read
