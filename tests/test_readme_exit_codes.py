"""The exit-code tables of README.md and docs/gates.md are harness/exit_codes.py in words: every ExitCode member,
its number, nothing else, and a timeout sits where the runner puts it (issue 27, item 8)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.exit_codes import ExitCode

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Every doc with an exit-code table (a `| code | name | ... |` header).
TABLES = (README, ROOT / "docs" / "gates.md")
ROW = re.compile(r"^\| (\d+) \| ([A-Z_]+) \| (.*) \|$")


def _table(doc: Path = README) -> dict[str, tuple[int, str]]:
    """{name: (code, when)} of the doc's exit-code table (the one under a `| code | name |` header)."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("| code | name |")), None)
    if start is None:
        raise AssertionError(f"{doc} has no exit-code table (a '| code | name |' header)")
    rows: dict[str, tuple[int, str]] = {}
    for line in lines[start + 1:]:
        if rows and not line.startswith("|"):
            break
        if (found := ROW.match(line)) is not None:
            rows[found.group(2)] = (int(found.group(1)), found.group(3))
    return rows


@pytest.mark.parametrize("doc", TABLES, ids=lambda p: p.name)
def test_the_docs_exit_code_table_lists_exactly_the_exit_code_members_with_their_numbers(doc: Path):
    table = {name: code for name, (code, _) in _table(doc).items()}
    assert table == {m.name: m.value for m in ExitCode}, (
        f"{doc}'s exit-code table differs from harness/exit_codes.py; write one row per ExitCode member")


def test_the_readme_puts_a_gate_runs_timeout_under_gate_error_and_a_baseline_timeout_under_baseline_red():
    # harness/run/runner.py: a baseline that did not complete (timeout, crash) is red, so nothing is judged
    # (BASELINE_RED); a gate's own run that times out is Verdict.TIMEOUT, which harness/exit_mapping.py maps to GATE_ERROR.
    table = _table()
    assert "timed out" in table["BASELINE_RED"][1] and "baseline_timeout" in table["BASELINE_RED"][1]
    assert "timeout" in table["GATE_ERROR"][1] and "baseline" in table["GATE_ERROR"][1]
