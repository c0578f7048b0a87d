"""Evidence: what another machine measured for an arm this one cannot run, and whether it is STALE.

A GPU arm is OWED on a machine without the GPU. When ``evidence/`` (``[tool.seamgate] evidence``)
holds a JSON report written by ``seamgate run --json`` on a machine that HAD it, the runner reads
the recorded outcome of that gate and arm with its provenance (device, capability, driver, torch,
commit, the sha256 of the code under test):

* same code hash as the tree now: the recorded verdict stands, the message names the device,
  commit and evidence file (a measurement of THIS code);
* another code hash: STALE — a measurement of older code is never carried forward;
* no record: the arm stays OWED with its reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

from harness.errors import SeamgateUsageError
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
        if not named and not (isinstance(data, dict) and "outcomes" in data and "schema" in data):
            return []  # other JSON beside the reports (bench figures, G1 tables)
        return [Record(o["gate"], o["arm"], Verdict(o["verdict"]), o.get("message", ""),
                       Provenance.from_json(o["provenance"]), shown)
                for o in data["outcomes"] if o.get("provenance")]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EvidenceError(f"{shown}: not a seamgate JSON report ({type(exc).__name__}: {exc}); "
                            "evidence files are written by `seamgate run --json FILE` — fix or remove it") from exc


def resolve(outcome: ArmOutcome, records: list[Record], current_hash: str) -> ArmOutcome:
    """An OWED outcome, judged again in the light of what was measured elsewhere."""
    if outcome.verdict is not Verdict.OWED or not records:
        return outcome
    same = [r for r in records if not r.provenance.stale_against(current_hash)]
    if same:
        r = same[-1]
        return replace(outcome, verdict=r.verdict, provenance=r.provenance,
                       message=f"measured on {_where(r.provenance)} [{r.source}]: {r.message}")
    r = records[-1]
    return replace(outcome, verdict=Verdict.STALE, provenance=r.provenance,
                   message=(f"STALE: {r.verdict.value} measured on {_where(r.provenance)} [{r.source}] for code "
                            f"{r.provenance.code_hash[:12]}, the code under test is now {current_hash[:12]}; "
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
