"""docs/reliability.md is the corpus's own output: a row per case, each with its expected exit code,
a message, the tree unchanged and the case behaving (regenerate with
``python -m tests.reliability.table`` when a case is added or a message changes)."""

from __future__ import annotations

from pathlib import Path

from harness.exit_codes import ExitCode
from tests.reliability.corpus import CASES, Observed, describe_code
from tests.reliability.faults import FAULT_CASES
from tests.reliability.table import DOC, normalise, render


def _rows() -> dict[str, list[str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells
    return rows


def test_the_docs_table_has_one_row_per_corpus_case_with_its_expected_exit_code_and_the_tree_unchanged() -> None:
    rows = _rows()
    expected = [(c.name, c.code) for c in CASES] + [(c.name, c.code) for c in FAULT_CASES]
    assert sorted(rows) == sorted(name for name, _ in expected)
    for name, code in expected:
        _, _, exit_cell, message, unchanged, behaved = rows[name]
        assert (exit_cell, unchanged, behaved) == (describe_code(code), "yes", "yes"), name
        assert message and "Traceback" not in message, name


def test_the_table_escapes_pipes_and_takes_out_temp_paths_and_pids(tmp_path: Path) -> None:
    seen = Observed("c", "a | b", int(ExitCode.LOCKED), f"run (pid 4242) holds {tmp_path}/p/.seamgate/run.lock",
                    "", ())
    text = render([(seen, [])], [], tmp_path, 1.0)
    assert "| `c` | a \\| b | 6 (LOCKED) | run (pid N) holds <tmp>/p/.seamgate/run.lock | yes | yes |" in text
    assert normalise("seamgate-run-123-ab_c9", tmp_path) == "seamgate-run-PID-XXXX"
