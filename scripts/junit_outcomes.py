"""Keep only what a JUnit report says of each case (its name, its outcome, its message's first line), compare two
such reports case by case, or sum their cases' seconds per test file.

The reports of test suites written elsewhere (PyTorch's own ``test_cuda.py``, run on a GPU and emulated) are kept as
evidence so; their source and their full output are not ours to keep.

    python scripts/junit_outcomes.py reduce IN.xml OUT.xml
    python scripts/junit_outcomes.py compare GPU.xml EMULATED.xml      # exit 1 when an outcome of GPU.xml differs
    python scripts/junit_outcomes.py compare --class K GPU.xml EMULATED.xml   # class K's cases alone, any module
    python scripts/junit_outcomes.py filetimes --out TIMES.json SHARD.xml ...   # {"tests/x.py": seconds}, run from
                                                                    # the repository root (scripts/device_shards.sh's TIMES)
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

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


def outcomes(path: str, only: str | None = None) -> dict[str, str]:
    """Case name (class.name) -> passed, failed, error, skipped or xfailed. With ``only``, the cases of that class
    alone, named ``only.name`` (their module left out: a class harvested into another module compares)."""
    found: dict[str, str] = {}
    for case in ET.parse(path).iter("testcase"):
        classname = case.get("classname") or ""
        if only is not None:
            if classname.rsplit(".", 1)[-1] != only:
                continue
            classname = only
        kind = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                kind = "failed" if child.tag == "failure" else "error"
            elif child.tag == "skipped":
                kind = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        found[f"{classname}.{case.get('name')}"] = kind
    return found


def compare(gpu: str, emulated: str, only: str | None = None) -> int:
    first, second = outcomes(gpu, only), outcomes(emulated, only)
    missing = [name for name in first if name not in second]
    differ = [name for name in first if name in second and first[name] != second[name]]
    for name in differ:
        print(f"DIFFERS {name}: {first[name]} on {gpu}, {second[name]} on {emulated}")
    for name in missing:
        print(f"MISSING {name}: not in {emulated}")
    same = len(first) - len(differ) - len(missing)
    print(f"{same} of {len(first)} outcomes of {gpu} the same in {emulated}")
    return 1 if differ or missing else 0


def _file_of(classname: str) -> str | None:
    """The test file a case's class name names (``tests.pkg.test_x`` or ``tests.pkg.test_x.TestK``), if it is here."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end]) + ".py"
        if Path(path).is_file():
            return path
    return None


def filetimes(reports: list[str], target: str) -> int:
    seconds: collections.Counter[str] = collections.Counter()
    lost = 0
    for report in reports:
        for case in ET.parse(report).iter("testcase"):
            path = _file_of(case.get("classname", ""))
            if path is None:
                lost += 1
                continue
            seconds[path] += float(case.get("time") or 0)
    Path(target).write_text(json.dumps({path: round(s, 3) for path, s in sorted(seconds.items())}, indent=0) + "\n")
    print(f"{len(seconds)} files, {sum(seconds.values()):.1f} s in all, written to {target}; "
          f"{lost} case{'' if lost == 1 else 's'} of no file here")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("reduce", help="write IN's cases with their outcomes and first message lines only")
    r.add_argument("source")
    r.add_argument("target")
    c = sub.add_parser("compare", help="compare the outcomes of GPU's cases with EMULATED's")
    c.add_argument("--class", dest="only", metavar="CLASS",
                   help="the cases of this class alone, matched by class and case name whatever their module")
    c.add_argument("gpu")
    c.add_argument("emulated")
    t = sub.add_parser("filetimes", help="write the seconds of each test file's cases, over every report given")
    t.add_argument("--out", required=True, help="the JSON file to write")
    t.add_argument("reports", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "reduce":
        return reduce(args.source, args.target)
    if args.command == "filetimes":
        return filetimes(args.reports, args.out)
    return compare(args.gpu, args.emulated, args.only)


if __name__ == "__main__":
    sys.exit(main())
