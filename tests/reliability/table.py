"""``python -m tests.reliability.table``: run the whole reliability corpus and write docs/reliability.md.

Every row of the table is observed, not typed: the command writes each case's project into a
temp folder, runs seamgate on it exactly as the tests do (``corpus.run_case`` and the
``faults.SCENARIOS``), and records the exit code, the first line of the message, and whether the
project tree was byte-identical afterwards. ``--check`` runs the corpus and fails (exit 1) when
a case misbehaves, without writing.
"""

from __future__ import annotations

import argparse
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

from tests.reliability.corpus import CASES, Observed, describe_code, problems_of, run_case
from tests.reliability.faults import FAULT_CASES, SCENARIOS, SignalRun, Unavailable

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "reliability.md"

INTRO = """\
# Reliability: hostile input and faults

Every bad input and fault below was given to seamgate on a tiny fixture project (a package `calc`
with two functions, a few tests, `pyproject.toml` with `[tool.seamgate]`, `gates/*.yaml`,
`mutations/catalog/*.yaml`). For every case the project tree was hashed before and after
(`tests/reliability/project.py::tree_snapshot`: every path, its kind, mode and bytes, or its link
target; only the runner's own lock folder `.seamgate/` is left out). The corpus is data
(`tests/reliability/corpus.py`: gate files, config, catalog; `tests/reliability/faults.py`: runs
and the runner itself), driven by `tests/reliability/test_corpus.py` and `test_faults.py` in the
normal test suite, and by this command, which wrote this file:

    .venv/bin/python -m tests.reliability.table

Columns: **exit** is the `seamgate` process's exit status (`ExitCode`, `harness/exit_codes.py`; a
negative status is the signal that killed it); **message** is the first line of the message (the
gate's verdict and message for the cases that share one run); **tree unchanged** is `yes` when the
project tree was byte-identical afterwards; **as expected** is `yes` when exit, message, tree and
the case's own proof (below) all hold, and no traceback was printed.

How the runs are shared (each `seamgate run` starts a fork server that imports torch): the eleven
misbehaving-test cases are ONE run of one project whose gates each name a mutation that makes
`tests/test_fault.py` misbehave (exit 3, `GATE_ERROR`, is that run's code; each row shows its
gate's verdict). The in-process runs (`harness.cli.main.main`) share one fork server. The signal and
lock cases are four real `seamgate` console-script processes.

Proofs beyond the table:
- the YAML-tag cases: the tag would run `touch MARKER` outside the project; the marker does not
  exist afterwards (and `test_corpus.py` shows `yaml.unsafe_load` on the same file does create it);
- symlinked and `../` targets: the file outside the project is unchanged;
- a forking test: its child (which sleeps 60 s) is dead when the run has ended; a double-forking
  test (child calls `setsid`, grandchild sleeps 60 s): the grandchild is dead when the run has ended
  (the fork server's subreaper, `harness/rows/forkserver.py`; on the old code it outlived the run);
- SIGINT/SIGTERM: the gate that finished first is reported PASS, the test child is dead, the run's
  temp folder is gone; SIGKILL: the test child dies with the fork server, the temp folder left
  behind is swept by the next run;
- a flaky test: its baseline really ran twice with different verdicts;
- a full temporary disk: nothing is left in the temp folder afterwards;
- reports on devices: `FULL` and `NULL` are private device nodes made with `mknod` (char 1,7 and 1,3:
  what /dev/full and /dev/null are), so the system's own are never at risk; after the runs they are
  still character devices and the FIFO still a FIFO, and the FIFO's reader got the JUnit XML;
- a test that writes into the user's tree: its own write (`calc/ops.py`) is the one change the tree
  shows, the verdict names it, and the corpus restores the file before the final comparison;
- a test that closes every fd: no case with an empty node id other than the session-level error;
- a hanging baseline: the run ends within 60 s (the old fixed limit was 600 s);
- every fast case is also run in a real git checkout of the fixture
  (`test_corpus.py::test_in_a_git_checkout_...`): `git status --porcelain --ignored` stays empty
  and the content digest of every file is equal.
"""


def collect(workdir: Path) -> tuple[list[tuple[Observed, list[str]]], list[tuple[str, str, str]]]:
    """Run every case; (observed, problems) per case, and (name, input, reason) per unavailable one."""
    rows: list[tuple[Observed, list[str]]] = []
    unavailable: list[tuple[str, str, str]] = []
    signal_run = SignalRun(workdir / "signals")  # boots while the other cases run
    try:
        for index, case in enumerate(CASES):
            seen = run_case(case, workdir / f"case-{index:02d}")
            rows.append((seen, problems_of(case.code, case.message, seen)))
        for scenario, produce in SCENARIOS.items():
            _scenario_rows(scenario, signal_run.finish if scenario == "signals" else
                           lambda p=produce, s=scenario: p(workdir / s), rows, unavailable)
    finally:
        signal_run.kill()
    return rows, unavailable


def _scenario_rows(scenario: str, produce: Callable[[], list[Observed]], rows: list[tuple[Observed, list[str]]],
                   unavailable: list[tuple[str, str, str]]) -> None:
    cases = [c for c in FAULT_CASES if c.scenario == scenario]
    try:
        found = {row.name: row for row in produce()}
    except Unavailable as exc:
        unavailable += [(c.name, c.input, str(exc)) for c in cases]
        return
    for case in cases:
        seen = found[case.name]
        rows.append((seen, problems_of(case.code, case.message, seen)))


def normalise(text: str, workdir: Path) -> str:
    """Take out what changes from run to run: temp paths, pids, random suffixes."""
    text = text.replace(str(workdir), "<tmp>")
    text = re.sub(r"/tmp/tmp[a-z0-9_]{8}", "<tmp>", text)
    text = re.sub(r"seamgate-run-\d+-[a-z0-9_]+", "seamgate-run-PID-XXXX", text)
    text = re.sub(r"\.report\.json\.[a-z0-9_]+", ".report.json.XXXX", text)
    text = re.sub(r"\(pid \d+\)", "(pid N)", text)
    text = re.sub(r"\d+\.\d+s\b", "N.NNs", text)
    return text


def _cell(text: str) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 400 else text[:397] + "..."


def render(rows: Sequence[tuple[Observed, list[str]]], unavailable: Sequence[tuple[str, str, str]],
           workdir: Path, seconds: float) -> str:
    lines = [INTRO, "", "| case | input | exit | message (first line) | tree unchanged | as expected |",
             "|---|---|---|---|---|---|"]
    for seen, problems in rows:
        lines.append(f"| `{seen.name}` | {_cell(seen.input)} | {describe_code(seen.code)} | "
                     f"{_cell(normalise(seen.first_line, workdir))} | {'yes' if seen.unchanged else 'NO'} | "
                     f"{'yes' if not problems else 'NO: ' + _cell('; '.join(problems))} |")
    for name, what, reason in unavailable:
        lines.append(f"| `{name}` | {_cell(what)} | not run | {_cell(reason)} | - | not run |")
    behaved = sum(1 for _, p in rows if not p)
    missing = {name for name, _, _ in unavailable}
    how = [f"the full temporary disk {'could not be simulated here' if 'full-temp-disk' in missing else 'is a real 64 KiB tmpfs (`mount -t tmpfs -o size=64k`) as TMPDIR'}",
           f"the read-only checkout {'could not be simulated here' if 'read-only-checkout' in missing else 'is a real read-only bind mount (`mount -o remount,ro,bind`)'}"]
    lines += ["", f"{behaved} of {len(rows)} cases behaved as expected; {len(missing)} could not run here. "
              f"Produced in {seconds:.0f} s on {platform.system()} {platform.machine()} with Python "
              f"{platform.python_version()}; {'; '.join(how)}.", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability.table", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DOC, help=f"where to write the Markdown (default {DOC})")
    parser.add_argument("--check", action="store_true", help="run the corpus, write nothing, exit 1 on a misbehaving case")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="seamgate-reliability-"))
    started = time.perf_counter()
    try:
        rows, unavailable = collect(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    bad = [(seen.name, problems) for seen, problems in rows if problems]
    for name, problems in bad:
        print(f"{name}: {'; '.join(problems)}", file=sys.stderr)
    if not args.check:
        args.out.write_text(render(rows, unavailable, workdir, time.perf_counter() - started), encoding="utf-8")
        print(f"wrote {args.out}: {len(rows)} cases, {len(bad)} misbehaving, {len(unavailable)} not run")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
