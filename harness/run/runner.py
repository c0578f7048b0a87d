"""The runner: ``seamgate run``'s backend. Plan, run baselines, run checks, judge, report, exit.

Order of events, for gates G (mutation m1, arm cpu-emulated) and R (red-first against origin/main):

1. take the repository lock (``LOCKED`` if another run holds it);
2. probe the platform in a child (the runner never imports torch) and plan: an arm this machine
   cannot run is OWED without running;
3. materialize the working tree into a temp folder and run each distinct baseline (selection,
   environment, arm) there, TWICE: a case whose verdict differs between the two runs is FLAKY,
   printed as such and never counted as red in any gate; a baseline red in both runs stops
   everything: ``BASELINE_RED``, naming the cases;
4. materialize each source state once (m1's mutated copy, origin/main's tree with R's overlay),
   run every check through the fork server, ``--jobs`` at a time, each with a time limit derived
   from its baseline, and judge it;
5. write ``--json``/``--junit`` atomically, print the table, map the report to one exit code
   (``harness/exit_mapping.py``).

The user's tree is never written (runs happen in copies; bytecode writing is off). The temp folder
is removed in ``finally`` and on SIGINT/SIGTERM, which also kill every child and report what
finished (``INTERRUPTED``). A SIGKILL'd runner cannot clean up; its temp folder is swept by the
next run (folder names carry the pid), its children die with the fork server.

``Session`` orchestrates; its collaborators each hold one job: ``harness/run/trees.py`` (the materialized
trees), ``harness/run/previous.py`` (rows reused and cells carried from previous runs),
``harness/run/hashing.py`` (the project's hashes, once), ``harness/run/signals.py`` (SIGINT/SIGTERM,
leftover temp folders), ``harness/run/baselines.py`` (the baselines, run twice; flaky cases),
``harness/run/row_filling.py`` (every other row, over the cases that reach its change),
``harness/run/judging.py`` (each check's verdict),
``harness/rows/pool.py`` (``--jobs`` at a time), ``harness/run/users_pytest.py`` (what the user's own
pytest cannot collect), ``harness/run/keeping.py`` (the kept results, ``latest``). A row's result is a
``RowResult`` (``harness/run/row_result.py``), a tree a ``MaterializedTree`` (``harness/run/materialized.py``):
each the outcome or why there is none.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from harness.errors import EnvironmentProblem
from harness.exit_mapping import code_for_report
from harness.exit_codes import ExitCode
from harness.gates.collect_check import check_against_baselines
from harness.gates.gatefile import load_gate_files
from harness.gates.model import Gate, SourceState
from harness.judge.evaluate import red_of_baseline
from harness.judge.judges import RUNS_ITS_OWN
from harness.plan.matrix import RowKey
from harness.plan.planner import Check, Plan, make_plan, restrict_arms, select_gates
from harness.plan.preview import preview, render
from harness.project import Project
from harness.reach.reach import Reach
from harness.results.evidence import Record, load_records
from harness.results.lock import Locked, RepositoryLock
from harness.results.platforms import Platform
from harness.results.reuse import KeptRuns
from harness.results.workspace import new_kept_folder
from harness.rows.executor import Call, Executor, Run, RunsStopped, threads_per_run
from harness.rows.forkserver import ServerDied, launcher as start_launcher
from harness.rows.preload import uses_torch
from harness.rows.import_roots import project_names
from harness.rows.pool import run_parallel
from harness.rows.time_limits import BASELINE_TIMEOUT
from harness.rows.tree_guard import TreeGuard
from harness.run.hashing import RunHashes
from harness.run.baselines import Baselines, flaky_lines, without_flaky
from harness.run.judging import Judging
from harness.run.keeping import keep_run, partial_note
from harness.run.previous import PreviousRuns
from harness.run.row_filling import RowFilling
from harness.run.row_result import RowResult
from harness.run.signals import WORKDIR_PREFIX, Interrupted, install_signal_handlers, restore_signal_handlers, sweep_stale_workdirs
from harness.run.trees import CatalogMaterializer, Materializer, Trees
from harness.run.users_pytest import as_users_pytest_sees, users_pytest_errors
from mutations.apply import apply_to_text
from mutations.check import read_target
from reports.json_out import plan_digest, write_json
from reports.junit_out import write_junit
from reports.markdown_out import write_markdown
from reports.atomic import write_atomic
from reports.outcome import ArmOutcome, Report, RunOutcome, counted
from reports.render import render as render_report
from reports.results import OUTCOMES, KeptResult
from reports.terminal import GateProgress, print_report


@dataclass(frozen=True)
class RunOptions:
    """How to run the planned gates (the CLI's ``run`` options)."""

    jobs: int = 1
    gate_ids: tuple[str, ...] = ()
    #: ``(K, N)``, 1 <= K <= N.
    shard: tuple[int, int] | None = None
    json: Path | None = None
    junit: Path | None = None
    #: Markdown summary for a CI job page.
    markdown: Path | None = None
    #: ``--report FMT=PATH``: each written as ``seamgate report --format FMT`` renders the run.
    reports: tuple[tuple[str, Path], ...] = ()
    fail_on_owed: bool = False
    #: Use the fork server where fork works (False: a fresh interpreter per run).
    prefer_fork: bool = True
    #: Show the progress bar (``None``: only when stderr is a TTY).
    progress: bool | None = None
    #: Outcomes measured on other machines, by (gate, arm) (``harness/results/evidence.py``).
    evidence: Mapping[tuple[str, str], Sequence[Record]] = field(default_factory=dict)
    #: ``--arm``: only these platform arms of each gate (empty: all).
    arms: tuple[str, ...] = ()
    #: ``--prove``: run every case of every row (infer nothing from the baseline's reach).
    prove: bool = False
    #: ``--output DIR``: keep this run's results there (default: ``.seamgate/runs/<timestamp>``).
    output: Path | None = None
    #: Take rows kept by the newest run when nothing they read changed (``harness/results/reuse.py``);
    #: the command line turns it on (``--no-reuse`` off), a programmatic caller asks for it.
    reuse: bool = False
    #: Seconds a baseline run may take (``[tool.seamgate] baseline_timeout``); see ``harness/rows/time_limits.py``.
    baseline_timeout: float = BASELINE_TIMEOUT

    @classmethod
    def from_args(cls, args: argparse.Namespace, project: Project) -> RunOptions:
        """The options of ``seamgate run`` as parsed by ``harness.cli.main`` (``--jobs`` defaults to the config)."""
        jobs = args.jobs if args.jobs is not None else project.config.jobs
        return cls(
            jobs=max(1, int(jobs)), gate_ids=tuple(args.gate or ()), shard=args.shard,
            json=_path(args.json), junit=_path(args.junit), markdown=_path(args.markdown),
            reports=tuple((fmt, Path(path)) for fmt, path in getattr(args, "report", ())),
            fail_on_owed=bool(args.fail_on_owed), arms=tuple(args.arm or ()), prove=bool(getattr(args, "prove", False)),
            output=_path(getattr(args, "output", None)), reuse=not getattr(args, "no_reuse", False),
            evidence=load_records(project.root, project.config.evidence),
            baseline_timeout=getattr(project.config, "baseline_timeout", BASELINE_TIMEOUT),
        )


# --------------------------------------------------------------------------------------------
# CLI backend
# --------------------------------------------------------------------------------------------

def run_command(args: argparse.Namespace, launcher: Any = None) -> ExitCode:
    """``seamgate run``: load the gates named on ``args`` and run them; returns the exit code.

    ``launcher``: a fork server the caller owns (a test's shared one); ``None``: the run starts its own."""
    config = getattr(args, "config", None)
    project = Project(Path(args.project).resolve(), config) if config else Project.locate(Path(args.project))
    catalog = project.catalog()
    paths = [Path(p) for p in args.gate_files]
    loaded = load_gate_files(paths, project_root=project.root, catalog=catalog)
    options = RunOptions.from_args(args, project)
    gates = restrict_arms(loaded, options.arms)
    select_gates(gates, options.gate_ids)  # an unknown --gate fails now, not after ~5 s
    why = _why_nothing(project, paths, loaded, options, named=bool(getattr(args, "named_gate_files", False)))
    if getattr(args, "dry_run", False):
        return dry_run(gates, project, catalog, options, why)
    return run_gates(gates, project=project.root, options=options, materializer=catalog_materializer(catalog),
                     launcher=launcher, nothing_reason=why)[1]


def dry_run(gates: Sequence[Gate], project: Project, catalog: Any, options: RunOptions, why: str) -> ExitCode:
    """``seamgate run --dry-run``: print the plan (``harness/plan/preview.py``); nothing runs, nothing is written."""
    plan = make_plan(gates, ids=options.gate_ids, shard=options.shard)
    if not plan.checks:
        print(f"seamgate: nothing to judge: {why or 'no gate was selected'} -> exit NOTHING_JUDGED")
        return ExitCode.NOTHING_JUDGED
    changes: dict[str, dict[str, tuple[str, str]] | None] = {}
    for key in plan.rows:
        if key.source.kind == "mutation" and key.source.mutation in catalog:
            mutation = catalog.get(key.source.mutation)
            try:
                original = read_target(project.root, mutation)
                changes[mutation.id] = {mutation.target: (original, apply_to_text(original, mutation))}
            except Exception:  # noqa: BLE001 - a rotted mutation is the run's ERROR; here: reach unknown
                changes[mutation.id] = None
    kept = KeptRuns.read(project.root) if (project.root / ".seamgate" / "runs").is_dir() else KeptRuns()
    print(render(plan, preview(plan, kept, changes, prove=options.prove, project=project.root), options.jobs))
    return ExitCode.OK


def _why_nothing(project: Project, paths: Sequence[Path], loaded: Sequence[Gate], options: RunOptions, *,
                 named: bool) -> str:
    """Why no gate would be judged, in the words a user needs (only shown when that is so)."""
    if not paths:
        return project.why_no_gate_files(paths if named else ())
    if not loaded:
        return f"the gate files hold no gates ({', '.join(str(p) for p in paths)}); add gates (docs/gates.md)"
    listed = sorted({arm for g in loaded for arm in g.arms})
    arms = " ".join(f"--arm {a}" for a in options.arms)
    return (f"{arms}: no gate lists {'that arm' if len(options.arms) == 1 else 'those arms'} "
            f"(the gates list: {', '.join(listed)})")


def _path(value: str | Path | None) -> Path | None:
    return Path(value) if value else None


def catalog_materializer(catalog: Any) -> Materializer:
    """The real materializer (``CatalogMaterializer``)."""
    return CatalogMaterializer(catalog)


def run_gates(gates: Sequence[Gate], *, project: Path, options: RunOptions, materializer: Materializer,
              stdout: Any = None, launcher: Any = None, nothing_reason: str = "") -> tuple[Report, ExitCode]:
    """Run ``gates`` under the repository lock; print and write the reports; return them and the code.

    An empty plan (no gate, or an empty shard) starts nothing and writes nothing into the project:
    it exits ``NOTHING_JUDGED`` saying why.
    """
    from rich.console import Console

    console = Console(file=stdout or sys.stdout)
    if not make_plan(gates, ids=options.gate_ids, shard=options.shard).checks:
        why = nothing_reason
        if gates and options.shard:
            why = f"--shard {options.shard[0]}/{options.shard[1]} holds no gate ({counted(len(gates), 'gate')} in all)"
        console.print(f"seamgate: nothing to judge: {why or 'no gate was selected'}", markup=False, soft_wrap=True)
        _write_outputs(Report(), options, ExitCode.NOTHING_JUDGED, project=project)
        print_report(Report(), console, ExitCode.NOTHING_JUDGED.name)
        return Report(), ExitCode.NOTHING_JUDGED
    try:
        with RepositoryLock(project):
            session = Session(project, options, materializer, launcher)
            report = session.run(gates)
    except Locked as exc:
        console.print(f"seamgate: {exc}", markup=False, soft_wrap=True)
        return Report(), ExitCode.LOCKED
    code = code_for_report(report, fail_on_owed=options.fail_on_owed)
    session.say(f"writing the reports and the kept results into {session.kept} (outcomes, matrix, rows, sources)")
    _write_outputs(report, options, code, plan=session.plan_id, kept=session.kept, project=project)
    session.keep(report, code)
    for line in session.flaky_lines():
        console.print(line, markup=False, soft_wrap=True)
    if note := session.partial_note():
        console.print(note, markup=False, soft_wrap=True)
    print_report(report, console, code.name, kept=session.kept)
    return report, code


def _write_outputs(report: Report, options: RunOptions, code: ExitCode, plan: str = "", kept: Path | None = None,
                   project: Path | None = None) -> None:
    """``--json`` (the layout of ``outcomes.json``, shard and plan included), ``--junit``, ``--markdown``, and
    each ``--report FMT=PATH`` through the formats' registry (``reports/render.py``)."""
    result = KeptResult(source=(kept or Path(".")) / OUTCOMES, report=report, exit_code=int(code),
                        shard=options.shard, plan=plan)
    for fmt, path in options.reports:
        write_atomic(path, render_report(result, fmt, code.name, project_root=project))
    if options.json:
        write_json(options.json, report, int(code), shard=options.shard, plan=plan)
    if options.junit:
        write_junit(options.junit, report)
    if options.markdown:
        write_markdown(options.markdown, report, code.name)


# --------------------------------------------------------------------------------------------
# One invocation
# --------------------------------------------------------------------------------------------

class Session:
    """One invocation: the temp folder, the launcher, the matrix rows, judging; trees, reuse and hashes are
    its collaborators' (module docstring)."""

    def __init__(self, project: Path, options: RunOptions, materializer: Materializer,
                 launcher: Any = None) -> None:
        self.project, self.options, self.materializer = project.resolve(), options, materializer
        #: A launcher the caller owns (tests share one fork server); ``None``: start our own.
        self.shared_launcher = launcher
        #: The materialized tree of each source state (``harness/run/trees.py``); ``trees`` is its mapping.
        self.copies = Trees(self.project, materializer)
        self.trees = self.copies.made
        #: The project's hashes, each computed once (``harness/run/hashing.py``).
        self.hashing = RunHashes(self.project, materializer)
        self.stopping = threading.Event()
        self.workdir: Path | None = None
        #: This invocation's kept results (``harness/results/workspace.py``): logs, JUnit, reach, outcomes, matrix.
        self.kept: Path | None = None
        self.executor: Executor | None = None
        self.finished: list[ArmOutcome] = []
        #: Baseline cases whose verdict changed between the two baseline runs: nodeid -> (kind, kind).
        self.flaky: dict[str, tuple[str, str]] = {}
        #: The filled rows of the kill matrix (flaky cases removed), and the baselines' recorded reach.
        self.rows: dict[RowKey, RowResult] = {}
        self.reach: dict[RowKey, Reach | None] = {}
        self.progress: GateProgress | None = None
        #: What this run takes from previous runs: reused rows, carried cells (``harness/run/previous.py``).
        self.previous = PreviousRuns(self.project, options, materializer, self.hashing, self.copies,
                                     rows=self.rows, reach=self.reach, flaky=self.flaky)
        #: The baseline rows, each run twice (``harness/run/baselines.py``).
        self.baselines = Baselines(options, self.copies, self.previous, rows=self.rows, reach=self.reach,
                                   flaky=self.flaky, execute=self.execute, parallel=self.parallel, say=self.say)
        #: The other rows, each run over the cases that reach its change (``harness/run/row_filling.py``).
        self.filling = RowFilling(options, self.copies, self.previous, rows=self.rows, reach=self.reach,
                                  execute=self.execute, without_flaky=self.without_flaky)
        #: Each check's verdict, once the run's executor is started (``harness/run/judging.py``).
        self.judging: Judging | None = None
        #: The user's tree, watched around every run: a test writing into it makes its gates ERROR.
        self.tree_guard: TreeGuard | None = None
        #: What the user's own plain pytest cannot collect of the gates' selections (``users_pytest_errors``).
        self.users_errors: dict[str, str] = {}
        #: Digest of every gate and arm selected before sharding (``reports.json_out.plan_digest``).
        self.plan_id = ""

    def run(self, gates: Sequence[Gate]) -> Report:
        sweep_stale_workdirs()
        selected = select_gates(gates, self.options.gate_ids)
        self.plan_id = plan_digest((g.id, arm) for g in selected for arm in g.arms)
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))
        self.copies.folder = self.workdir / "trees"
        if self.options.reuse:
            self.previous.kept_runs = KeptRuns.read(self.project)
        self.kept = new_kept_folder(self.project, self.options.output)
        self.previous.kept = self.kept
        self.tree_guard = TreeGuard.start(self.project, self.copies.original_file, ignore=self.kept)
        previous = install_signal_handlers()
        launcher = None
        plan: Plan | None = None
        try:
            self.say(f"judging {counted(len(selected), 'gate')}: starting the "
                     "fork server and probing the platform")
            torch = uses_torch(self.project)
            launcher = self.shared_launcher or self.start_launcher(torch)
            self.executor = Executor(launcher, self.kept, threads=threads_per_run(self.options.jobs), torch=torch)
            self.judging = Judging(self.project, self.options.evidence, self.copies, self.previous, self.hashing,
                                   self.executor, self.tree_guard, rows=self.rows, reach=self.reach, flaky=self.flaky)
            platform = self.probe(gates)
            plan = make_plan(gates, ids=self.options.gate_ids, shard=self.options.shard,
                             unavailable=platform.unavailable_arms(_all_arms(gates)))
            report = self.run_plan(plan, platform)
            self.say("stopping the run's processes and removing its copies")
            return report
        except Interrupted:
            self.stopping.set()
            if launcher is not None:
                launcher.kill_all()
            done = {(o.gate, o.arm) for o in self.finished}
            left = tuple(c.gate.id for c in (plan.checks if plan else ()) if (c.gate.id, c.arm) not in done)
            return Report(outcomes=tuple(self.finished), interrupted=True, unfinished=tuple(dict.fromkeys(left)))
        finally:
            self.stopping.set()
            if launcher is not None and launcher is not self.shared_launcher:
                launcher.close()
            elif launcher is not None:
                launcher.kill_all()
            restore_signal_handlers(previous)
            shutil.rmtree(self.workdir, ignore_errors=True)

    def start_launcher(self, torch: bool = True) -> Any:
        """The fork server, its log kept with the results; one that dies starting is ENVIRONMENT. ``torch``:
        the project uses it (``harness/rows/preload.py``), so the server imports it."""
        try:
            return start_launcher(self.options.prefer_fork, log=self.kept / "forkserver.log",
                                  project_names=project_names(self.project), torch=torch)
        except ServerDied as exc:
            raise EnvironmentProblem(f"the fork server (the interpreter that preloads torch and pytest) could not "
                                     f"start: {exc}. Fix what its log names (often a broken torch install), or "
                                     f"run with SEAMGATE_NO_FORK=1 to start a fresh interpreter per run") from exc

    def keep(self, report: Report, code: ExitCode) -> None:
        """Keep this run's results in its folder (``harness/run/keeping.py``, ``keep_run``)."""
        if self.kept is None:
            return
        keep_run(self.kept, self.project, self.options, report, code, plan_id=self.plan_id, rows=self.rows,
                 kept_rows=self.previous.kept_rows, files=self.hashing.hashes(), reaches=self.reach.values())

    def partial_note(self) -> str:
        """What a partial run says about ``latest`` (``harness/run/keeping.py``, ``partial_note``)."""
        return partial_note(self.project, self.kept, self.options)

    def probe(self, gates: Sequence[Gate]) -> Platform:
        """Ask a child what this machine offers (only GPU arms need torch's answer)."""
        outcome = self.executor.call(Call("platform probe", "harness.results.platforms:probe", timeout=120.0))
        if outcome.end != "completed" or not isinstance(outcome.result, dict):
            return Platform(probe_error=outcome.detail or outcome.end)
        return Platform(facts=outcome.result)

    def run_plan(self, plan: Plan, platform: Platform) -> Report:
        """Baselines first; then every other row and every lane check, ``--jobs`` at a time.

        A check is judged as soon as the rows it reads are filled, so gates finish as the run goes.
        """
        with GateProgress(len(plan.checks), self.progress_mode()) as progress:
            self.progress = progress
            return self._run_plan(plan, platform, progress)

    def say(self, what: str) -> None:
        """One progress line for work between the last gate and the table (a log must not fall silent for a
        minute while results are written); stderr, as the gates' lines; nothing when progress is off."""
        if self.progress_mode() != "off":
            print(f"seamgate: {what}", file=sys.stderr, flush=True)

    def progress_mode(self) -> str:
        """``tty`` (a bar), ``lines`` (one line per finished gate, for CI logs) or ``off``."""
        if self.options.progress is False:
            return "off"
        return "tty" if self.options.progress or sys.stderr.isatty() else "lines"

    def _run_plan(self, plan: Plan, platform: Platform, progress: GateProgress) -> Report:
        self.run_baselines(plan)
        # A node id the gate file names but the baseline did not collect is the gate file's typo
        # (USAGE_ERROR naming file:line), found before it can read as a broken gate or a red baseline.
        check_against_baselines([(c.gate, c.arm, row.outcome) for c in plan.checks if c.row is not None
                                 and (row := self.rows.get(c.row.baseline)) is not None and row.ok], self.project,
                                self.flaky)
        red = tuple(run for key in plan.baselines if (run := self.rows[key].outcome) is not None
                    and (red_of_baseline(run) or run.end != "completed"))
        if red:
            return Report(baseline_red=red, unfinished=plan.gates)
        self.users_errors = users_pytest_errors(self.copies.tree(SourceState()), plan)
        return self._judge_plan(plan, platform, progress)

    def _judge_plan(self, plan: Plan, platform: Platform, progress: GateProgress) -> Report:
        outcomes: dict[tuple[str, str], ArmOutcome] = {}

        def done(judged: list[tuple[Check, ArmOutcome]]) -> None:
            for check, outcome in judged:
                outcome = as_users_pytest_sees(outcome, check.gate, self.users_errors)
                outcomes[(check.gate.id, check.arm)] = outcome
                self.finished.append(outcome)
                progress.finished(check.gate.id, check.arm, outcome.verdict.value)

        now = [c for c in plan.checks if c.owed is not None
               or (c.row is not None and c.row.source.kind == "tree" and c.proof_row is None)]
        done([(c, self.judge(c, platform)) for c in now])
        units: list[Callable[[], list[tuple[Check, ArmOutcome]]]] = []
        # A lane check starts its own children (unknown cost): it goes first, with the longest rows.
        for check in plan.checks:
            if check.owed is None and check.gate.kind in RUNS_ITS_OWN:
                units.append(lambda c=check: [(c, self.judge(c, platform))])
        rows = [(key, select) for key, select in plan.rows.items() if key.source.kind != "tree"]
        costs = self.parallel([lambda k=k, s=s: self.filling.cost(k, s) for k, s in rows], "estimates")
        for (key, select), _ in sorted(zip(rows, costs), key=lambda pair: -pair[1]):
            readers = [c for c in plan.checks if c.owed is None and (c.row == key or c.proof_row == key)]
            units.append(lambda k=key, s=select, r=readers: self.fill_and_judge(k, s, r, platform))
        self.parallel(units, "rows", on_done=done)
        keys = [(c.gate.id, c.arm) for c in plan.checks]
        return Report(outcomes=tuple(outcomes[k] for k in keys if k in outcomes))

    def run_baselines(self, plan: Plan) -> None:
        """Each baseline row runs TWICE, a case whose verdict differs being flaky (``harness/run/baselines.py``)."""
        self.baselines.run(plan, self.kept)

    def fill_and_judge(self, key: RowKey, select: tuple[str, ...], readers: Sequence[Check],
                       platform: Platform) -> list[tuple[Check, ArmOutcome]]:
        """Fill ``key``'s row (``harness/run/row_filling.py``), then judge the checks that read it."""
        self.rows[key] = self.filling.fill_row(key, select, readers)
        return [(c, self.judge(c, platform)) for c in readers]

    def without_flaky(self, run: RunOutcome) -> RunOutcome:
        """``run`` minus the flaky cases (they are neither red nor green)."""
        return without_flaky(run, self.flaky)

    def flaky_lines(self) -> list[str]:
        return flaky_lines(self.flaky)

    def parallel(self, thunks: list[Callable[[], Any]], what: str,
                 on_done: Callable[[Any], None] | None = None) -> list[Any]:
        """Run thunks ``--jobs`` at a time, results in order; a signal interrupts the wait (``harness/rows/pool.py``)."""
        return run_parallel(thunks, self.options.jobs, on_stop=self.stop_runs, on_done=on_done)

    def stop_runs(self) -> None:
        """Stop feeding runs and kill the ones in flight: the executor's stop (``Executor.stop``), so that a run past
        the ``stopping`` check but not yet held by the launcher is killed as it starts, not waited out."""
        self.stopping.set()
        if self.executor is not None:
            self.executor.stop()

    def execute(self, run: Run) -> RunOutcome:
        if self.stopping.is_set():
            raise Interrupted(signal.SIGTERM)
        progress = self.progress
        if progress is not None:
            progress.start(run.label)
        try:
            with self.tree_guard.watch(run.label) if self.tree_guard else contextlib.nullcontext():
                outcome = self.executor.execute(run)
            return _copy_gone(run, outcome)
        except RunsStopped:  # the run met the stop as it started: it is the interruption, not a row's error
            raise Interrupted(signal.SIGTERM) from None
        finally:
            if progress is not None:
                progress.stop(run.label)

    def seed_bytecode(self, tree: Path, state: SourceState) -> None:
        """``Trees.seed_bytecode`` of this run's trees."""
        self.copies.seed_bytecode(tree, state)

    def judge(self, check: Check, platform: Platform) -> ArmOutcome:
        """The verdict of ``check`` (``harness/run/judging.py``)."""
        return self.judging.judge(check, platform)


def _copy_gone(run: Run, outcome: RunOutcome) -> RunOutcome:
    """A run whose copy of the project vanished under it is a CRASH that says so in one line (not pytest's
    cut-off traceback about a missing folder)."""
    if outcome.end == "timeout" or Path(run.tree).is_dir():
        return outcome
    return replace(outcome, end="crash", detail=f"its copy of the project ({run.tree}) was deleted while it ran: a "
                                                "test removed the tree it runs in; nothing it reported can be trusted")


def _all_arms(gates: Sequence[Gate]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(arm for g in gates for arm in g.arms))
