"""A mutant of code that runs while the test files are imported (issue 26) is switched on BEFORE collection.

A decorator applied at module level, a table built at import: switched on after collection, such a
mutant would be judged with what its ORIGINAL function built. Its session forks the child before
collecting and the child switches it on first, so the answer is the mutated source's, without a
session of its own per mutant (a copy, a process, pytest's configuration each). Where a swept
module was imported before collection (a ``conftest.py`` imports it), its code already ran with no
mutant on: those mutants still run in sessions of their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from harness.rows import time_limits  # noqa: E402
from harness.sweep.sweep import Sweep, SweepOptions  # noqa: E402
from tests.reports.fixture_projects import shared_server, sweep_calc, write_project  # noqa: E402

pytestmark = pytest.mark.slow

# key() builds TABLE at import and reads it later: a mutant of key() applied everywhere stays
# consistent (it survives); applied only after import, lookup() misses the table (a false kill)
TABLE = {
    "pyproject.toml": "[tool.seamgate]\n",
    "calc/__init__.py": "",
    "calc/table.py": (
        "def key(x):\n    return x + 1\n\n\n"
        "TABLE = {key(1): 'one'}\n\n\n"
        "def lookup(x):\n    return TABLE[key(x)]\n\n\n"
        "def scale():\n    return 3\n\n\n"
        "FACTOR = scale()\n"
    ),
    "tests/__init__.py": "",
    "tests/test_table.py": (
        "from calc.table import FACTOR, lookup\n\n\n"
        "def test_lookup():\n    assert lookup(1) == 'one'\n\n\n"
        "def test_factor():\n    assert FACTOR == 3\n"
    ),
}
KEY_PLUS_2 = "+    return x + 2\n"
SCALE_4 = "+    return 4\n"


def sessions_of_their_own(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The mutants run in a session of their own, recorded as the sweep runs them."""
    seen: list[str] = []
    original = Sweep.run_alone

    def recording(self: Sweep, index: int | str, one):  # noqa: ANN001, ANN202 - Sweep.run_alone's shape
        seen.append(one.mutant.id)
        return original(self, index, one)

    monkeypatch.setattr(Sweep, "run_alone", recording)
    return seen


def test_a_mutant_of_import_time_code_is_judged_with_it_on_from_the_import(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    alone = sessions_of_their_own(monkeypatch)
    result = sweep_calc(write_project(tmp_path / "calc", TABLE))
    (consistent,) = [m for m in result.mutants if KEY_PLUS_2 in m.diff]
    (scaled,) = [m for m in result.mutants if SCALE_4 in m.diff]
    # consistent everywhere, key(1) + 1 == key(1) + 1: a kill here would be a partial application's
    assert (consistent.status, consistent.killers) == ("survived", ())
    assert (scaled.status, scaled.killers) == ("killed", ("tests/test_table.py::test_factor",))
    assert alone == [], f"run in sessions of their own: {alone}"


def test_a_swept_module_imported_before_collection_sends_its_import_time_mutants_to_sessions_of_their_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = sessions_of_their_own(monkeypatch)
    root = write_project(tmp_path / "calc", {**TABLE, "conftest.py": "import calc.table  # noqa: F401\n"})
    result = sweep_calc(root)
    (consistent,) = [m for m in result.mutants if KEY_PLUS_2 in m.diff]
    (scaled,) = [m for m in result.mutants if SCALE_4 in m.diff]
    assert (consistent.status, scaled.status) == ("survived", "killed")
    assert consistent.id in alone and scaled.id in alone


def test_planning_reads_each_mutants_change_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a change costs two parses of the file; the sweep used to read each mutant's twice
    (once for where it runs, once for its cases): 3.6 s of planning on toolz's 137 mutants."""
    import harness.reach.reach as reach_module
    import harness.sweep.sweep as sweep_module
    from harness.reach.reach import Reach
    from harness.sweep.mutants import Mutant

    reads: list[str] = []
    original = reach_module.change_regions

    def counting(before: str, after: str):  # noqa: ANN202 - change_regions' shape
        reads.append(after)
        return original(before, after)

    monkeypatch.setattr(reach_module, "change_regions", counting)
    monkeypatch.setattr(sweep_module, "change_regions", counting)
    source = "def add(a, b):\n    return a + b\n\n\ndef inc(a):\n    return a + 1\n"
    text = source.replace("a + b", "a - b")
    mutant = Mutant(id="calc.ops.x_add__mutmut_1", file="calc/ops.py", line=2, column=12, end_line=2, end_column=17,
                    mutator="binop", text=text, diff="", function="x_add", function_source="")
    reach = Reach.from_data({"files": {"calc/ops.py": {"t::add": [2], "t::inc": [6]}}, "cases": ["t::add", "t::inc"]})
    sweep = Sweep(tmp_path, SweepOptions(paths=("calc",)))
    assert sweep.cases_for(mutant, source, reach, ["t::add", "t::inc"]) == (frozenset({"t::add"}), False)
    assert len(reads) == 1, f"the change was read {len(reads)} times"


def test_a_sweep_runs_mutmuts_generation_once_per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutants and the trampolined file come from one pass of mutmut's ``create_mutations`` (libcst's
    pass over the file: 3.3 s on cachetools' ``_cached.py``, and the sweep made it twice)."""
    import harness.sweep.mutants as mutants_module

    passes: list[str] = []
    original = mutants_module._create_all

    def counting(root: Path, rel: str, source: str):  # noqa: ANN202 - _create_all's shape
        passes.append(rel)
        return original(root, rel, source)

    monkeypatch.setattr(mutants_module, "_create_all", counting)
    result = sweep_calc(write_project(tmp_path / "calc", TABLE))
    assert {m.status for m in result.mutants} >= {"killed", "survived"}  # the premise: mutants ran
    assert sorted(passes) == ["calc/__init__.py", "calc/table.py"]  # each swept file once


def test_one_pass_gives_what_generate_and_trampolined_give_apart(tmp_path: Path) -> None:
    from harness.sweep.mutants import generate, generate_and_trampoline, trampolined

    root = write_project(tmp_path / "calc", TABLE)
    mutants, code = generate_and_trampoline(root, "calc/table.py")
    assert mutants == generate(root, "calc/table.py")
    assert code == trampolined(root, "calc/table.py")[0]


def test_the_mutants_are_generated_while_the_baseline_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither reads the other: the baseline (the fork server's start, the suite with reach) and mutmut's
    generation (libcst) overlap. The baseline here waits for the generation: one after the other, it
    would wait in vain."""
    import threading

    generated = threading.Event()
    seen: list[bool] = []
    original_generate, original_baseline = Sweep.generate, Sweep.baseline

    def generate(self: Sweep, files):  # noqa: ANN001, ANN202 - Sweep.generate's shape
        found = original_generate(self, files)
        generated.set()
        return found

    def baseline(self: Sweep, kept):  # noqa: ANN001, ANN202 - Sweep.baseline's shape
        seen.append(generated.wait(timeout=20.0))
        return original_baseline(self, kept)

    monkeypatch.setattr(Sweep, "generate", generate)
    monkeypatch.setattr(Sweep, "baseline", baseline)
    result = sweep_calc(write_project(tmp_path / "calc", TABLE))
    assert {m.status for m in result.mutants} >= {"killed", "survived"}  # the premise: the sweep ran
    assert seen == [True], "the generation waited for the baseline"


def test_a_mutant_killed_in_its_first_file_never_imports_the_others(tmp_path: Path) -> None:
    """Collecting is most of such a child's time (cachetools' 12 test files: ~1.3 s under load), so its
    files are collected one at a time, the likeliest killer's first, each run before the next."""
    imports = tmp_path / "imports.txt"
    slow = (
        "import os\nimport time\n\n"
        f"with open({str(imports)!r}, 'a') as seen:\n    seen.write(os.environ.get('MUTANT_UNDER_TEST', '') + '\\n')\n\n"
        "from calc.table import FACTOR  # noqa: E402\n\n\n"
        "def test_slow_factor():\n    time.sleep(0.5)\n    assert FACTOR == 3\n"
    )
    root = write_project(tmp_path / "calc", {**TABLE, "tests/test_slow.py": slow})
    result = sweep_calc(root)
    (scaled,) = [m for m in result.mutants if SCALE_4 in m.diff]
    (consistent,) = [m for m in result.mutants if KEY_PLUS_2 in m.diff]
    assert (scaled.status, scaled.killers) == ("killed", ("tests/test_table.py::test_factor",))
    importers = imports.read_text().splitlines()
    assert consistent.status == "survived" and consistent.id in importers  # the premise: a survivor reads every file
    assert scaled.id not in importers, "the killed mutant's child imported a file after its killer's"


def test_the_sessions_forking_before_collection_share_one_clean_check(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Their children each collect their own files, so no session's own check sees the children's
    context; one check (a whole collection and run of their cases, no mutant on) serves them all."""
    checks: list[bool] = []
    original = Sweep.session

    def recording(self: Sweep, index, entries, union, tree, before, files, clean=True):  # noqa: ANN001, ANN202
        if clean:
            checks.append(before)
        return original(self, index, entries, union, tree, before, files, clean)

    monkeypatch.setattr(Sweep, "session", recording)
    many = "".join(f"def f{n}():\n    return {n}\n\n\nF{n} = f{n}()\n\n\n" for n in range(10))
    tests = "from calc.many import " + ", ".join(f"F{n}" for n in range(10)) + "\n\n\n" + "".join(
        f"def test_f{n}():\n    assert F{n} == {n}\n\n\n" for n in range(10))
    root = write_project(tmp_path / "calc", {**TABLE, "calc/many.py": many, "tests/test_many.py": tests})
    result = Sweep(root, SweepOptions(paths=(str(root / "calc"),), jobs=2, progress="off"),
                   launcher=shared_server()).run()
    import_time = [m for m in result.mutants if m.file == "calc/many.py"]
    assert len(import_time) >= 10 and all(m.status == "killed" for m in import_time), [m.status for m in import_time]
    assert checks.count(True) == 1, f"clean checks of sessions forking before collection: {checks.count(True)}"


def test_a_timeout_of_a_mutant_switched_on_before_collection_counts_its_collection_margin(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its child's limit holds ``ALONE_MARGIN`` seconds more (it collects); the reason says the limit it had."""
    monkeypatch.setattr(time_limits, "CONSTANT", 1.0)
    monkeypatch.setattr(time_limits, "ALONE_MARGIN", 10.0)
    # the mutant's own limit ends the spin here, not the case's (a killed mutant's cases have their own:
    # tests/harness/test_sweep_cuts_slow_cases_of_killed_mutants.py)
    monkeypatch.setattr(time_limits, "CASE_CONSTANT", 1000.0)
    # The child collects first the file holding the cheapest case (file_order: by baseline time). test_spin
    # sleeps in the baseline so that test_table.py (test_lookup, test_factor) surely comes first: with all three
    # instant, the file order was a coin toss, and CI's run of 0cdb7f7 put test_spin.py first (it spun to the
    # limit; test_factor never ran: a timeout, no killer). Seen red with test_table.py's cases made the slower.
    spin = {**TABLE, "tests/test_spin.py": (
        "import time\n\nfrom calc.table import FACTOR\n\n\ndef test_spin():\n    time.sleep(0.3)\n"
        "    while FACTOR != 3:\n        pass\n")}
    result = sweep_calc(write_project(tmp_path / "calc", spin), all_killers=True)
    (scaled,) = [m for m in result.mutants if SCALE_4 in m.diff]
    # the premise: test_factor fails, then test_spin spins until the limit
    assert scaled.status == "killed" and "before its time limit" in scaled.reason, (scaled.status, scaled.reason)
    assert "+ 1 s + 10 s for its collection" in scaled.reason, scaled.reason


def test_a_mutant_that_breaks_collection_is_an_error_naming_the_file_it_broke(tmp_path: Path) -> None:
    """As in a session of its own, the file that failed to collect is among its killers."""
    broken = {**TABLE, "calc/letter.py": "def idx():\n    return 6 // 3\n\n\nLETTER = 'abc'[idx()]\n",
              "tests/test_letter.py": "from calc.letter import LETTER\n\n\ndef test_letter():\n    assert LETTER == 'c'\n"}
    result = sweep_calc(write_project(tmp_path / "calc", broken))
    (divided,) = [m for m in result.mutants if "+    return 6 / 3\n" in m.diff]
    assert divided.status == "error", (divided.status, divided.reason)  # 'abc'[2.0]: a TypeError at import
    assert "tests/test_letter.py" in divided.killers, divided.killers


def test_with_all_killers_a_mutant_that_breaks_several_files_names_every_file_it_broke(tmp_path: Path) -> None:
    """As a session of its own collects every file and lists each that failed, the full kill matrix names every
    broken file, not only the first (cachetools' killer count fell by ~200 when the child stopped there)."""
    broken = {**TABLE, "calc/letter.py": "def idx():\n    return 6 // 3\n\n\nLETTER = 'abc'[idx()]\n",
              "tests/test_letter.py": "from calc.letter import LETTER\n\n\ndef test_letter():\n    assert LETTER == 'c'\n",
              "tests/test_letter_too.py": "from calc.letter import LETTER\n\n\ndef test_too():\n    assert LETTER\n"}
    root = write_project(tmp_path / "calc", broken)
    (every,) = [m for m in sweep_calc(root, all_killers=True).mutants if "+    return 6 / 3\n" in m.diff]
    assert every.status == "error", (every.status, every.reason)
    assert {"tests/test_letter.py", "tests/test_letter_too.py"} <= set(every.killers), every.killers
    # fresh: a default sweep would otherwise reuse the full matrix's outcome (a superset, rightly reused)
    (first,) = [m for m in sweep_calc(root, fresh=True).mutants if "+    return 6 / 3\n" in m.diff]
    assert first.status == "error" and len({"tests/test_letter.py", "tests/test_letter_too.py"} & set(first.killers)) == 1
