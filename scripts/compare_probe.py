"""Issue 24's probe: two runs of scripts/run_probe.sh compared outcome by outcome. Usage: compare_probe.py CUDA.json EMULATED.json

    python scripts/compare_probe.py evidence/probe-h200-2ff8db7.json evidence/probe-emulated-70332d4.json
"""
import collections
import json
import sys

a, b = (json.load(open(p)) for p in sys.argv[1:3])
ra, rb = a["results"], b["results"]
print("A:", a["meta"]); print("B:", b["meta"])
for name, d in (("A", ra), ("B", rb)):
    print(name, dict(collections.Counter(r["outcome"] for r in d.values())))
same = diff = 0
for node in sorted(set(ra) | set(rb)):
    oa = ra.get(node, {"outcome": "absent", "detail": ""})
    ob = rb.get(node, {"outcome": "absent", "detail": ""})
    if oa["outcome"] == ob["outcome"]:
        same += 1
        continue
    diff += 1
    print(f"DIFF {node}\n   A {oa['outcome']}: {oa['detail'][:200]}\n   B {ob['outcome']}: {ob['detail'][:200]}")
print(f"{same} same outcome, {diff} different, {same / max(1, same + diff):.1%} agree")
