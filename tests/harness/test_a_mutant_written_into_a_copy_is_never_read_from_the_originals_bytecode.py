"""A mutant written into a copy of the project is what its session imports, never the original's bytecode.

A mutant keeps the original's size (``return 3`` -> ``return 4``), and Python takes a module's bytecode as current
when the source's size and modification time (to the second) are the ones it recorded. A sweep's copy holds the
baseline's bytecode of the original; a mutant written into it within the same second was imported as the original,
and its session judged the original code: a mutant of import-time code that a test kills came out SURVIVED
(``tests/harness/test_sweep_before_collection.py``, about half the runs on this machine, session 16). Here the
same second is made certain: the mutant's modification time is set to the original's.
"""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

from harness.sweep.sweep import write_mutant


def test_a_mutant_of_the_originals_size_and_second_is_imported_as_the_mutant(tmp_path: Path) -> None:
    module = tmp_path / "calc.py"
    module.write_text("FACTOR = 3\n", encoding="utf-8")
    py_compile.compile(str(module), doraise=True)  # the baseline's bytecode, in __pycache__ beside it
    stamp = module.stat().st_mtime_ns
    write_mutant(module, "FACTOR = 4\n")
    os.utime(module, ns=(stamp, stamp))  # the original's second: the bytecode's own check cannot tell them apart
    done = subprocess.run([sys.executable, "-c", "import calc; print(calc.FACTOR)"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4"
