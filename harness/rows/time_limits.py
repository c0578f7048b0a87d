"""Time limits of rows: one policy for both scenarios, the baseline and the changed rows, each limit with its source.

A row that runs past its limit is killed (its whole process group) and reads TIMEOUT; a limit that
says where it came from lets that message say why the run was cut off. The rules, by scenario:

- **A baseline row** has no earlier run to derive its limit from: the largest ``timeout`` of the gates
  reading it when every one of them sets one, else ``[tool.seamgate] baseline_timeout``
  (``baseline_limit``; default ``BASELINE_TIMEOUT``). A sweep's baseline, which no gate reads, has
  ``SWEEP_BASELINE_LIMIT``.
- **A gate's changed row** (a mutation, a git ref): the largest ``timeout`` its gates state when every one
  of them states one, else ``GATE_FACTOR`` x the baseline's time for the cases it runs plus the
  baseline's fixed cost (start-up, collection), at least ``GATE_FLOOR`` (``row_limit``). A lane's calls
  read no baseline row: the gate's ``timeout``, else ``GATE_FLOOR``.
- **A mutant row** of the sweep, as PIT's: ``FACTOR`` x the baseline's time of the cases it runs +
  ``CONSTANT`` (a case the baseline did not time counts ``UNTIMED``); ``ALONE_MARGIN`` more for a mutant
  that collects its own cases; a session of mutants has its children's limits plus ``SESSION_MARGIN``
  (``MutantTimes``).
- **A case of a killed mutant** (``--all-killers`` only): once one of its cases has failed, each case
  the mutant still runs has a limit of its own, as PIT's per-test timeout: ``CASE_FACTOR`` x the
  baseline's time of that case + ``CASE_CONSTANT`` (``MutantTimes.case_limit``). Past it the case is cut
  and counted a killer; before the first kill no case is cut, so a cut never changes a mutant's status.

Worked example: a baseline whose cases took 0.042 s in all gives a mutant running its 3 cases
``limit 10.42 s = 10 x 0.042 s (the baseline's time of its 3 case(s)) + 10 s``; switched on before
collection, ``... + 10 s + 30 s for its collection``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from reports.outcome import RunOutcome

#: Seconds a baseline may take when not every gate reading it states a ``timeout`` (``[tool.seamgate]
#: baseline_timeout`` sets it: ``harness/config.py``).
BASELINE_TIMEOUT = 600.0
#: Seconds a sweep's baseline may take.
SWEEP_BASELINE_LIMIT = 3600.0
#: A gate's changed row, when its gates state no limit: ``GATE_FACTOR`` x its expected time, at least ``GATE_FLOOR``.
GATE_FLOOR, GATE_FACTOR = 10.0, 5.0
#: A mutant's limit, as PIT's: ``FACTOR`` x the baseline's measured time of the cases it runs, plus
#: ``CONSTANT`` seconds (a forked child's start, a slower machine). A case the baseline did not time
#: counts ``UNTIMED`` seconds.
FACTOR, CONSTANT, UNTIMED = 10.0, 10.0, 1.0
#: A case's own limit once its mutant is killed (``--all-killers``): ``CASE_FACTOR`` x the baseline's time
#: of the case + ``CASE_CONSTANT`` seconds (a case the baseline did not time counts ``UNTIMED``). A case
#: that waits on its own long timeout under the mutant (a test's ``Barrier(timeout=10)``) is cut there.
CASE_FACTOR, CASE_CONSTANT = 10.0, 2.0
#: Seconds more for a mutant that collects its own cases (a session of its own, or a child forked
#: before collection): the collection the baseline's case times do not hold.
ALONE_MARGIN = 30.0
#: Seconds a sweep's session may take beyond the sum of its children's limits (its start and collection).
SESSION_MARGIN = 60.0


@dataclass(frozen=True)
class TimeLimit:
    """A row's time limit and where it came from."""

    #: Seconds the run may take.
    seconds: float
    #: Where the figure came from, in the words a TIMEOUT message quotes.
    source: str

    def plus(self, seconds: float, why: str = "") -> TimeLimit:
        """This limit with ``seconds`` more, its source saying so (``why``: for what)."""
        return TimeLimit(self.seconds + seconds, f"{self.source} + {seconds:g} s{why}")


def baseline_limit(gate_limits: Sequence[float | None], baseline_timeout: float) -> TimeLimit:
    """A baseline row's limit: the largest of ``gate_limits`` (the ``timeout`` of each gate reading it) when
    every one is set, else ``baseline_timeout`` (``[tool.seamgate]``)."""
    if gate_limits and all(limit is not None for limit in gate_limits):
        largest = max(limit for limit in gate_limits if limit is not None)
        return TimeLimit(largest, f"the baseline's limit: the largest `timeout` of the gates reading it ({largest:g} s)")
    return TimeLimit(baseline_timeout, f"the baseline's limit: baseline_timeout = {baseline_timeout:g} s from "
                                       f"[tool.seamgate] in pyproject.toml (default {BASELINE_TIMEOUT:g})")


def row_limit(baseline: RunOutcome | None, run_ids: Iterable[str] | None, gate_limits: Sequence[float | None],
              floor: float = GATE_FLOOR, factor: float = GATE_FACTOR) -> float:
    """A gate's changed row's limit: the largest limit a gate states, else ``factor`` x its expected duration.

    The expected duration is the baseline's time for the cases to run (``None``: every case) plus its
    fixed cost (the wall time its cases did not account for: start-up and collection); no baseline: ``floor``.
    """
    stated = [limit for limit in gate_limits if limit is not None]
    if stated and len(stated) == len(gate_limits):
        return max(stated)
    if baseline is None:
        derived = floor
    else:
        durations: Mapping[str, float] = {c.nodeid: c.duration for c in baseline.cases}
        fixed = max(0.0, baseline.wall - sum(durations.values()))
        chosen = durations.values() if run_ids is None else (durations.get(i, 0.0) for i in run_ids)
        derived = max(floor, factor * (fixed + sum(chosen)))
    return max([derived, *stated])


@dataclass(frozen=True)
class MutantTimes:
    """A sweep's baseline case times, from which each mutant row's limit is derived."""

    #: The baseline's duration of each case it timed, by node id.
    durations: Mapping[str, float]
    #: Every baseline case: the cases of a mutant that runs them all (``None``).
    every_case: Sequence[str]

    def limit(self, cases: Iterable[str] | None) -> TimeLimit:
        """``FACTOR`` x the baseline's time of ``cases`` (``None``: every case) + ``CONSTANT``, in seconds."""
        chosen = list(self.every_case if cases is None else cases)
        took = sum(self.durations.get(c, UNTIMED) for c in chosen)
        seconds = round(FACTOR * took + CONSTANT, 3)
        untimed = sum(1 for c in chosen if c not in self.durations)
        extra = f", {untimed} of them untimed, counted {UNTIMED:g} s each" if untimed else ""
        return TimeLimit(seconds, f"limit {seconds:g} s = {FACTOR:g} x {took:.3f} s (the baseline's time of its "
                                  f"{len(chosen)} case(s){extra}) + {CONSTANT:g} s")

    def case_limit(self, case: str) -> float:
        """A killed mutant's limit for ``case`` (``--all-killers``): ``CASE_FACTOR`` x its baseline time +
        ``CASE_CONSTANT``, in seconds."""
        return round(CASE_FACTOR * self.durations.get(case, UNTIMED) + CASE_CONSTANT, 3)

    def collecting(self, cases: Iterable[str] | None, *, child: bool) -> TimeLimit:
        """The limit of a mutant that collects its own cases: ``ALONE_MARGIN`` more (``child``: forked before
        collection in a batch's session, its source says what for; else a session of its own)."""
        return self.limit(cases).plus(ALONE_MARGIN, " for its collection" if child else "")


def mutant_rule() -> str:
    """The mutant rule in one line (a sweep's ``time_limit`` fact)."""
    return f"{FACTOR:g} x the baseline's time of a mutant's cases + {CONSTANT:g} s"


def case_rule() -> str:
    """The rule for a killed mutant's cases in one line (a ``--all-killers`` sweep's ``case_limit`` fact)."""
    return (f"once a mutant is killed, each case it still runs: {CASE_FACTOR:g} x the baseline's time of the case "
            f"+ {CASE_CONSTANT:g} s; past it the case is cut and counted a killer")


def session_limit(child_limits: Iterable[float]) -> float:
    """A sweep session's limit: its children's limits, one after another, plus ``SESSION_MARGIN``."""
    return sum(child_limits) + SESSION_MARGIN
