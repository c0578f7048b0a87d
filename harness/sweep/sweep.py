"""The sweep: every mutant mutmut generates in a scope is a row of the kill matrix, stopped at its first killer
unless ``--all-killers`` asks for every one.

``seamgate sweep [PATHS]`` (``harness/sweep/cli.py`` parses it). In order:

1. The baseline: the selection on a copy of the working tree, once, with each case's reach recorded
   (``harness/rows/pytest_reach.py``). A red baseline stops the sweep (``BASELINE_RED``).
2. Generation: mutmut 3 makes and names the mutants of each file (``harness/sweep/mutants.py``).
3. Planning, per mutant: the cases whose baseline reach meets the mutated function (``harness/reach/reach.py``;
   ``--prove``: every case). None -> ``no_coverage``, without running. The other cases' cells are
   taken from the baseline and counted in ``MutantOutcome.inferred``. A mutant whose digest is the
   same as a kept sweep row's is taken again (``harness/sweep/kept_outcomes.py``: rows of the kept run
   folders, found as a gate run finds its rows; the baseline too).
4. Running: one copy of the project whose swept files are mutmut's trampolined form; batches of
   mutants, ``--jobs`` at a time, each ONE pytest session through our executor (fork server,
   off-tree copy) that collects once and forks a child per mutant running exactly its cases
   (``harness/sweep/pytest_sweep.py``), after a clean child with no mutant active. The cases run in
   the order most likely to kill fast (those that killed a neighbouring mutant, then cheapest first by
   the baseline's time) and the child stops at the first killer; ``--all-killers`` runs them all and
   records every killer. A failing case is a killer, even when a later case ran past the time limit
   (``harness/rows/time_limits.py``: as PIT's, a factor of the baseline's time of the mutant's cases plus a constant). A mutant whose function also ran while the files were imported or collected cannot be
   switched on after collection: its session forks its child BEFORE collecting, and the child switches
   it on, then collects its files one at a time and runs their cases (a decorator applied at import is
   applied by the mutant); such sessions share one clean check (``clean_check``).
   Where a swept module was imported before collection (a ``conftest.py`` imports it), such a mutant
   runs in a session of its own, on a copy holding it as plain source.
5. Equivalents (``harness/sweep/equivalents.py``) turn reviewed survivors into ``equivalent``.

The result is a ``reports.mutants.SweepResult``, kept as the ``"sweep"`` key of ``outcomes.json`` in
a kept run folder (``.seamgate/runs/<stamp>``, ``.seamgate/runs/latest-sweep`` points at the newest).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from seam.arms import DEFAULT_ARM
from harness.errors import CommandLineError
from harness.project_copy import materialize
from harness.reach.reach import Attribute, Reach, cases_reached, change_regions
from harness.results.reuse import file_hashes
from harness.results.workspace import new_kept_folder, reach_file_name
from harness.rows.executor import Executor, Run, RunsStopped, threads_per_run, underlying_error
from harness.rows.forkserver import launcher as start_launcher
from harness.rows.preload import TorchUse
from harness.rows.import_roots import project_names
from harness.rows.pool import run_parallel
from harness.rows.time_limits import (SWEEP_BASELINE_LIMIT, MutantTimes, TimeLimit, case_rule, mutant_rule,
                                      session_limit)
from harness.sweep.kept_outcomes import KeptOutcomes, baseline_key, mutant_digest
from harness.sweep.equivalents import Equivalent, judge_equivalent
from harness.sweep.mutants import Mutant, added_lines, generate_and_trampoline, module_name, mutmut_version
from reports.mutants import MutantOutcome, SweepResult
from reports.outcome import RunOutcome

#: Environment of every sweep run: one thread per worker (children fork after collection).
SWEEP_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: The kept folder of the newest sweep, beside ``.seamgate/runs/latest`` (which stays the gate run's).
LATEST_SWEEP = "latest-sweep"


class BaselineRed(Exception):
    """The selection is red on the unmutated tree: no mutant can be judged."""

    def __init__(self, run: RunOutcome) -> None:
        self.run = run
        red = [c for c in run.cases if c.kind in ("failed", "error")]
        shown = "; ".join(f"{c.nodeid or 'the session'} ({c.kind}: {c.message[:160]})" for c in red[:5])
        more = f" and {len(red) - 5} more" if len(red) > 5 else ""
        why = shown + more if red else f"the run ended {run.end}: {run.detail}"
        super().__init__(f"the baseline is red, so no mutant can be judged: {why}; log: {run.log}")


@dataclass(frozen=True)
class SweepOptions:
    """What one ``seamgate sweep`` does."""

    #: Files or folders to mutate, as the user named them (relative to the current folder).
    paths: tuple[str, ...]
    #: The pytest selection every case comes from (empty: the project's own pytest configuration).
    tests: tuple[str, ...] = ()
    prove: bool = False
    fresh: bool = False
    jobs: int = 1
    equivalents: Mapping[str, Equivalent] = field(default_factory=dict)
    equivalents_file: str = ""
    #: ``tty`` (a bar), ``lines`` (one line per finished file) or ``off``.
    progress: str = "lines"
    output: Path | None = None
    #: The platform arm every run exports as ``SEAM_ARMS`` (``--arm``; ``cuda`` on a GPU machine sweeps
    #: what only the cuda arm's cases reach). Kept outcomes are per arm.
    arm: str = DEFAULT_ARM
    #: Run every reaching case of every mutant and record every killer (``--all-killers``: the full kill
    #: matrix); by default a mutant stops at its first killing case.
    all_killers: bool = False


@dataclass
class Planned:
    """One mutant and how it will be decided."""

    mutant: Mutant
    #: The cases to run; ``None``: every case.
    cases: frozenset[str] | None
    #: Runs in a session of its own (its function also ran at import or collection time).
    alone: bool
    digest: str


def scope_files(root: Path, paths: Sequence[str], cwd: Path | None = None) -> tuple[tuple[str, ...], list[str]]:
    """(the scope relative to ``root``, every Python file in it); ``CommandLineError`` naming the path."""
    base = cwd or Path.cwd()
    scope: list[str] = []
    files: list[str] = []
    for given in paths:
        full = Path(given) if Path(given).is_absolute() else base / given
        full = full.resolve()
        if not full.is_relative_to(root):
            raise CommandLineError(f"sweep path {given}: {full} is outside the project {root}; name files or "
                                   "folders inside it (e.g. seamgate sweep src/pkg)")
        if not full.exists():
            raise CommandLineError(f"sweep path {given}: no such file or folder under {root}")
        rel = full.relative_to(root).as_posix() or "."
        scope.append(rel)
        if full.is_file():
            if full.suffix != ".py":
                raise CommandLineError(f"sweep path {given}: not a Python file; name .py files or folders")
            files.append(rel)
        else:
            files.extend(p.relative_to(root).as_posix() for p in sorted(full.rglob("*.py"))
                         if not _skipped(p.relative_to(root)))
    files = list(dict.fromkeys(files))
    if not files:
        raise CommandLineError(f"no Python files in {', '.join(paths)}: nothing to mutate; name folders or "
                               ".py files that hold code")
    return tuple(scope), files


def _skipped(rel: Path) -> bool:
    return any(part.startswith(".") or part in ("__pycache__", "venv", "mutants") or part.endswith(".egg-info")
               for part in rel.parts[:-1])


class Sweep:
    """One invocation: baseline, generation, planning, runs, result."""

    def __init__(self, root: Path, options: SweepOptions, launcher: Any = None,
                 notify: Callable[[str, Any], None] | None = None) -> None:
        self.root, self.options = root.resolve(), options
        #: A launcher the caller owns (tests share one fork server); ``None``: start our own.
        self.shared_launcher = launcher
        self.notify = notify or (lambda event, data: None)
        #: The temp folder of this invocation's copies and plans (made in ``run``, removed at its end).
        self.workdir = Path(tempfile.gettempdir())
        self.kept: Path | None = None
        self.executor: Executor | None = None
        self.launcher: Any = None
        self.baseline_tree: Path | None = None
        self._tree_lock = threading.Lock()
        self.facts: dict[str, Any] = {}
        #: The kept rows this sweep takes again and keeps (made in ``run``), and each planned mutant's digest.
        self.outcomes: KeptOutcomes | None = None
        self._digests: dict[str, str] = {}
        #: Every mutant id, in generation order (the result's order).
        self._order: list[str] = []
        #: Baseline duration of each case, and every baseline case id (time limits, inferred counts).
        self._durations: dict[str, float] = {}
        self._all: list[str] = []
        #: Each mutant row's time limit, from the baseline's case times (set when the mutants run).
        self.times = MutantTimes({}, ())
        #: ``--all-killers``: each case's own limit once its mutant is killed (set with ``times``).
        self._case_limits: dict[str, float] = {}
        #: Each swept file's trampolined code, made with its mutants (``generate_and_trampoline``).
        self._trampolined: dict[str, str] = {}

    # -- the whole sweep ----------------------------------------------------------------------

    def _execute(self, **fields: Any) -> Any:
        """One pytest run of this sweep, on the sweep's arm (every run exports it as ``SEAM_ARMS``). Its tree is
        the sweep's own copy, so the run writes bytecode there (``write_bytecode``) unless told otherwise:
        each child forked before collection then loads the test files and the trampolined module compiled
        (and assertion-rewritten) once, not again per mutant."""
        assert self.executor is not None
        return self.executor.execute(Run(arm=self.options.arm, **{"write_bytecode": True, **fields}))

    def run(self) -> SweepResult:
        started = time.perf_counter()
        version = mutmut_version()
        scope, files = scope_files(self.root, self.options.paths)
        launcher = None
        self.workdir = Path(tempfile.mkdtemp(prefix=f"seamgate-sweep-{os.getpid()}-"))
        try:
            self.kept = new_kept_folder(self.root, self.options.output)
            torch = TorchUse(self.root)  # asked when the first run starts (a sweep reusing all asks not)
            launcher = self.shared_launcher or _Lazy(lambda: start_launcher(
                True, log=self.workdir / "forkserver.log", project_names=project_names(self.root), torch=bool(torch)))
            self.launcher = launcher
            self.executor = Executor(launcher, self.kept, threads=threads_per_run(self.options.jobs), torch=torch)
            hashes = _file_hashes(self.root)
            self.outcomes = KeptOutcomes(self.root, self.kept, hashes, fresh=self.options.fresh)
            # the baseline runs in its child while this thread generates the mutants (libcst): neither
            # reads the other, and on a cold sweep each is seconds (the fork server's start, torch's import)
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sweep-baseline")
            try:
                pending = pool.submit(self.baseline, self.outcomes)
                generated = self.generate(files)
                baseline, reach = pending.result()
            finally:
                pool.shutdown(wait=False)
            planned, decided = self.plan(generated, baseline, reach, hashes, self.outcomes)
            self._digests = {p.mutant.id: p.digest for p in planned}
            ran = self.execute([p for p in planned if p.mutant.id not in decided], baseline)
            outcomes = {**decided, **ran}
            self.outcomes.save()
            ordered = [outcomes[m_id] for m_id in self._order]
            mutants = tuple(self.equivalent(o) for o in ordered)
            self.facts.update(killers="all" if self.options.all_killers else "first",
                              case_runs=sum(len(o.covered_by) for o in ran.values()),
                              time_limit=mutant_rule(),
                              **({"case_limit": case_rule()} if self.options.all_killers else {}),
                              select=list(self.options.tests), prove=self.options.prove, jobs=self.options.jobs,
                              baseline_cases=len(baseline.cases), ran=len(ran),
                              reused=sum(1 for p in planned if p.mutant.id not in ran),
                              equivalents_file=self.options.equivalents_file)
            return SweepResult(scope=scope, mutants=mutants, wall=time.perf_counter() - started,
                               generator=f"mutmut {version}", facts=dict(self.facts))
        except BaseException:
            self.stop()  # a thread still running (the baseline's) starts no session after this
            raise
        finally:
            if launcher is not None and launcher is not self.shared_launcher:
                launcher.close()
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- 1. the baseline ------------------------------------------------------------------------

    def baseline(self, kept: KeptOutcomes) -> tuple[RunOutcome, Reach | None]:
        """The selection on the working tree, with reach; taken again from a kept run when no file changed."""
        key = baseline_key(self.options.arm, SWEEP_ENV)
        taken = kept.baseline(key, self.options.tests)
        if taken is not None:
            self.notify("baseline", "reused")
            return taken
        self.notify("baseline", "running")
        if isinstance(self.launcher, _Lazy):
            self.launcher.warm()  # the fork server's start (torch's import) overlaps the copy and the generation
        assert self.kept is not None
        reach_path = self.kept / reach_file_name(key)
        run = self._execute(label="sweep baseline", tree=self.tree(), select=self.options.tests, env=SWEEP_ENV,
                            timeout=SWEEP_BASELINE_LIMIT, reach=reach_path)
        if run.end != "completed" or any(c.kind in ("failed", "error") for c in run.cases):
            raise BaselineRed(run)
        reach = Reach.read(reach_path)
        if reach is not None:  # a baseline whose reach is unreadable is not kept: the next sweep runs it again
            kept.keep_baseline(key, self.options.tests, run)
        return run, reach

    def tree(self) -> Path:
        """A plain copy of the working tree (made once)."""
        with self._tree_lock:
            if self.baseline_tree is None:
                self.baseline_tree = materialize(self.root, self.workdir / "tree", None)
            return self.baseline_tree

    # -- 2, 3. generation and planning ---------------------------------------------------------

    def generate(self, files: Sequence[str]) -> dict[str, tuple[str, list[Mutant]]]:
        """Each file's source and mutants, in order (and its trampolined code, kept for ``trampolined_tree``)."""
        generated: dict[str, tuple[str, list[Mutant]]] = {}
        for rel in files:
            source = (self.root / rel).read_text(encoding="utf-8")
            mutants, self._trampolined[rel] = generate_and_trampoline(self.root, rel, source)
            generated[rel] = (source, mutants)
            self.notify("generated", (rel, len(mutants)))
        return generated

    def plan(self, generated: Mapping[str, tuple[str, list[Mutant]]], baseline: RunOutcome, reach: Reach | None,
             hashes: Mapping[str, str], kept: KeptOutcomes) -> tuple[list[Planned], dict[str, MutantOutcome]]:
        """Every mutant, planned; those decided without running (no coverage, kept) come back decided."""
        ids = [c.nodeid for c in baseline.cases]
        self._all = ids
        planned: list[Planned] = []
        decided: dict[str, MutantOutcome] = {}
        self._order = []
        for rel, (source, mutants) in generated.items():
            for mutant in mutants:
                self._order.append(mutant.id)
                cases, alone = self.cases_for(mutant, source, reach, ids)
                if cases is not None and not cases:
                    decided[mutant.id] = _outcome(mutant, "no_coverage", inferred=len(ids),
                                                  reason="no case of the selection executes the mutated function")
                    continue
                digest = mutant_digest(mutant_id=mutant.id, diff=mutant.diff, function_source=mutant.function_source,
                                       select=self.options.tests, prove=self.options.prove, arm=self.options.arm, cases=cases, reach=reach,
                                       hashes=hashes, mutated_file=rel, source_text=source)
                one = Planned(mutant, cases, alone, digest)
                planned.append(one)
                taken = kept.mutant(mutant.id, digest)
                if taken is not None:
                    decided[mutant.id] = _from_kept(taken, mutant)
        return planned, decided

    def cases_for(self, mutant: Mutant, source: str, reach: Reach | None,
                  ids: Sequence[str]) -> tuple[frozenset[str] | None, bool]:
        """(the cases that can see ``mutant``, ``None`` for all; whether it must run in a session of its own)."""
        regions = change_regions(source, mutant.text)
        # a class attribute's value is set at import, before any mutant can be switched on
        alone = regions is None or any(isinstance(region, Attribute) for region in regions)
        if regions is not None and reach is not None:
            at_import = reach.files.get(mutant.file, {}).get("", frozenset())
            alone = any(isinstance(region, tuple) and any(region[0] <= n <= region[1] for n in at_import)
                        for region in regions)
        if self.options.prove:
            return None, alone
        found = None if reach is None else cases_reached({mutant.file: regions}, reach, ids)
        return found, alone

    # -- 4. running --------------------------------------------------------------------------

    def execute(self, todo: Sequence[Planned], baseline: RunOutcome) -> dict[str, MutantOutcome]:
        """Run the mutants ``todo``; their outcomes by id."""
        self.notify("planned", todo)
        if not todo:
            return {}
        self._durations = {c.nodeid: c.duration for c in baseline.cases}
        self.times = MutantTimes(self._durations, self._all)
        # --all-killers: once a mutant is killed, each case it still runs has its own limit (time_limits.py);
        # the same for every session's plan
        self._case_limits = {c: self.times.case_limit(c) for c in self._all} if self.options.all_killers else {}
        together = [p for p in todo if not p.alone]
        alone = [p for p in todo if p.alone]
        tramp = self.trampolined_tree({p.mutant.file for p in todo})
        out: dict[str, MutantOutcome] = {}
        jobs = max(1, self.options.jobs)
        # the mutants switched on before collection first: each costs a collection, so they are the
        # longest batches, and a pool that starts with them ends with the short ones
        alone_batches = _batches(alone, jobs)
        batches = [(batch, True) for batch in alone_batches] + [(b, False) for b in _batches(together, jobs)]
        thunks: list[Callable[[], dict[str, MutantOutcome]]] = []
        shared: Future[tuple[dict[str, Any] | None, Run]] | None = None
        if len(alone_batches) > 1:
            # one clean check serves every session forking before collection: each child collects its own
            # files, so no session's context is the children's, and the check is a whole collection and run.
            # It is the pool's first thunk, so it has started before any batch waits for it.
            shared = Future()
            thunks.append(_settling(shared, lambda: self.clean_check(len(batches), alone, tramp)))
        thunks += [lambda i=index, b=batch, f=before: self.run_batch(i, b, tramp, f, shared if f else None)
                   for index, (batch, before) in enumerate(batches)]

        def decided(found: dict[str, MutantOutcome]) -> None:
            if not found:  # the shared clean check: it decides no mutant
                return
            out.update(found)
            self.remember(found)
            self.notify("decided", list(found.values()))

        # Ctrl-C, SIGTERM: the pool kills the sessions now (``stop``), or it would wait them out
        run_parallel(thunks, jobs, on_stop=self.stop, on_done=decided)
        return out

    def stop(self) -> None:
        """Start no session any more and kill every one in flight (the row pool's ``on_stop``): a batch whose session
        was killed goes on to its next one (``run_alone``), which the executor then refuses (``RunsStopped``: the
        batch ends undecided, its mutants get no row)."""
        if self.executor is not None:
            self.executor.stop()
        elif self.launcher is not None:
            self.launcher.kill_all()

    def remember(self, found: Mapping[str, MutantOutcome]) -> None:
        """Keep decided outcomes as each batch ends: an interrupted sweep loses only what ran."""
        assert self.outcomes is not None
        for mutant_id, outcome in found.items():
            if outcome.status != "owed" and mutant_id in self._digests:
                self.outcomes.keep_mutant(mutant_id, self._digests[mutant_id], _to_kept(outcome))
        self.outcomes.save()

    def trampolined_tree(self, files: Iterable[str]) -> Path:
        """A copy of the project whose ``files`` are mutmut's trampolined form (every mutant switchable)."""
        tree = materialize(self.root, self.workdir / "trampolined", None)
        for rel in sorted(files):
            (tree / rel).write_text(self._trampolined[rel], encoding="utf-8")  # every swept file was generated
        return tree

    def limit(self, cases: Iterable[str] | None, before: bool) -> TimeLimit:
        """A mutant row's limit (``harness/rows/time_limits.py``); ``before``: its child, forked before
        collection, also collects."""
        return self.times.collecting(cases, child=True) if before else self.times.limit(cases)

    def clean_check(self, index: int, batch: Sequence[Planned], tree: Path) -> tuple[dict[str, Any] | None, Run]:
        """A session over ``tree`` whose only child is the clean check (no mutant on) of ``batch``'s cases,
        forked before collection: its result line (``None``: none written) and the session's run."""
        run, by_id = self.session(index, [], self.union(batch), tree, True, sorted({p.mutant.file for p in batch}))
        return by_id.get(""), run

    def union(self, batch: Sequence[Planned]) -> list[str] | None:
        """Every case of ``batch``'s mutants; ``None``: every case."""
        return None if any(p.cases is None for p in batch) else sorted(set().union(*(p.cases or () for p in batch)))

    def session(self, index: int, entries: list[dict[str, Any]], union: list[str] | None, tree: Path, before: bool,
                files: Sequence[str], clean: bool = True) -> tuple[Any, dict[str, dict[str, Any]]]:
        """One pytest session of the sweep plugin over ``tree`` running ``entries`` (after the clean check of
        ``union``, when ``clean``): the run and each entry's result line by id."""
        # the clean check runs every case: a case red there is never a killer, wherever it fails; forked
        # before collection, it also collects: the margin a session of its own has
        check = [{"id": "", "cases": union, "timeout": self.limit(union, before).seconds, "stop": False}] if clean else []
        entries = check + entries
        plan, results = self.workdir / f"plan-{index}.json", self.workdir / f"results-{index}.jsonl"
        modules = sorted({module_name(f) for f in files})
        plan.write_text(json.dumps({"out": str(results), "durations": self._durations, "case_limits": self._case_limits,
                                    "mutants": entries, "before_collection": before, "modules": modules}),
                        encoding="utf-8")
        select = self.options.tests if union is None else tuple(dict.fromkeys(c.split("::", 1)[0] for c in union))
        env = {**SWEEP_ENV, "SEAMGATE_SWEEP_PLAN": str(plan), "PYTEST_PLUGINS": "harness.sweep.pytest_sweep"}
        timeout = session_limit(e["timeout"] for e in entries)
        run = self._execute(label=f"sweep {index} {' '.join(files)}", tree=tree, select=tuple(select), env=env,
                            timeout=timeout)
        return run, _read_results(results)

    def run_batch(self, index: int, batch: Sequence[Planned], tree: Path, before: bool = False,
                  shared: Future[tuple[dict[str, Any] | None, Run]] | None = None) -> dict[str, MutantOutcome]:
        """One pytest session over ``tree``: a clean child, then a child per mutant of ``batch``, forked after
        collection, or before it (``before``: mutants whose function also runs at import or collection,
        ``harness/sweep/pytest_sweep.py``), when no swept module was imported before; the mutants that
        cannot be run so run in sessions of their own (``run_alone``). ``shared``: the clean check is that
        one (``clean_check``), not this session's own."""
        union = self.union(batch)
        entries = [{"id": p.mutant.id, "cases": None if p.cases is None else sorted(p.cases),
                    "timeout": self.limit(p.cases, before).seconds, "stop": not self.options.all_killers} for p in batch]
        files = sorted({p.mutant.file for p in batch})
        run, by_id = self.session(index, entries, union, tree, before, files, clean=shared is None)
        if any(r["end"] == "imported" for r in by_id.values()):
            return {k: v for n, p in enumerate(batch) for k, v in self.run_alone(f"{index}-{n}", p).items()}
        clean_run = run
        if shared is not None:
            clean, clean_run = shared.result()
        else:
            clean = by_id.get("")
        out: dict[str, MutantOutcome] = {}
        if clean is not None and clean.get("errors"):
            clean = {**clean, "end": "error", "detail": underlying_error(clean["errors"][0][1])}
        if clean is None or clean["end"] != "completed":
            why = (f"the clean check (no mutant active) of the trampolined copy did not complete "
                   f"({clean['end'] + ': ' + clean['detail'] if clean else clean_run.end + ' ' + clean_run.detail}); "
                   f"log: {clean_run.log}")
            return {p.mutant.id: _outcome(p.mutant, "owed", reason=why) for p in batch}
        clean_red = set(clean["failed"])
        if clean_red:
            self.facts.setdefault("clean_red", []).extend(sorted(clean_red))
        for p in batch:
            result = by_id.get(p.mutant.id)
            if result is None:
                out[p.mutant.id] = _outcome(p.mutant, "owed", reason=f"not run: the session ended {run.end} "
                                                                     f"{run.detail} first; log: {run.log}")
                continue
            out[p.mutant.id] = self.judged(p, result, clean_red, run.log, before)
        return out

    def judged(self, planned: Planned, result: Mapping[str, Any], clean_red: set[str], log: str,
               before: bool = False) -> MutantOutcome:
        mutant = planned.mutant
        ran = tuple(result.get("ran", ()))
        # the cases not planned are inferred from the baseline; planned ones a stop at a killer skipped are not
        inferred = len(self._all) - (len(self._all) if planned.cases is None else len(planned.cases))
        killers = tuple(f for f in result.get("failed", ()) if f not in clean_red)
        base = _outcome(mutant, "survived", covered_by=ran, inferred=inferred, wall=float(result.get("wall", 0.0)))
        if result.get("errors"):  # collected with the mutant on: it broke the collection of its files
            # the files it broke count among its killers, as in a session of its own (run_alone)
            broken = tuple(nodeid for nodeid, _ in result["errors"] if nodeid and nodeid not in killers)
            return replace(base, status="error", killers=killers + broken,
                           reason=underlying_error(result["errors"][0][1]))
        if before and result.get("missing") and not killers:
            missing = result["missing"]
            return replace(base, status="owed", reason=(
                f"{len(missing)} case(s) did not run in the mutant's own collection (e.g. {missing[0]}): "
                f"the mutant changed what was collected; log: {log}"))
        # a child forked before collection had the margin for its collection too: its reason says so
        source = self.limit(planned.cases, before).source
        cut = [c for c in result.get("cut", ()) if c in killers]
        said = (f"; {len(cut)} killer(s) ran past its own limit once the mutant was killed and were cut there "
                f"({case_rule()}): {', '.join(cut)}") if cut else ""
        if result["end"] == "timeout" and killers:  # it had failed before the limit: killed, by those cases
            return replace(base, status="killed", killers=killers, reason=(
                f"killed before its time limit ended the run ({source}){said}"))
        if result["end"] == "timeout":
            return replace(base, status="timeout", reason=f"{result.get('detail', '')}; {source}")
        if result["end"] != "completed":
            return replace(base, status="error", killers=killers, reason=f"{result.get('detail', '')}; log: {log}")
        if result.get("missing") and not killers:  # not judged on all its cases: never a survivor
            return replace(base, status="owed", reason=f"{len(result['missing'])} reaching case(s) were not collected "
                                                       f"in the trampolined copy (e.g. {result['missing'][0]}); log: {log}")
        return replace(base, status="killed" if killers else "survived", killers=killers, reason=said.lstrip("; "))

    def run_alone(self, index: int | str, one: Planned) -> dict[str, MutantOutcome]:
        """A mutant whose function ran at import or collection: a session of its own, on plain source."""
        tree = self.workdir / f"alone-{index}"
        limit = self.times.collecting(one.cases, child=False)
        shutil.copytree(self.tree(), tree, symlinks=True)
        try:
            write_mutant(tree / one.mutant.file, one.mutant.text)
            # by default the session stops at its first failure, as a batch's child does
            env = SWEEP_ENV if self.options.all_killers else {
                **SWEEP_ENV, "SEAMGATE_SWEEP_STOP_FIRST": "1", "PYTEST_PLUGINS": "harness.sweep.pytest_sweep"}
            # only the files that hold its cases are collected (as a batch's session does): the others
            # hold no case that can see it
            select = self.options.tests if one.cases is None else tuple(dict.fromkeys(
                c.split("::", 1)[0] for c in sorted(one.cases)))
            # no bytecode written: the copy is removed when this one session ends, so none would be kept for a
            # later run; the copy's stale bytecode of the mutated file is write_mutant's to drop (not writing
            # bytecode does not stop a session reading it)
            run = self._execute(label=f"sweep alone {one.mutant.id}", tree=tree, select=select, write_bytecode=False,
                                env=env, timeout=limit.seconds, only=one.cases)
        finally:
            shutil.rmtree(tree, ignore_errors=True)
        ran = tuple(c.nodeid for c in run.cases if c.nodeid)
        failed = tuple(c.nodeid for c in run.cases if c.kind == "failed")
        errors = [c for c in run.cases if c.kind == "error"]
        base = _outcome(one.mutant, "survived", covered_by=ran, inferred=len(self._all) - len(ran), wall=run.wall,
                        killers=failed + tuple(c.nodeid for c in errors if c.nodeid))
        if run.end == "timeout":
            return {one.mutant.id: replace(base, status="timeout", reason=f"{run.detail}; {limit.source}")}
        if run.end != "completed":
            return {one.mutant.id: replace(base, status="error", reason=f"{run.detail}; log: {run.log}")}
        if errors:
            return {one.mutant.id: replace(base, status="error", reason=errors[0].message[:300])}
        # a mutant of collection-time code can remove cases (its killer among them): not judged on them
        seen = set(ran)
        missing = [c for c in (self._all if one.cases is None else sorted(one.cases)) if c and c not in seen]
        if missing and not failed:
            return {one.mutant.id: replace(base, status="owed", reason=(
                f"{len(missing)} case(s) did not run in the mutant's own session (e.g. {missing[0]}): "
                f"the mutant changed what was collected; log: {run.log}"))}
        return {one.mutant.id: replace(base, status="killed" if failed else "survived")}

    # -- 5. equivalents --------------------------------------------------------------------------

    def equivalent(self, outcome: MutantOutcome) -> MutantOutcome:
        if outcome.status not in ("survived", "no_coverage"):
            return outcome
        explained, why = judge_equivalent(outcome.id, added_lines(outcome.diff), self.options.equivalents)
        if explained:
            return replace(outcome, status="equivalent", reason=why)
        return replace(outcome, reason="; ".join(r for r in (outcome.reason, why) if r)) if why else outcome


class _Lazy:
    """A launcher started on its first run: a sweep that reuses everything starts no fork server."""

    def __init__(self, start: Callable[[], Any]) -> None:
        self._start, self._launcher, self._lock = start, None, threading.Lock()
        self._closed = False

    def submit(self, request: dict[str, Any]) -> Any:
        return self._started().submit(request)

    def warm(self) -> None:
        """Start the launcher now, in the background: the first run finds it started, or waits for it (a start
        that failed there is tried again by that run, which then raises its error)."""
        threading.Thread(target=self._started_quietly, name="sweep-launcher-start", daemon=True).start()

    def _started(self) -> Any:
        with self._lock:
            if self._launcher is None:
                if self._closed:
                    raise RunsStopped("the sweep's launcher was closed before it started")
                self._launcher = self._start()
            return self._launcher

    def _started_quietly(self) -> None:
        try:
            self._started()
        except Exception:  # noqa: BLE001 - the first run starts it again and reports the error
            pass

    def kill_all(self) -> None:
        if self._launcher is not None:
            self._launcher.kill_all()

    def close(self) -> None:
        """Close the launcher, one being started too: the close waits for that start and closes what it made (a
        sweep interrupted while its fork server started left that server running), and no start follows it."""
        with self._lock:
            self._closed = True
            launcher = self._launcher
        if launcher is not None:
            launcher.close()


def write_mutant(path: Path, text: str) -> None:
    """Write a mutant's source over ``path`` in a copy, and drop the copy's bytecode of that file.

    A mutant has the size of the original, and a copy's bytecode of the original (the baseline's, copied in)
    records the original's size and modification time to the second: a mutant written within that second
    would be read from the ORIGINAL's bytecode, and its session would judge the original code (a false
    survivor: ``tests/harness/test_sweep_before_collection.py`` failed so about half the time on this
    machine, session 16). Not writing bytecode in the mutant's session does not stop it reading old bytecode.
    """
    path.write_text(text, encoding="utf-8")
    for stale in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        stale.unlink()


def _settling(future: Future[Any], compute: Callable[[], Any]) -> Callable[[], dict[str, MutantOutcome]]:
    """A pool thunk that puts ``compute()`` (or its error) into ``future``, which other thunks wait on; it decides
    no mutant, so it returns none (an error is raised again, for the pool to stop on)."""
    def settle() -> dict[str, MutantOutcome]:
        try:
            future.set_result(compute())
        except BaseException as exc:
            future.set_exception(exc)
            raise
        return {}
    return settle


def _batches(planned: Sequence[Planned], jobs: int) -> list[list[Planned]]:
    """Mutants grouped by file, each file cut into chunks so that ``jobs`` sessions can share the work."""
    if not planned:
        return []
    size = max(4, -(-len(planned) // (2 * jobs)))
    by_file: dict[str, list[Planned]] = {}
    for p in planned:
        by_file.setdefault(p.mutant.file, []).append(p)
    return [mine[i:i + size] for mine in by_file.values() for i in range(0, len(mine), size)]


def _read_results(path: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return found
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        found[entry["id"]] = entry
    return found


def _outcome(mutant: Mutant, status: str, **values: Any) -> MutantOutcome:
    return MutantOutcome(id=mutant.id, file=mutant.file, line=mutant.line, column=mutant.column,
                         end_line=mutant.end_line, end_column=mutant.end_column, mutator=mutant.mutator,
                         diff=mutant.diff, status=status, **values)  # type: ignore[arg-type]


def _to_kept(outcome: MutantOutcome) -> dict[str, Any]:
    return {"status": outcome.status, "killers": list(outcome.killers), "covered_by": list(outcome.covered_by),
            "inferred": outcome.inferred, "reason": outcome.reason, "wall": outcome.wall}


def _from_kept(kept: Mapping[str, Any], mutant: Mutant) -> MutantOutcome:
    return _outcome(mutant, kept["status"], killers=tuple(kept.get("killers", ())),
                    covered_by=tuple(kept.get("covered_by", ())), inferred=int(kept.get("inferred", 0)),
                    reason=str(kept.get("reason", "")), wall=0.0)


def _file_hashes(root: Path) -> dict[str, str]:
    return file_hashes(root)
