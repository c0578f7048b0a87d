"""The --prove audit (issue 28): a default run's verdicts and cells against those of a run that infers and reuses nothing.

    .venv/bin/python scripts/prove_audit.py                       # runs both, then compares
    .venv/bin/python scripts/prove_audit.py --default A.json      # A: a default run's --json report
    .venv/bin/python scripts/prove_audit.py --default A.json --prove B.json   # compare two reports

The default ``seamgate run`` infers the cases whose baseline reach misses the mutated lines and takes
rows kept by an earlier run; both are decisions about what NOT to run, and a defect in either turns
silently into a false PASS. This audit cannot be fooled by them: ``--prove --no-reuse`` runs every case
of every row, and every verdict (gate, arm) and every cell (run, case) of the default report must be
the same there. A report not given is produced here with ``--json`` (the default one with
``--no-reuse``, so it infers but reuses nothing of an earlier run; pass ``--default`` to audit a run
that reused). Exit: 0 the same, 1 a difference (each printed), 2 a report that cannot be read or a run
that wrote none.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SEAMGATE = str(Path(sys.executable).with_name("seamgate"))
Verdicts = dict[tuple[str, str], str]
Cells = dict[tuple[str, str], tuple[str, bool]]


class ReportError(Exception):
    """A report that cannot be read: the message names the file and what to do."""


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: cannot read a seamgate JSON report ({exc}); write one with `seamgate run --json PATH`") from None
    if not isinstance(data, dict) or not isinstance(data.get("outcomes"), list):
        raise ReportError(f"{path}: no 'outcomes' list: not a `seamgate run --json` report")
    return data


def verdicts(report: dict[str, Any]) -> Verdicts:
    return {(o["gate"], o["arm"]): o["verdict"] for o in report["outcomes"]}


def cells(report: dict[str, Any]) -> Cells:
    """Each executed or inferred case of each run, by (run label, node id): its kind and whether it was inferred."""
    found: Cells = {}
    for outcome in report["outcomes"]:
        for run in outcome.get("runs") or []:
            for case in run.get("cases") or []:
                inferred = bool(case.get("inferred") or case.get("carried"))
                found[(run["label"], case["nodeid"])] = (case["kind"], inferred)
    return found


def differences(default: dict[str, Any], prove: dict[str, Any]) -> tuple[list[str], int, int]:
    """The lines that differ, and how many verdicts and cells were compared."""
    lines: list[str] = []
    a, b = verdicts(default), verdicts(prove)
    for key in sorted(a.keys() | b.keys()):
        if a.get(key) != b.get(key):
            lines.append(f"{key[0]} [{key[1]}]: default {a.get(key, '(absent)')}, --prove {b.get(key, '(absent)')}")
    ca, cb = cells(default), cells(prove)
    # A cell in one report only differs too: a default run that reports fewer cases than --prove ran hides them.
    for key in sorted(ca.keys() | cb.keys()):
        (kind_a, inferred), (kind_b, _) = ca.get(key, ("(absent)", False)), cb.get(key, ("(absent)", False))
        if kind_a != kind_b:
            how = " (inferred)" if inferred else ""
            lines.append(f"{key[0]} :: {key[1]}: default {kind_a}{how}, --prove {kind_b}")
    return lines, len(a.keys() | b.keys()), len(ca.keys() | cb.keys())


def produce(flags: list[str], out: Path, project: Path) -> tuple[Path, float]:
    """Run ``seamgate run FLAGS --json OUT``; its exit code is the verdicts', compared later, not judged here."""
    start = time.monotonic()
    print(f"prove_audit: seamgate run {' '.join(flags)} ...", flush=True)
    subprocess.run([SEAMGATE, "--project", str(project), "run", *flags, "--json", str(out)], check=False)
    if not out.is_file():
        raise ReportError(f"seamgate run {' '.join(flags)} wrote no report at {out}: see its output above")
    return out, time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--default", type=Path, metavar="JSON", help="a default run's --json report (default: run one)")
    parser.add_argument("--prove", type=Path, metavar="JSON", help="a --prove run's --json report (default: run one)")
    parser.add_argument("--project", type=Path, default=ROOT, help="the project to run (default: this repository)")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="seamgate-prove-audit-") as tmp:
            timings = []
            default, prove = args.default, args.prove
            if default is None:
                default, seconds = produce(["--no-reuse"], Path(tmp) / "default.json", args.project)
                timings.append(f"default {seconds:.1f} s")
            if prove is None:
                prove, seconds = produce(["--prove", "--no-reuse"], Path(tmp) / "prove.json", args.project)
                timings.append(f"--prove {seconds:.1f} s")
            lines, n_verdicts, n_cells = differences(load(default), load(prove))
    except ReportError as exc:
        print(f"prove_audit: ERROR: {exc}", file=sys.stderr)
        return 2
    took = f" ({', '.join(timings)})" if timings else ""
    if lines:
        print(f"prove_audit: FAIL: {len(lines)} differences between the default run and --prove{took}:")
        print("\n".join(f"  {line}" for line in lines))
        return 1
    print(f"prove_audit: OK: {n_verdicts} verdicts and {n_cells} cells the same under --prove{took}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
