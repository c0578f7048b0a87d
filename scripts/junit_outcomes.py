"""Keep only what a JUnit report says of each case (its name, its outcome, its message's first line), or compare two
such reports case by case.

The reports of test suites written elsewhere (PyTorch's own ``test_cuda.py``, run on a GPU and emulated) are kept as
evidence so; their source and their full output are not ours to keep.

    python scripts/junit_outcomes.py reduce IN.xml OUT.xml
    python scripts/junit_outcomes.py compare GPU.xml EMULATED.xml      # exit 1 when an outcome of GPU.xml differs
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET

_RESULTS = ("failure", "error", "skipped")


def reduce(source: str, target: str) -> int:
    tree = ET.parse(source)
    for case in tree.iter("testcase"):
        for child in list(case):
            if child.tag not in _RESULTS:
                case.remove(child)
                continue
            child.text = None
            message = child.get("message")
            if message is not None:
                child.set("message", message.splitlines()[0] if message else "")
    tree.write(target, encoding="unicode")
    return 0


def outcomes(path: str) -> dict[str, str]:
    """Case name (class.name) -> passed, failed, error, skipped or xfailed."""
    found: dict[str, str] = {}
    for case in ET.parse(path).iter("testcase"):
        kind = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                kind = "failed" if child.tag == "failure" else "error"
            elif child.tag == "skipped":
                kind = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        found[f"{case.get('classname')}.{case.get('name')}"] = kind
    return found


def compare(gpu: str, emulated: str) -> int:
    first, second = outcomes(gpu), outcomes(emulated)
    missing = [name for name in first if name not in second]
    differ = [name for name in first if name in second and first[name] != second[name]]
    for name in differ:
        print(f"DIFFERS {name}: {first[name]} on {gpu}, {second[name]} on {emulated}")
    for name in missing:
        print(f"MISSING {name}: not in {emulated}")
    same = len(first) - len(differ) - len(missing)
    print(f"{same} of {len(first)} outcomes of {gpu} the same in {emulated}")
    return 1 if differ or missing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("reduce", help="write IN's cases with their outcomes and first message lines only")
    r.add_argument("source")
    r.add_argument("target")
    c = sub.add_parser("compare", help="compare the outcomes of GPU's cases with EMULATED's")
    c.add_argument("gpu")
    c.add_argument("emulated")
    args = parser.parse_args(argv)
    if args.command == "reduce":
        return reduce(args.source, args.target)
    return compare(args.gpu, args.emulated)


if __name__ == "__main__":
    sys.exit(main())
