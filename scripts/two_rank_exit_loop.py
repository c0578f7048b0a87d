"""Does a process of two emulated NCCL ranks abort at its interpreter's exit without its ``os._exit``?

The two-rank test (``tests/torch_cuda/test_nccl_process_groups_run_collectives_on_the_device.py``, its ``RANK``
program) ends each rank with ``os._exit(0)``: once, in a fresh-clone CI run, a rank aborted at exit ("terminate called
without an active exception", Gloo's threads). This runs that program with the ``os._exit`` taken out, ``--pairs``
times as two processes, and counts the exit codes, the outputs and any ``terminate`` in their error streams.

    PYTHONPATH=$PWD python scripts/two_rank_exit_loop.py [--pairs 20]
"""
from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = ROOT / "tests/torch_cuda/test_nccl_process_groups_run_collectives_on_the_device.py"


def rank_program() -> str:
    """The test's ``RANK`` program, its closing ``os._exit`` taken out (the interpreter exits as it would)."""
    program = TEST.read_text().split("RANK = r'''", 1)[1].split("'''", 1)[0]
    cut = program.index("import os\nos._exit(0)")
    return program[:cut]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20, help="how many pairs of ranks to run, one pair at a time")
    args = parser.parse_args()
    program = rank_program()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
    codes: collections.Counter[int] = collections.Counter()
    outputs: collections.Counter[str] = collections.Counter()
    terminated = 0
    with tempfile.TemporaryDirectory() as scratch:
        for pair in range(args.pairs):
            store = Path(scratch) / f"store{pair}"
            ranks = [subprocess.Popen([sys.executable, "-c", program, str(rank), str(store)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env) for rank in (0, 1)]
            for rank in ranks:
                out, err = rank.communicate(timeout=300)
                codes[rank.returncode] += 1
                outputs[out.strip()] += 1
                terminated += "terminate called" in err
            print(f"pair {pair + 1}: exit codes {[r.returncode for r in ranks]}", flush=True)
    print(f"{sum(codes.values())} processes: exit codes {dict(codes)}; 'terminate called' in {terminated}; "
          f"outputs {dict(outputs)}")
    return 0 if set(codes) == {0} and not terminated else 1


if __name__ == "__main__":
    sys.exit(main())
