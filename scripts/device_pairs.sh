#!/usr/bin/env bash
# One device call: which earlier test file leaves a process so that TARGET fails (or aborts) after it. Each of FILES
# runs alone before TARGET, in a copy of the tree of its own, ten pairs side by side (one GPU serves them all); each
# pair's log and a summary line (its exit status: 134 is an abort) go to OUT. Written in session 39 for the abort of
# test_a_refused_capture_begin_leaves_the_generator_capturing.py's first draw after shard 3 of call 6
# (evidence/h200-device-calls-2026-12-07-session39.txt names the nineteen files).
# Usage: OUT=... TARGET=tests/x.py FILES="tests/a.py tests/b.py ..." [ARMS=cuda] [LIMIT=250] [PREP='shell command']
#        bash scripts/device_pairs.sh   (PREP runs in each copy before its pair, e.g. to take a mark off the target)
set -uo pipefail
: "${OUT:?set OUT to the output folder}" "${TARGET:?set TARGET to the test file that fails after another}"
: "${FILES:?set FILES to the files to try before it}"
ARMS=${ARMS:-cuda}; LIMIT=${LIMIT:-250}
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
source scripts/device_install.sh
SRC=$PWD
copy() { mkdir -p "$1" && (cd "$SRC" && tar -cf - --exclude=./.device --exclude=./.whl .) | tar -xf - -C "$1"; }
i=0
for f in $FILES; do
  i=$((i+1))
  copy "/tmp/pair$i"
  [ -n "${PREP:-}" ] && (cd "/tmp/pair$i" && bash -c "$PREP")
  ( cd "/tmp/pair$i" && SEAM_ARMS=$ARMS PYTHONPATH=/tmp/pair$i timeout "$LIMIT" python3 -m pytest -q -p no:cacheprovider \
      "$f" "$TARGET" > "$OUT/pair$i.log" 2>&1
    echo "pair$i rc=$? $f :: $(tail -1 "$OUT/pair$i.log" | cut -c1-100)" >> "$OUT/summary.txt" ) &
  [ $((i % 10)) = 0 ] && wait
done
wait
sort -V "$OUT/summary.txt"
