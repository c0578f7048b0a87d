"""Kept results read back: a kept run's ``outcomes.json`` turned into the result model again.

``reports.json_out`` writes ``outcomes.json`` (the gate run's ``Report``, its exit code, the shard it
ran and the plan it was cut from, and a sweep's ``SweepResult`` under ``"sweep"``); this module is
its inverse, for ``seamgate report``. A path that is not a kept result raises ``ResultsError`` with a
message naming the path and the fix; nothing here imports ``harness``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from reports.mutants import SweepResult, sweep_from_json
from reports.outcome import ArmOutcome, CaseOutcome, Provenance, Report, RunOutcome, Verdict

#: The ``schema`` values of ``outcomes.json`` this reader understands (``json_out.SCHEMA_VERSION``).
READABLE_SCHEMAS = (1,)
OUTCOMES = "outcomes.json"
#: Optional true/false facts of a case, read when both the file and this model have them.
_FLAGS = ("carried",)


class ResultsError(ValueError):
    """A RESULTS path that is missing, not a seamgate result, or of another schema version."""


@dataclass(frozen=True)
class KeptResult:
    """One kept result: what ``outcomes.json`` holds, and where it was read from."""

    #: The ``outcomes.json`` file read.
    source: Path
    report: Report
    #: The exit code the run ended with.
    exit_code: int
    #: ``(K, N)`` when the run was ``--shard K/N``.
    shard: tuple[int, int] | None = None
    #: Digest of the whole plan (every gate and arm before sharding): parts of one run share it.
    plan: str = ""
    sweep: SweepResult | None = None

    @property
    def folder(self) -> Path:
        return self.source.parent

    def label(self) -> str:
        """How messages name this result: its folder, and its shard when it has one."""
        shard = f" (shard {self.shard[0]}/{self.shard[1]})" if self.shard else ""
        return f"{self.folder}{shard}"


def outcomes_file(path: Path) -> Path:
    """``path`` itself when it is a file, else its ``outcomes.json``; ``ResultsError`` saying the fix."""
    if path.is_dir():
        found = path / OUTCOMES
        if found.is_file():
            return found
        raise ResultsError(f"{path}: no {OUTCOMES} in this folder, so it is not a kept seamgate result "
                           "(a folder that `seamgate run` keeps, e.g. .seamgate/runs/latest); "
                           "name a kept run folder or its outcomes.json")
    if path.is_file():
        return path
    if path.name == "latest" or path.parent.name == "runs":
        sweep = path.parent / "latest-sweep"
        hint = f"; the newest sweep is {sweep}" if path.name == "latest" and sweep.exists() else ""
        raise ResultsError(f"{path}: no such kept result; run `seamgate run` (or `seamgate sweep`) first, "
                           f"or name a folder listed in .seamgate/runs/{hint}")
    raise ResultsError(f"{path}: no such file or folder; name a kept run folder (.seamgate/runs/<timestamp>) "
                       f"or its {OUTCOMES}")


def load(path: Path) -> KeptResult:
    """Read a kept run folder or its ``outcomes.json`` into a ``KeptResult``."""
    source = outcomes_file(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{source}: not a seamgate result (not JSON: {exc}); name the outcomes.json "
                           "that `seamgate run` writes") from None
    if not isinstance(data, dict) or "schema" not in data or "outcomes" not in data:
        raise ResultsError(f"{source}: not a seamgate result (no 'schema' and 'outcomes' keys); name the "
                           "outcomes.json that `seamgate run` writes")
    if data["schema"] not in READABLE_SCHEMAS:
        raise ResultsError(f"{source}: result schema {data['schema']!r}, this seamgate reads schema "
                           f"{', '.join(map(str, READABLE_SCHEMAS))}; render it with the seamgate that wrote it, "
                           "or re-run `seamgate run` with this one")
    try:
        return from_json(data, source)
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultsError(f"{source}: not a readable seamgate result: {exc}") from None


def from_json(data: Mapping[str, Any], source: Path) -> KeptResult:
    """The inverse of ``json_out.result_to_json``."""
    shard = data.get("shard")
    report = Report(
        outcomes=tuple(outcome_from_json(o) for o in data["outcomes"]),
        baseline_red=tuple(run_from_json(r) for r in data.get("baseline_red", ())),
        interrupted=bool(data.get("interrupted", False)),
        unfinished=tuple(data.get("unfinished", ())),
    )
    sweep = data.get("sweep")
    return KeptResult(source=source, report=report, exit_code=int(data["exit_code"]),
                      shard=(int(shard["k"]), int(shard["n"])) if shard else None, plan=str(data.get("plan") or ""),
                      sweep=sweep_from_json(sweep) if sweep else None)


def outcome_from_json(data: Mapping[str, Any]) -> ArmOutcome:
    provenance = data.get("provenance")
    return ArmOutcome(
        gate=data["gate"], arm=data["arm"], verdict=Verdict(data["verdict"]), message=data.get("message", ""),
        kind=data.get("kind", ""), title=data.get("title", ""),
        runs=tuple(run_from_json(r) for r in data.get("runs", ())),
        provenance=Provenance.from_json(provenance) if provenance else None, facts=dict(data.get("facts") or {}),
    )


def run_from_json(data: Mapping[str, Any]) -> RunOutcome:
    return RunOutcome(
        label=data["label"], end=data["end"], exit_code=data.get("exit_code"),
        cases=tuple(case_from_json(c) for c in data.get("cases", ())), wall=float(data.get("wall", 0.0)),
        session=float(data.get("session", 0.0)), detail=data.get("detail", ""), log=data.get("log", ""),
    )


def case_from_json(data: Mapping[str, Any]) -> CaseOutcome:
    return CaseOutcome(
        nodeid=data["nodeid"], kind=data["kind"], message=data.get("message", ""),
        assertions_passed=_count(data.get("assertions_passed", 0)), assertions_failed=int(data.get("assertions_failed", 0)),
        duration=float(data.get("duration", 0.0)), inferred=bool(data.get("inferred", False)),
        **{k: bool(data[k]) for k in _FLAGS if k in data and k in CaseOutcome.__dataclass_fields__},
    )


def _count(value: Any) -> int | None:
    """An assertion count; ``None`` stays ``None`` (not counted: ``count_assertions`` was off)."""
    return None if value is None else int(value)
