"""Judge named mutants on this machine's arms, one pytest run each, in a copy of the tree.

For a mutant a CPU sweep cannot judge (its killers run on the cuda arm only), on the GPU machine:

    python3 scripts/device_mutant_check.py --out $OUT/mutants.json \
        'seam.capture_guard.xǁHostReadGuardǁ__torch_function____mutmut_34' -- tests/seam/test_x.py

Each mutant's text comes from ``harness.sweep.mutants.generate`` (mutmut's names and numbering, as
``seamgate sweep`` has them). The copy is the one every seamgate run gets (``harness.project_copy``:
git's files, no virtual environment, no results); the arms are ``SEAM_ARMS`` as set. ``--out`` gets,
per mutant, its id, the pytest exit code, the end of pytest's output and a verdict: ``killed`` when
a case failed (exit 1), ``survived`` when all passed, ``error`` otherwise. The unmutated tree is run
first: a case red there ends the check (exit 2) with no verdict, never a kill.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.sweep.mutants import generate  # noqa: E402
from harness.project_copy import materialize  # noqa: E402


def run(tree: Path, tests: list[str]) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=tree,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tree)})
    return proc.returncode, (proc.stdout + proc.stderr)[-1500:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file for the verdicts")
    parser.add_argument("mutants", nargs="+", help="mutant ids, then -- and the pytest paths")
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("give the pytest paths after --")
    cut = argv.index("--")
    args, tests = parser.parse_args(argv[:cut]), argv[cut + 1:]
    results = []
    with tempfile.TemporaryDirectory(prefix="mutant-check-") as tmp:
        tree = materialize(ROOT, Path(tmp) / "tree", None)
        code, tail = run(tree, tests)
        results.append({"id": "", "exit": code, "tail": tail})
        if code != 0:
            print(f"the unmutated tree is red (exit {code}): no verdict\n{tail}")
            Path(args.out).write_text(json.dumps(results, indent=1, ensure_ascii=False))
            return 2
        by_file: dict[str, dict[str, object]] = {}
        for mutant_id in args.mutants:
            module = mutant_id.split(".x", 1)[0]
            rel = module.replace(".", "/") + ".py"
            if rel not in by_file:
                by_file[rel] = {m.id: m for m in generate(ROOT, rel)}
            mutant = by_file[rel].get(mutant_id)
            if mutant is None:
                results.append({"id": mutant_id, "verdict": "error", "tail": f"no such mutant in {rel}"})
                continue
            original = (ROOT / rel).read_text(encoding="utf-8")
            (tree / rel).write_text(mutant.text, encoding="utf-8")
            try:
                code, tail = run(tree, tests)
            finally:
                (tree / rel).write_text(original, encoding="utf-8")
            verdict = "survived" if code == 0 else "killed" if code == 1 else "error"
            results.append({"id": mutant_id, "verdict": verdict, "exit": code, "tail": tail})
            print(f"{verdict:8s} {mutant_id}")
    Path(args.out).write_text(json.dumps(results, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
