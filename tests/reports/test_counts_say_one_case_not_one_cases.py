"""A count of one reads in the singular: "1 case", never "1 cases" (issue 27, item 8)."""

from __future__ import annotations

import re
from pathlib import Path

from reports.outcome import CaseOutcome, count_phrase, counted

ROOT = Path(__file__).resolve().parents[2]
#: An f-string placeholder followed by a plural noun: `{len(x)} cases`, `{n} cells`, `{len(files)} files`.
BARE_PLURAL = re.compile(r"\}\s+(cases|cells|assertions|mutants|gates|files|rows|checks|entries|node ids|survivors|lines)\b")


def test_one_case_with_one_assertion_is_stated_in_the_singular():
    one = [CaseOutcome("t::a", "failed", assertions_passed=0, assertions_failed=1)]
    assert count_phrase(one) == "1 case, 0 passed, 1 assertion, 1 failed"


def test_one_case_with_uncounted_assertions_is_stated_in_the_singular():
    one = [CaseOutcome("t::a", "failed", assertions_passed=None)]
    assert count_phrase(one) == "1 case, 0 passed, 1 failed, assertions not counted"


def test_counted_uses_the_plural_for_zero_and_many_and_the_singular_for_one():
    assert [counted(n, "case") for n in (0, 1, 2)] == ["0 cases", "1 case", "2 cases"]
    assert [counted(n, "entry", "entries") for n in (1, 3)] == ["1 entry", "3 entries"]


def test_no_message_in_harness_or_reports_puts_a_bare_count_before_a_plural_noun():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for folder in ("harness", "reports") for path in sorted((ROOT / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if BARE_PLURAL.search(line)]
    assert not found, ("these messages print '1 cases' for a count of one; write "
                       "counted(n, 'case') (reports/outcome.py) instead:\n" + "\n".join(found))
