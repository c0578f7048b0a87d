"""Hand-planted realistic defects, round 2: each applied alone to a copy of the tree, its tests run.

The defects a person writes (a node id matched by prefix, a tolerance in a comparison, the segment
closed before its forks are joined), not mutmut's one-token flips: 36 in the judges, 6 in the seam,
3 in the drivers (``docs/mutation-score.md``, "Round 2"). Each is one exact text replacement; one
whose old text no longer stands once in its file is STALE. The copy is the one every seamgate run
gets (``harness.project_copy.materialize``); each defect runs its selection with ``-x``, so a kill stops
at the first red case.

    .venv/bin/python scripts/planted_defects.py            # all 45, about 8 min on 2 cores
    .venv/bin/python scripts/planted_defects.py J12 S38    # some

Exit 1 when a defect not listed as equivalent survives, or one is STALE.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.project_copy import materialize  # noqa: E402

E, R, L, P = "harness/judge/evaluate.py", "harness/judge/redfirst.py", "harness/judge/lane.py", "harness/plan/planner.py"

DEFECTS = [
    # ---------------- evaluate ----------------
    ("J12", E, "        return set(red.nodeids)\n",
     "        return {c.nodeid for c in run.cases if any(c.nodeid.startswith(n) for n in red.nodeids)} | set(red.nodeids)\n",
     "an expected node id matches by prefix (test_a also takes in test_ab / test_a[x])"),
    ("J13", E, "        return set(red.nodeids)\n",
     "        return {c.nodeid for c in run.cases if any(c.nodeid == n or c.nodeid.endswith('/' + n) for n in red.nodeids)} | set(red.nodeids)\n",
     "node ids matched by path suffix (rootdir tolerance): a same-named file in another folder counts as expected"),
    ("J14", E, "    problems += count_problems(expect.counts, expect, run)\n",
     "    problems += count_problems(gate.expect.counts, gate.expect, run)\n",
     "{arm} not substituted in the counts branch (counts read the raw expectation)"),
    ("J15", E, "    still = sum(1 for c in run.cases if c.kind == \"passed\")\n",
     "    still = sum(1 for c in run.cases if c.kind in (\"passed\", \"skipped\"))\n",
     "the PASS line counts skipped cases as 'still passing'"),
    ("J16", E, "    if run.errors:\n        first = run.errors[0]\n",
     "    errors = [e for e in run.errors if '::' not in e.nodeid]\n    if errors:\n        first = errors[0]\n",
     "only collection errors make a run ERROR; setup/teardown errors of a case are ignored"),
    ("J17", E, "    owed = {c.nodeid for c in run.owed}\n",
     "    owed = {c.nodeid for c in run.of_kind(\"owed\", \"skipped\")}\n",
     "a plain skip is treated like OWED (not measured) in the red-set check only, then never reported"),
    ("J18", E, "    owed = run.owed\n    if owed:\n",
     "    names = expected_part(expect, run)\n    owed = tuple(c for c in run.owed if names is None or c.nodeid in names)\n    if owed:\n",
     "an OWED case outside the expected part is ignored"),
    ("J19", E, "    verdicts = set(report.verdicts())\n",
     "    verdicts = set({o.gate: o.verdict for o in report.outcomes}.values())\n",
     "exit code from one verdict per gate (the last arm wins)"),
    ("J20", E, "    if run.end == \"timeout\":\n",
     "    if run.end == \"timeout\" and not run.cases:\n",
     "a run that timed out after writing its report is judged as if it completed"),
    ("J21", E, "    red = {c.nodeid for c in run.red}\n    owed =",
     "    red = {c.nodeid for c in run.of_kind(\"failed\", \"xpassed\")}\n    owed =",
     "an xpassed case (strict xfail) is red in the red-set check"),
    ("J22", E, "    extra = sorted(red - expected)\n",
     "    named_files = {n.split('::')[0] for n in expected}\n    extra = sorted(n for n in red - expected if n.split('::')[0] in named_files)\n",
     "extra reds only reported in the files the expectation touches (collateral reds elsewhere ignored)"),
    ("J23", E, "            if want is not None and observed[name] != want]\n",
     "            if want and observed[name] != want]\n",
     "a count of 0 asked for is never checked (truthiness)"),
    ("J24", E, "    green = sorted(expected - red - owed - set(not_run))\n",
     "    green = sorted((expected & seen) - red - owed)\n    not_run = sorted(n for n in expected if n.split('::')[0] not in {c.file for c in run.cases})\n",
     "an expected case is 'not run' only when its whole file did not run (a renamed case vanishes)"),
    # ---------------- redfirst ----------------
    ("R6", R, "    still_red = sorted(c.nodeid for c in red_of_baseline(green_run))\n",
     "    part = {c.nodeid for c in red_run.red}\n    still_red = sorted(c.nodeid for c in red_of_baseline(green_run) if c.nodeid in part)\n",
     "green_after checked only over the cases that were red on the old code"),
    ("R7", R, "    bad = trouble(green_run, \"working tree\")\n",
     "    bad = trouble(green_run, \"working tree\") if gate.expect.green_after else None\n",
     "the working-tree run's trouble (timeout/crash/error) only checked when green_after is asked"),
    ("R8", R, "        inside = case.kind == \"error\" and case.nodeid and \"::\" not in case.nodeid and \\\n            any(case.nodeid == n or case.nodeid.startswith(n + \"/\") for n in named)\n        now = [c for c in green_run.cases if \"::\" in c.nodeid\n               and (c.file == case.nodeid or c.file.startswith(case.nodeid + \"/\"))] if inside else []\n",
     "        inside = case.kind == \"error\" and case.nodeid and \\\n            any(case.file == n or case.file.startswith(n + \"/\") for n in named)\n        now = [c for c in green_run.cases if \"::\" in c.nodeid\n               and (c.file == case.file or c.file.startswith(case.file + \"/\"))] if inside else []\n",
     "collection_errors_are_red also turns a setup/teardown error of a case in a named file into reds"),
    ("R9", R, "    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:\n        tar.extractall(dest, filter=\"data\")\n    for rel in overlay:\n        _overlay_one(project_root, dest, rel)\n",
     "    for rel in overlay:\n        _overlay_one(project_root, dest, rel)\n    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:\n        tar.extractall(dest, filter=\"data\")\n",
     "the overlay is laid before the ref is extracted (the ref's old copy of a test file wins)"),
    ("R10", R, "    still_red = sorted(c.nodeid for c in red_of_baseline(green_run))\n",
     "    still_red = sorted(c.nodeid for c in green_run.red)\n",
     "green_after counts failures only, not errors"),
    ("R11", R, "        return replace(red.with_verdict(*bad), runs=(red_run, green_run))\n",
     "        return replace(red, runs=(red_run, green_run))\n",
     "the working-tree error path returns the red run's (PASS) verdict"),
    ("R12", R, "        if not now:\n            cases.append(case)\n            continue\n",
     "        if not now:\n            if not inside:\n                cases.append(case)\n            continue\n",
     "a named file's collection error the working tree cannot collect either is dropped, not kept as an error"),
    # ---------------- lane ----------------
    ("L7", L, "    differs = [k for k in keys if k not in control or k not in subject or control[k] != subject[k]]\n",
     "    import math\n\n    def same(a, b):\n        if isinstance(a, (int, float)) and isinstance(b, (int, float)):\n            return math.isclose(a, b, rel_tol=1e-2)\n        return a == b\n\n    differs = [k for k in keys if k not in control or k not in subject or not same(control[k], subject[k])]\n",
     "numbers compared with a 1% tolerance (1000 copies vs 1001 is 'same')"),
    ("L8", L, "    differs = [k for k in keys if k not in control or k not in subject or control[k] != subject[k]]\n",
     "    def same(a, b):\n        if isinstance(a, list) and isinstance(b, list):\n            return all(x == y for x, y in zip(a, b))\n        return a == b\n\n    differs = [k for k in keys if k not in control or k not in subject or not same(control[k], subject[k])]\n",
     "per-step list values compared with zip (only the first N steps of the shorter side)"),
    ("L9", L, "    differs = [k for k in keys if k not in control or k not in subject or control[k] != subject[k]]\n",
     "    def same(a, b):\n        if isinstance(a, list) and isinstance(b, list):\n            return set(a) == set(b)\n        return a == b\n\n    differs = [k for k in keys if k not in control or k not in subject or not same(control[k], subject[k])]\n",
     "list values compared as sets (order and multiplicity ignored)"),
    ("L10", L, "    env = {**gate.env, **side.env, \"SEAM_ARMS\": arm}\n",
     "    env = {\"SEAM_ARMS\": arm, **gate.env, **side.env}\n",
     "a SEAM_ARMS in the gate's env overrides the arm being judged"),
    ("L11", L, "    ok = result.values_identical and result.same_lane == wanted_same\n",
     "    ok = (result.values_identical or not wanted_same) and result.same_lane == wanted_same\n",
     "values not checked when a DIFFERENT lane is expected"),
    ("L12", L, "    env = {**gate.env, **side.env, \"SEAM_ARMS\": arm}\n",
     "    env = {**gate.env, **side.env, **({\"SEAM_ARMS\": arm} if role == \"subject\" else {})}\n",
     "the arm is told to the subject only"),
    ("L13", L, "        if side.end == \"timeout\":\n",
     "        if side.end == \"timeout\" and side.result is None:\n",
     "a side that timed out but left a result is judged on it"),
    # ---------------- planner ----------------
    ("P1", P, "    mine = {g.id for i, g in enumerate(ordered) if i % n == k - 1}\n",
     "    whole = len(ordered) - len(ordered) % n\n    mine = {g.id for i, g in enumerate(ordered[:whole]) if i % n == k - 1}\n",
     "--shard drops the remainder after the last full round"),
    ("P2", P, "                selects.setdefault(check.row, []).append(check.gate.select)\n",
     "                selects.setdefault(check.row, [check.gate.select])\n",
     "a shared mutation row runs only the first reader's selection"),
    ("P3", P, "            selects.setdefault(check.row.baseline, []).append(check.gate.select)\n",
     "            if check.row.source.kind == \"tree\":\n                selects.setdefault(check.row.baseline, []).append(check.gate.select)\n",
     "the baseline row's union leaves out the mutation gates' selections"),
    ("P4", P, "            if check.row.source.kind != \"tree\":\n",
     "            if check.row.source.kind not in (\"tree\", \"ref\"):\n",
     "a red-first gate's ref row is not planned"),
    ("P5", P, "    return [replace(g, arms=kept) for g in gates if (kept := tuple(a for a in g.arms if a in wanted))]\n",
     "    return [replace(g, arms=tuple(a for a in g.arms if a in wanted) or g.arms) for g in gates]\n",
     "--arm that names none of a gate's arms keeps the gate on all its arms"),
    ("P6", P, "    unknown = [i for i in wanted if i not in known]\n    if unknown:\n",
     "    unknown = [i for i in wanted if i not in known]\n    if unknown and len(unknown) == len(wanted):\n",
     "--gate with one unknown id among known ones is silently ignored"),
    ("P7", P, "        if not self.gate.select or self.owed is not None:\n",
     "        if not self.gate.select:\n",
     "an OWED check still reads (and plans) a row"),
    ("P8", P, "    chosen = shard_gates(select_gates(gates, ids), shard)\n",
     "    chosen = select_gates(shard_gates(gates, shard), ids) if ids else shard_gates(gates, shard)\n",
     "--shard applied before --gate"),
]

DEFECTS += [
    ("J25", E, "    if not nodeids or not any(\"{arm}\" in n for n in nodeids):\n",
     "    if not nodeids or \"{arm}\" not in nodeids[0]:\n",
     "{arm} substituted only when the first node id has it"),
]

DEFECTS += [
    # ---------------- seam (the lead's) ----------------
    ("S38", "seam/scope.py", "        self._join_outstanding_forks()\n        self.graph.add_segment(self.backend.end_capture(self.queue))\n",
     "        seg = self.backend.end_capture(self.queue)\n        self._join_outstanding_forks()\n        self.graph.add_segment(seg)\n",
     "the scope closes the segment before joining its outstanding forks"),
    ("S39", "seam/scope.py", "        self._outstanding.pop(side.id, None)\n", "        self._outstanding.clear()\n",
     "note_join forgets every outstanding fork, not just that one"),
    ("S40", "seam/graph.py", "            now = address_of(inputs[i] if inputs is not None else kept)\n", "            now = address_of(kept)\n",
     "replay(inputs=...) checks the captured inputs' addresses, not the given ones"),
    ("S41", "seam/graph.py", "                with self.backend.use_queue(queue):\n                    item()\n",
     "                with self.backend.use_queue(self.backend.default_queue()):\n                    item()\n",
     "a PIECEWISE replay runs its breaks on the default queue, not the given one"),
    ("S42", "seam/scope.py", "        self.graph.add_break(fn)\n        result = fn()\n",
     "        self.graph.add_break(fn)\n        self._open_segment()\n        result = fn()\n        self._close_segment()\n",
     "a break's function captured in a segment of its own"),
    ("S43", "seam/capture_guard.py",
     '    if blocking and "device" in (dst, src) and {dst, src} != {"device"} and "pageable" not in (dst, src):',
     '    if blocking and dst == "device" and src == "pinned":',
     "the blocking-copy refusal only for pinned-to-device"),
    # ---------------- drivers (the lead's) ----------------
    ("D19", "drivers/fingerprint.py", '        digest.update(t.detach().to("cpu").contiguous().numpy().tobytes())\n',
     '        digest.update(repr(float(t.detach().to("cpu").double().sum())).encode())\n',
     "the output digest over each output's sum instead of its bytes"),
    ("D20", "drivers/resident.py", "            self.resident.v[:, slot].zero_()\n", "",
     "reset_slot zeroes the keys but keeps the values"),
    ("D21", "drivers/fingerprint.py", """    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}")
    return BACKENDS[name]()""", """    return BACKENDS.get(name, EmulatedBackend)()""",
     "an unknown backend name falls back to the emulator"),
]

#: Reviewed as behaviour-preserving, with why (no test can tell them apart).
EQUIVALENT = {
    "R10": "trouble(green_run) makes any error an ERROR before green_after is read",
    "L13": "Executor.call returns a result only from a child that completed with exit 0",
}


def _judge_tests() -> list[str]:
    """The judges' CI sweep selection (``scripts/sweep_judges.py``) and the two suites of the runner's judges."""
    spec = importlib.util.spec_from_file_location("sweep_judges", ROOT / "scripts" / "sweep_judges.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return [*module.TESTS, "tests/harness/test_redfirst.py", "tests/harness/test_lane.py"]


def selection(path: str) -> list[str]:
    """The tests a defect in ``path`` runs against."""
    if path.startswith("harness/"):
        return _judge_tests()
    if path.startswith("seam/"):
        return ["tests/seam", "tests/drivers", "tests/fidelity"]
    return ["tests/drivers", "tests/harness", "tests/seam"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", help="defect ids (default: all)")
    args = parser.parse_args()
    chosen = [d for d in DEFECTS if not args.ids or d[0] in args.ids]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="planted-") as tmp:
        tree = materialize(ROOT, Path(tmp) / "tree", None)
        for did, rel, old, new, what in chosen:
            original = (tree / rel).read_text(encoding="utf-8")
            if original.count(old) != 1:
                print(f"{did:4s} STALE     {what} (its old text stands {original.count(old)} times in {rel})", flush=True)
                bad += 1
                continue
            (tree / rel).write_text(original.replace(old, new), encoding="utf-8")
            started = time.perf_counter()
            try:
                proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider",
                                       *selection(rel)], cwd=tree, capture_output=True, text=True,
                                      env={**os.environ, "PYTHONPATH": str(tree)})
            finally:
                (tree / rel).write_text(original, encoding="utf-8")
            lines = proc.stdout.strip().splitlines()
            if proc.returncode == 1:
                verdict = "killed"
                note = next((line.split(" - ")[0] for line in lines if line.startswith(("FAILED", "ERROR"))), "")
            elif proc.returncode == 0:
                verdict = "EQUIVALENT" if did in EQUIVALENT else "SURVIVED"
                note = EQUIVALENT.get(did, "")
            else:
                verdict, note = f"ERROR {proc.returncode}", lines[-1] if lines else ""
            bad += verdict not in ("killed", "EQUIVALENT")
            print(f"{did:4s} {verdict:10s} {time.perf_counter() - started:5.1f} s  {what}  {note}", flush=True)
    print(f"{len(chosen)} defects, {bad} survived unexplained, stale or in error")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
