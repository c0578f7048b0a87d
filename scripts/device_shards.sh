#!/usr/bin/env bash
# One device call: the gates' cuda arms with nothing reused, and the whole suite on both arms in shards side by side.
# The device tool allows 10 minutes a call; each shard runs in a copy of its own (a test writing into the tree
# would make a cuda gate an ERROR), test files dealt from random.Random(SEED).shuffle of the sorted list. Outputs
# (the gates' JSON report, each shard's log and JUnit XML, a summary) go back as one tarball: the tool returns few
# files. Session 23's two calls ran this recipe (evidence/h100-device-calls-2026-12-05-session23.txt).
# Usage: OUT=... SEAMGATE_COMMIT=<sha> [SHARDS=8] [SEED=23] [LIMIT=480] [GATES=1] [TESTS="tests/a.py ..."] \
#        [TIMES=file.json] bash scripts/device_shards.sh   (TESTS: only those files, else every test file; TIMES:
#        {"tests/x.py": seconds} from an earlier call's JUnit XML, to balance the shards; an unknown file counts the median:
#        `python scripts/junit_outcomes.py filetimes --out FILE shard*.xml`, e.g. evidence/device-times/)
set -uo pipefail
FINAL=${OUT:?set OUT to the output folder}
SHARDS=${SHARDS:-8}; SEED=${SEED:-23}; LIMIT=${LIMIT:-480}
W=$(mktemp -d)
trap 'tar -czf "$FINAL/shards.tgz" -C "$W" . ; cp "$W/summary.txt" "$FINAL/" 2>/dev/null' EXIT
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
source scripts/device_install.sh
S=$W/summary.txt
echo "commit ${SEAMGATE_COMMIT:-unknown}; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); torch $(python3 -c 'import torch; print(torch.__version__)')" | tee -a "$S"
SRC=$PWD
copy() { mkdir -p "$1" && (cd "$SRC" && tar -cf - --exclude=./.device --exclude=./.whl .) | tar -xf - -C "$1"; }
if [ "${GATES:-1}" = 1 ]; then
  copy /tmp/gates
  ( cd /tmp/gates && START=$(date +%s) && PYTHONPATH=/tmp/gates${PYTHONPATH:+:$PYTHONPATH} timeout "$LIMIT" python3 -m harness.cli.main run \
      --arm cuda --jobs 8 --no-reuse --json "$W/gates-cuda.json" > "$W/gates-cuda.log" 2>&1
    echo "gates rc=$? $(( $(date +%s) - START )) s :: $(tail -1 "$W/gates-cuda.log")" >> "$S" ) &
fi
SHARDS=$SHARDS SEED=$SEED TESTS="${TESTS:-}" TIMES="${TIMES:-}" python3 - <<'PY' > "$W/shards.txt"
import os, pathlib, random
files = os.environ["TESTS"].split() or sorted(str(p) for p in pathlib.Path("tests").rglob("test_*.py"))
random.Random(int(os.environ["SEED"])).shuffle(files)
n = int(os.environ["SHARDS"])
if os.environ.get("TIMES"):  # seconds per file from an earlier call: the longest first, each to the lightest shard
    import json
    secs = json.load(open(os.environ["TIMES"]))
    guess = sorted(secs.values())[len(secs) // 2] if secs else 10.0
    load, shards = [0.0] * n, [[] for _ in range(n)]
    for f in sorted(files, key=lambda f: -secs.get(f, guess)):
        i = load.index(min(load))
        shards[i].append(f)
        load[i] += secs.get(f, guess)
else:
    shards = [files[i::n] for i in range(n)]
for shard in shards:
    print(" ".join(shard))
PY
i=0
while read -r files; do
  [ -n "$files" ] || { i=$((i+1)); continue; }
  copy "/tmp/shard$i"
  ( cd "/tmp/shard$i" && START=$(date +%s) && SEAM_ARMS=cuda,cpu-emulated PYTHONPATH=/tmp/shard$i${PYTHONPATH:+:$PYTHONPATH} \
      timeout "$LIMIT" python3 -m pytest -q -p no:cacheprovider --maxfail=30 $files --junitxml="$W/shard$i.xml" > "$W/shard$i.log" 2>&1
    echo "shard $i rc=$? $(( $(date +%s) - START )) s :: $(tail -1 "$W/shard$i.log")" >> "$S" ) &
  i=$((i+1))
done < "$W/shards.txt"
wait
grep -h "^FAILED\|^ERROR" "$W"/shard*.log >> "$S" 2>/dev/null
cat "$S"
