"""Red-first counts of the driver suites: each named mutation applied OFF-TREE, the suites run there.

``python -m tests.drivers.redfirst [MUTATION ...]`` (default: ``baseline`` and every mutation of
``mutations/catalog/drivers.yaml``). For each state it materializes a copy of the project (the
working tree is never written), runs ``pytest tests/drivers`` there with ``SEAM_ARMS=cpu-emulated``
and ``PYTHONPATH=<copy>``, and prints, per test file, ``(cases, passed, failed, errors)`` and the
red cases. These are the numbers the seam-test docstrings and ``docs/drivers.md`` state.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.project_copy import materialize
from mutations.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]
DRIVER_CATALOG = ROOT / "mutations" / "catalog" / "drivers.yaml"


def run_state(mutation_id: str) -> dict[str, dict[str, object]]:
    """Per test file of ``tests/drivers``: cases, passed, failed, errors and the red case names."""
    catalog = load_catalog([ROOT / "mutations" / "catalog"], project_root=ROOT)
    mutation = None if mutation_id == "baseline" else catalog.get(mutation_id)
    with tempfile.TemporaryDirectory(prefix=f"redfirst-{mutation_id}-") as tmp:
        copy = materialize(ROOT, Path(tmp) / "project", mutation)
        junit = Path(tmp) / "junit.xml"
        env = {**os.environ, "PYTHONPATH": str(copy), "SEAM_ARMS": "cpu-emulated"}
        subprocess.run([sys.executable, "-m", "pytest", "tests/drivers", "-q", "-p", "no:cacheprovider",
                        f"--junitxml={junit}"], cwd=copy, env=env, capture_output=True, text=True)
        return _per_file(ET.parse(junit).getroot())


def _per_file(root: ET.Element) -> dict[str, dict[str, object]]:
    files: dict[str, dict[str, object]] = collections.defaultdict(
        lambda: {"cases": 0, "passed": 0, "failed": 0, "errors": 0, "red": []})
    for case in root.iter("testcase"):
        entry = files[case.get("classname", "").split(".")[-1]]
        entry["cases"] += 1  # type: ignore[operator]
        kinds = {child.tag for child in case}
        outcome = "failed" if "failure" in kinds else "errors" if "error" in kinds else None
        if outcome:
            entry[outcome] += 1  # type: ignore[operator]
            entry["red"].append(case.get("name"))  # type: ignore[union-attr]
        elif "skipped" not in kinds:
            entry["passed"] += 1  # type: ignore[operator]
    return dict(sorted(files.items()))


def main(argv: list[str]) -> int:
    states = argv or ["baseline", *load_catalog([DRIVER_CATALOG], project_root=ROOT).ids()]
    for state in states:
        result = run_state(state)
        print(state, json.dumps({f: [v["cases"], v["passed"], v["failed"], v["errors"]] for f, v in result.items()}))
        for name, entry in result.items():
            for case in entry["red"]:  # type: ignore[union-attr]
                print(f"   RED {name}::{case}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
