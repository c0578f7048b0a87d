"""``seamgate mutations reds ID``: run one mutation and print its red set in the form a gate expects.

Nobody should learn a red set by writing a wrong gate and reading "extra red". The mutation runs
like any gate's row (baseline first, twice; then the mutation), with every case run (``--prove``),
on the ``cpu-emulated`` arm; the arm in a node id's parameters is written back as ``{arm}``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Sequence

from harness.exit_codes import ExitCode
from harness.model import Expectation, Gate, Origin, RedSet, SourceState
from reports.outcome import CaseOutcome, Verdict

ARM = "cpu-emulated"


def run_reds(root: Path, catalog: Any, mutation_id: str, select: Sequence[str],
             launcher: Any = None) -> tuple[ExitCode, list[CaseOutcome] | None, str]:
    """(code, the red cases or ``None`` when the mutation could not be judged, why)."""
    from harness.runner import RunOptions, catalog_materializer, run_gates

    gate = Gate(id=f"reds-{mutation_id}", kind="rule", title=f"red set of {mutation_id}", origin=Origin("<reds>"),
                source=SourceState(kind="mutation", mutation=mutation_id), select=tuple(select), arms=(ARM,),
                expect=Expectation(red=RedSet(count=0)))
    report, code = run_gates([gate], project=root, options=RunOptions(progress=False, prove=True),
                             materializer=catalog_materializer(catalog), stdout=io.StringIO(), launcher=launcher)
    if report.baseline_red:
        red = ", ".join(c.nodeid for run in report.baseline_red for c in run.cases if c.kind in ("failed", "error"))
        return ExitCode.BASELINE_RED, None, f"the baseline is already red: {red}"
    if not report.outcomes:
        return code, None, "nothing was judged"
    outcome = report.outcomes[0]
    if outcome.verdict not in (Verdict.PASS, Verdict.FAIL):
        return code, None, f"{outcome.verdict.value}: {outcome.message}"
    return ExitCode.OK, list(outcome.runs[0].red), ""


def armless(nodeid: str) -> str:
    """``t.py::test_x[cpu-emulated-3]`` -> ``t.py::test_x[{arm}-3]`` (only inside the parameters)."""
    head, bracket, params = nodeid.partition("[")
    return head + bracket + params.replace(ARM, "{arm}") if bracket else nodeid


def red_set_yaml(mutation_id: str, select: Sequence[str], red: Sequence[CaseOutcome]) -> str:
    """The ``source``/``select``/``expect`` lines of a gate that would pass on this red set."""
    lines = [f"# mutation {mutation_id}: {len(red)} red case(s) over {', '.join(select)} ({ARM}, every case run)",
             f"source: {{mutation: {mutation_id}}}",
             f"select: [{', '.join(select)}]",
             "expect:", "  red:"]
    if red:
        lines.append("    nodeids:")
        lines += [f"      - {json.dumps(armless(c.nodeid))}" for c in sorted(red, key=lambda c: c.nodeid)]
        lines.append(f"  counts: {{cases: {len(red)}, passed: 0, failed: {len(red)}}}")
    else:
        lines.append("    count: 0  # nothing turns red: no gate can use this mutation to prove anything")
    return "\n".join(lines) + "\n"
