"""What the user's own plain ``pytest`` cannot collect of the gates' selections, and the PASS it makes an ERROR.

seamgate's runs put the project's import roots on the path; the user's ``pytest`` may not (no
``pythonpath`` setting, no installed package): a PASS there would be a verdict on a suite the user
cannot run. One ``--collect-only`` of the gates' selections, as the user's ``pytest`` runs
(``collect_check.users_collection_errors``), decides; ``as_users_pytest_sees`` applies it.
"""

from __future__ import annotations

from harness.gates.collect_check import users_collection_errors
from harness.gates.model import Gate
from harness.plan.planner import Plan
from harness.run.materialized import MaterializedTree
from reports.outcome import ArmOutcome, Verdict


def users_pytest_errors(tree: MaterializedTree, plan: Plan) -> dict[str, str]:
    """What the user's own plain ``pytest`` cannot collect of ``plan``'s selections in the working tree's copy
    ``tree``: file -> error (``{}`` when the copy was not made or nothing is selected)."""
    selects = sorted({entry.split("::", 1)[0] for c in plan.checks if c.owed is None for entry in c.gate.select})
    if not tree.ok or not selects:
        return {}
    return users_collection_errors(tree.path, selects)


def as_users_pytest_sees(outcome: ArmOutcome, gate: Gate, errors: dict[str, str]) -> ArmOutcome:
    """``outcome``, or an ERROR when it is a PASS and the user's own ``pytest`` cannot collect a file
    ``gate`` selects (``errors``, from ``users_pytest_errors``; a FAIL or ERROR is already not green, and
    keeps its own reason)."""
    if outcome.verdict is not Verdict.PASS or not errors:
        return outcome
    files = [f for f in errors if f != "(pytest)" and any(_covers(e, f) for e in gate.select)]
    files = files or (["(pytest)"] if "(pytest)" in errors and gate.select else [])
    if not files:
        return outcome
    what = "; ".join(f"{f}: {errors[f] or 'see pytest --collect-only'}" for f in files[:3])
    return outcome.with_verdict(Verdict.ERROR, (
        f"your own pytest cannot collect {', '.join(files)} ({what}); seamgate's runs put the project "
        f"root on the import path and yours does not, so the PASS seamgate found is not a "
        "verdict on the suite you run: make your own `pytest` collect it (e.g. pythonpath = [\".\"] under "
        "[tool.pytest.ini_options], or install the package), then run again"))


def _covers(entry: str, file: str) -> bool:
    """The ``select`` entry ``entry`` (a file, folder or node id) takes in the test file ``file``."""
    path = entry.split("::", 1)[0].rstrip("/")
    return path in ("", ".") or file == path or file.startswith(path + "/")
