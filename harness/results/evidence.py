"""Evidence: what another machine measured for an arm this one cannot run, and whether it is STALE.

A GPU arm is OWED on a machine without the GPU. When ``evidence/`` (``[tool.seamgate] evidence``)
holds a JSON report written by ``seamgate run --json`` on a machine that HAD it, the runner reads
the recorded outcome of that gate and arm with its provenance (device, capability, driver, torch,
commit, the sha256 of what the verdict depends on, and the files that hash read in full):

* the same hash as this tree gives over the same files: the recorded verdict stands, the message
  names the device, commit and evidence file (a measurement of THIS code);
* another hash: STALE — a measurement of older code is never carried forward;
* no record: the arm stays OWED with its reason.

Of several records of one gate and arm (``load_records`` keeps them in file-name order, each
file's outcomes in their order), the LAST whose hash matches counts; a record that does not match
never outweighs one that does. Only when none matches is the arm STALE, named after the last record.

What a record's hash covers (``evidence_hash``; docs/runner.md, "Evidence"): in full, the files the
gate's cases reached on the measuring machine (``harness/run/hashing.py``), the mutated file, and
every test file its ``select`` reaches with the ``conftest.py`` files above them; every other ``.py``
file under the code roots as its skeleton (what importing it runs: ``harness/results/source_hash.py``);
the gate record; its mutation's catalog entry. Files are read without comments, docstrings and blank
lines. The record lists the files read in full, so the reader hashes the SAME files of its own tree
(a listed file gone: another hash). A record with no list (an older seamgate's) is checked against
``gate_hash``: every code file byte for byte, as it was written. A hash over no file at all is
refused: it would name nothing and match any other empty hash.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from harness.gates.model import Gate
    from mutations.model import Mutation

from harness.errors import SeamgateUsageError
from harness.results.source_hash import SourceReader
from reports.outcome import ArmOutcome, Provenance, Verdict


class EvidenceError(SeamgateUsageError):
    """An evidence file that is not a seamgate JSON report."""


@dataclass(frozen=True)
class Record:
    """One gate and arm as a JSON report recorded it."""

    gate: str
    arm: str
    verdict: Verdict
    message: str
    provenance: Provenance
    #: The evidence file, relative to the project root.
    source: str


def evidence_files(project_root: Path, paths: Iterable[str]) -> list[tuple[Path, bool]]:
    """The ``*.json`` files under the configured evidence paths, each with whether it was NAMED
    (a named file must be a report; a folder also holds other JSON, such as bench figures)."""
    found: list[tuple[Path, bool]] = []
    for entry in paths:
        path = project_root / entry
        if path.is_dir():
            found += [(p, False) for p in sorted(path.glob("*.json"))]
        elif path.is_file():
            found.append((path, True))
    return found


def load_records(project_root: Path, paths: Iterable[str]) -> dict[tuple[str, str], list[Record]]:
    """Every recorded (gate, arm) outcome that carries provenance, by gate and arm (each file read once)."""
    records: dict[tuple[str, str], list[Record]] = {}
    for path, named in evidence_files(project_root, paths):
        for record in _read(path, project_root, named):
            records.setdefault((record.gate, record.arm), []).append(record)
    return records


def _read(path: Path, project_root: Path, named: bool) -> list[Record]:
    shown = path.relative_to(project_root).as_posix() if path.is_relative_to(project_root) else str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        is_report = isinstance(data, dict) and "outcomes" in data and "schema" in data
        if not named and not is_report:
            return []  # other JSON beside the reports (bench figures, G1 tables)
        if isinstance(data, dict) and "outcomes" in data and "schema" not in data:
            raise ValueError("no 'schema' key")
        records = [Record(o["gate"], o["arm"], Verdict(o["verdict"]), o.get("message", ""),
                          Provenance.from_json(o["provenance"]), shown)
                   for o in data["outcomes"] if o.get("provenance")]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EvidenceError(f"{shown}: not a seamgate JSON report ({type(exc).__name__}: {exc}); "
                            "evidence files are written by `seamgate run --json FILE` — fix or remove it") from exc
    for r in records:
        if r.provenance.hashed_files == ():
            raise EvidenceError(f"{shown}: the record of gate {r.gate} arm {r.arm} says its code hash read no file "
                                "(hashed_files is empty): a hash over nothing matches nothing it measured; "
                                "re-measure that arm, or remove the record")
    return records


def resolve(outcome: ArmOutcome, records: list[Record], current: Callable[[Provenance], str]) -> ArmOutcome:
    """An OWED outcome, judged again in the light of what was measured elsewhere.

    ``current(p)`` is this tree's hash over what the record of provenance ``p`` hashed (its files)."""
    if outcome.verdict is not Verdict.OWED or not records:
        return outcome
    same = [r for r in records if not r.provenance.stale_against(current(r.provenance))]
    if same:
        r = same[-1]
        # `facts["evidence"]` marks the verdict as taken from a record (the table shows "PASS (evidence <commit>)").
        return replace(outcome, verdict=r.verdict, provenance=r.provenance,
                       facts={**outcome.facts, "evidence": {"commit": r.provenance.commit, "source": r.source}},
                       message=f"measured on {_where(r.provenance)} [{r.source}]: {r.message}")
    r = records[-1]
    return replace(outcome, verdict=Verdict.STALE, provenance=r.provenance,
                   message=(f"STALE: {r.verdict.value} measured on {_where(r.provenance)} [{r.source}] for code "
                            f"{r.provenance.code_hash[:12]}, the code under test is now {current(r.provenance)[:12]}; "
                            f"re-run this arm on that hardware ({outcome.message})"))


def _where(p: Provenance) -> str:
    parts = [p.device or "?"]
    if p.capability:
        parts.append(f"sm {p.capability}")
    if p.driver:
        parts.append(f"driver {p.driver}")
    if p.torch:
        parts.append(f"torch {p.torch}")
    parts.append(f"commit {p.commit[:10] or 'unknown'}")
    return ", ".join(parts)


class EmptyHashError(SeamgateUsageError):
    """A code hash was asked for over zero files."""


def _canonical(value: Any) -> Any:
    """Plain JSON data for a gate or mutation record; where it was written (origin) is left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)
                if f.name not in ("origin", "location")}
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_canonical(v) for v in value]
        return sorted(items, key=json.dumps) if isinstance(value, (set, frozenset)) else items
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def selected_test_files(project_root: Path, select: Iterable[str]) -> list[str]:
    """The ``.py`` files a gate's ``select`` reaches, and the ``conftest.py`` files above each."""
    files: set[str] = set()
    for entry in select:
        path = project_root / entry.split("::", 1)[0]
        found = sorted(path.rglob("*.py")) if path.is_dir() else ([path] if path.is_file() else [])
        for f in found:
            files.add(f.relative_to(project_root).as_posix())
            for parent in f.parents:
                if parent == project_root.parent or not parent.is_relative_to(project_root):
                    break
                if (parent / "conftest.py").is_file():
                    files.add((parent / "conftest.py").relative_to(project_root).as_posix())
    return sorted(f for f in files if "__pycache__" not in f)


def gate_hash(project_root: Path, gate: "Gate", mutation: "Mutation | None", code_files: Iterable[str],
              read: Callable[[Path], bytes] = Path.read_bytes) -> str:
    """The hash of a record with no file list (an older seamgate's): every file of ``code_files`` and every
    selected test file byte for byte, the gate, its mutation; ``EmptyHashError`` over no file.

    ``read`` reads one file's bytes: the runner passes a memoized reader, so hashing every gate and arm
    of a run reads each file once."""
    files = sorted(set(code_files) | set(selected_test_files(project_root, gate.select)))
    if not files:
        raise EmptyHashError(f"gate {gate.id}: the code hash would cover no file (no code under test, no selected "
                             "test file); check [tool.seamgate] and the gate's select")
    digest = hashlib.sha256()
    for rel in files:
        digest.update(rel.encode() + b"\0" + read(project_root / rel) + b"\0")
    digest.update(json.dumps(_canonical(gate), sort_keys=True).encode() + b"\0")
    digest.update(json.dumps(_canonical(mutation), sort_keys=True).encode())
    return digest.hexdigest()


#: Marks a hash as ``evidence_hash``'s, so that it can never equal one of ``gate_hash``.
_SCHEME = b"seamgate evidence hash 2\0"


def evidence_hash(project_root: Path, gate: "Gate", mutation: "Mutation | None", hashed_files: Iterable[str],
                  code_files: Iterable[str], reader: SourceReader | None = None) -> tuple[str, tuple[str, ...]]:
    """sha256 of what ``gate``'s verdict depends on (module docstring), and the files it read in full.

    ``hashed_files`` (and the gate's selected test files) are read in full, every other file of
    ``code_files`` as its skeleton; all without comments, docstrings and blank lines. A file gone
    hashes as gone. ``EmptyHashError`` when nothing would be read in full."""
    reader = reader or SourceReader(project_root)
    full = tuple(sorted(set(hashed_files) | set(selected_test_files(project_root, gate.select))))
    if not full:
        raise EmptyHashError(f"gate {gate.id}: the code hash would cover no file (no file its cases reached, no "
                             "selected test file); check [tool.seamgate] and the gate's select")
    digest = hashlib.sha256(_SCHEME)
    for mark, files, reading in ((b"full", full, reader.normalized),
                                 (b"skeleton", sorted(set(code_files) - set(full)), reader.skeleton)):
        for rel in files:
            text = reading(rel)
            digest.update(mark + b"\0" + rel.encode() + b"\0" + (b"gone" if text is None else text) + b"\0")
    digest.update(json.dumps(_canonical(gate), sort_keys=True).encode() + b"\0")
    digest.update(json.dumps(_canonical(mutation), sort_keys=True).encode())
    return digest.hexdigest(), full
