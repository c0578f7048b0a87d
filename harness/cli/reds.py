"""``seamgate mutations reds ID`` / ``--ref GITREF``: a mutation's or a git ref's red set, as a gate expects it.

A ref is run as a red-first gate runs it, with the working tree's tests laid over it.

Nobody should learn a red set by writing a wrong gate and reading "extra red". The source state runs
like any gate's row (baseline first, twice; then the mutation, or the ref as a red-first gate
materializes it: ``git archive`` plus the overlay, ``harness/judge/redfirst.py``), with every case run
(``--prove``), on the ``cpu-emulated`` arm; the arm in a node id's parameters is written back as
``{arm}``. A ref that git does not know is a usage error; a project outside git is an environment
error; both are said before anything runs.

A call reuses what the kept runs hold (``harness/results/reuse.py``, as ``seamgate run`` does): the
baseline, and the mutation's row, when nothing they read changed since, so a second call on an
unchanged tree runs nothing it already ran. ``--timeout S`` is the mutation's run limit (a gate's
``timeout``); without it the runner's rule applies (``harness/rows/time_limits.py``, ``row_limit``).
"""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any, Sequence

from harness.errors import CommandLineError, EnvironmentProblem
from harness.exit_codes import ExitCode
from harness.gates.model import Expectation, Gate, Origin, RedSet, SourceState
from harness.plan.matrix import union_select
from reports.outcome import CaseOutcome, Verdict

ARM = "cpu-emulated"


def run_reds(root: Path, catalog: Any, mutation_id: str, select: Sequence[str],
             launcher: Any = None, timeout: float | None = None) -> tuple[ExitCode, list[CaseOutcome] | None, str]:
    """(code, the red cases or ``None`` when the mutation could not be judged, why)."""
    return run_red_set(root, catalog, SourceState(kind="mutation", mutation=mutation_id), select, launcher, timeout)


def run_red_set(root: Path, catalog: Any, source: SourceState, select: Sequence[str],
                launcher: Any = None, timeout: float | None = None) -> tuple[ExitCode, list[CaseOutcome] | None, str]:
    """The red cases of ``select`` in ``source`` (a mutation, or a ref with its overlay, judged as a
    red-first gate judges it): (code, the red cases or ``None`` when it could not be judged, why)."""
    # The runner loads only when rows run: `seamgate` imports this module for every command, and a build
    # may lack the runner (harness/cli/main.py, `_runner`).
    from harness.run.runner import RunOptions, catalog_materializer, run_gates

    name = source.mutation if source.kind == "mutation" else source.ref
    gate = Gate(id=f"reds-{name}", kind="rule" if source.kind == "mutation" else "red-first",
                title=f"red set of {source.label()}", origin=Origin("<reds>"),
                source=source, select=tuple(select), arms=(ARM,), expect=Expectation(red=RedSet(count=0)),
                timeout=timeout)
    report, code = run_gates([gate], project=root, options=RunOptions(progress=False, prove=True, reuse=True),
                             materializer=catalog_materializer(catalog), stdout=io.StringIO(), launcher=launcher)
    if report.baseline_red:
        red = ", ".join(c.nodeid for run in report.baseline_red for c in run.cases if c.kind in ("failed", "error"))
        # a baseline that did not complete (its time limit, a crash) has no red case to name: say how it ended
        ended = "; ".join(f"{run.end}: {run.detail}" for run in report.baseline_red if run.end != "completed")
        return ExitCode.BASELINE_RED, None, f"the baseline is already red: {'; '.join(p for p in (red, ended) if p)}"
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


def red_set_yaml(source: SourceState | str, select: Sequence[str], red: Sequence[CaseOutcome]) -> str:
    """The ``source``/``select``/``expect`` lines of a gate that would pass on this red set.

    ``source`` is a mutation id, or a state: a ref's block is a red-first gate's, with ``green_after:
    true`` (the working tree's run of the same selection was green, or nothing would have been judged).
    """
    if isinstance(source, str):
        source = SourceState(kind="mutation", mutation=source)
    over = f"{len(red)} red case(s) over {', '.join(select)} ({ARM}, every case run"
    if source.kind == "ref":
        lines = [f"# ref {source.ref}: {over}; {', '.join(source.overlay) or 'nothing'} laid over the ref)",
                 f"source: {{ref: {_scalar(source.ref or '')}, overlay: [{', '.join(map(_scalar, source.overlay))}]}}"]
    else:
        lines = [f"# mutation {source.mutation}: {over})", f"source: {{mutation: {source.mutation}}}"]
    lines += [f"select: [{', '.join(map(_scalar, select))}]", "expect:", "  red:"]
    if red:
        lines.append("    nodeids:")
        lines += [f"      - {json.dumps(armless(c.nodeid))}" for c in sorted(red, key=lambda c: c.nodeid)]
        lines.append(f"  counts: {{cases: {len(red)}, passed: 0, failed: {len(red)}}}")
    elif source.kind == "ref":
        lines.append("    count: 0  # nothing is red against the ref: a red-first test must fail there first")
    else:
        lines.append("    count: 0  # nothing turns red: no gate can use this mutation to prove anything")
    if source.kind == "ref":
        lines.append("  green_after: true")
    return "\n".join(lines) + "\n"


def _scalar(text: str) -> str:
    """``text`` as a YAML flow scalar: plain when it is a path or ref YAML reads back as that string."""
    plain = re.fullmatch(r"[A-Za-z0-9_./][A-Za-z0-9_./~^@+-]*", text) and text not in ("null", "true", "false", "~")
    return text if plain else json.dumps(text)


def check_ref(root: Path, ref: str) -> None:
    """Refuse, before anything runs, a project outside git (ENVIRONMENT) and a ref git does not know (USAGE_ERROR)."""
    try:
        inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=root,
                                capture_output=True, text=True, errors="replace", check=False)
    except OSError as exc:
        raise EnvironmentProblem(f"--ref {ref}: git could not run ({exc}); a ref is read with git: install it") from exc
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        why = inside.stderr.strip().splitlines()[-1] if inside.stderr.strip() else "git rev-parse said no"
        raise EnvironmentProblem(f"--ref {ref}: the project {root} is not a git repository ({why}); a ref names a "
                                 "commit of the project's git history: run this in a git checkout of the project, "
                                 "or find a named mutation's red set with `seamgate mutations reds ID`")
    found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=root,
                           capture_output=True, text=True, errors="replace", check=False)
    if found.returncode != 0:
        raise CommandLineError(f"--ref: no commit named {ref!r} in the git repository at {root}: name a branch, "
                               "tag or commit it has (`git log --oneline`, `git tag`); a shallow clone must fetch it first")


def ref_source(root: Path, ref: str, select: Sequence[str], overlay: Sequence[str], gates: Sequence[Gate]
               ) -> tuple[SourceState, tuple[str, ...]]:
    """The ref's source state and the selection: ``select`` (default: what the red-first gates on ``ref``
    select) with ``overlay`` laid over it (default: those gates' overlays, else the selected paths)."""
    naming = [g for g in gates if g.source.kind == "ref" and g.source.ref == ref]
    if not select:
        select = union_select(g.select for g in naming)
        overlay = overlay or tuple(dict.fromkeys(p for g in naming for p in g.source.overlay))
    if not select:
        raise CommandLineError(f"no gate names ref {ref!r}: say what to run with --select PATH (the new tests, "
                               "e.g. --select tests/test_new.py)")
    overlay = tuple(dict.fromkeys(overlay or (entry.split("::", 1)[0].rstrip("/") for entry in select)))
    missing = [rel for rel in overlay if not (root / rel).exists()]
    if missing:
        raise CommandLineError(f"--ref {ref}: {', '.join(missing)} not in the working tree: the new tests are taken "
                               "from the working tree and laid over the ref (name them with --select or --overlay)")
    return SourceState(kind="ref", ref=ref, overlay=overlay), tuple(select)
