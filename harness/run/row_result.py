"""A row's result: the pytest run of its source state, or the exception that kept the row from running.

A row whose tree cannot be made (a rotted mutation, a bad ref) is not an error of the run: each gate
reading it is an ERROR naming why (``harness/run/materialized.py``, ``tree_error``). ``RowResult`` holds
exactly one of the two, so a reader asks it instead of testing a union.
"""

from __future__ import annotations

from dataclasses import dataclass

from reports.outcome import RunOutcome


@dataclass(frozen=True)
class RowResult:
    """Exactly one of ``outcome`` (the row ran) and ``error`` (why it could not)."""

    outcome: RunOutcome | None = None
    error: Exception | None = None

    def __post_init__(self) -> None:
        if (self.outcome is None) == (self.error is None):
            raise ValueError("a row's result holds exactly one of an outcome and an error")

    @classmethod
    def ran(cls, outcome: RunOutcome) -> RowResult:
        """The result of a row that ran (whatever its end: completed, timeout, crash)."""
        return cls(outcome=outcome)

    @classmethod
    def failed(cls, error: Exception) -> RowResult:
        """The result of a row that could not run, and why."""
        return cls(error=error)

    @property
    def ok(self) -> bool:
        """Whether the row ran (its ``outcome`` is set)."""
        return self.error is None

    def run(self) -> RunOutcome:
        """The row's outcome; raises its error when it could not run."""
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome
