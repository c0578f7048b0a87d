"""The sweep child's one-line failure report works on pytest 8's report path, not only pytest 9's."""

from __future__ import annotations

from typing import Any

import pytest
from _pytest import reports
from _pytest.runner import CallInfo

from harness.sweep import pytest_sweep


def _pytest8_from_item_and_call(cls: Any, item: pytest.Item, call: CallInfo[None]) -> reports.TestReport:
    """pytest 8.3's ``TestReport.from_item_and_call`` for a failed call, as it builds ``longrepr``: inline,
    with no ``_format_failed_longrepr`` to replace."""
    excinfo = call.excinfo
    if excinfo is None:
        raise AssertionError("the premise: the call failed")
    longrepr = item.repr_failure(excinfo) if call.when == "call" else item._repr_failure_py(excinfo, style="auto")
    return cls(item.nodeid, item.location, {}, "failed", longrepr, call.when, [], call.duration, call.start, call.stop)


def _fail() -> None:
    raise ValueError("the mutant broke it " + "x" * 50)


@pytest.mark.parametrize("version", ["pytest 8", "pytest 9"])
def test_a_failed_cases_report_is_one_line_on_pytest_8_and_9(version: str, request: pytest.FixtureRequest,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    item = request.node
    monkeypatch.setattr(item, "repr_failure", item.repr_failure)  # restored after the test, whatever it sets
    monkeypatch.setattr(item, "_repr_failure_py", item._repr_failure_py)
    with monkeypatch.context() as pytest8:  # undone before this test's own report is made
        if version == "pytest 8":
            pytest8.delattr(reports, "_format_failed_longrepr", raising=False)
            pytest8.setattr(reports.TestReport, "from_item_and_call", classmethod(_pytest8_from_item_and_call))
        pytest_sweep.short_failures([item])
        call = CallInfo.from_call(_fail, when="call")
        report = reports.TestReport.from_item_and_call(item, call)
    assert report.failed
    assert str(report.longrepr) == "ValueError: the mutant broke it " + "x" * 50
