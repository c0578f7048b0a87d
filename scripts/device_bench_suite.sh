#!/usr/bin/env bash
# The CPU gate suite on the GPU machine (the device tool), pinned to 2 cores like the CPU machine this project is built on:
# the CPU gate suite cold, again with nothing changed, after a one-line change in drivers/dense.py, and the
# fork-server benchmark. Runs in a clean export of HEAD (.whl/head, made by the caller with git archive).
# Usage: OUT=... CORES=0,1 bash scripts/device_bench_suite.sh      (wheels in .whl/, as device_evidence.sh)
set -uo pipefail
FINAL=${OUT:?set OUT}; CORES=${CORES:-0,1}
# At most 8 files come back from the device tool: one tarball of everything, and the summary.
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/bench.tgz" -C "$OUT" . ; cp "$OUT/summary.txt" "$FINAL/" 2>/dev/null' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
# Out of the repository tree first: a gate run there (device_evidence.sh, side by side) watches that tree.
rm -rf /tmp/bench-head && cp -a .whl/head /tmp/bench-head && cd /tmp/bench-head || exit 2
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git init -q . && git add -A && git -c user.email=a@b -c user.name=b commit -qm head
now() { python3 -c 'import time; print(f"{time.time():.2f}")'; }
run() {  # name timeout args...
  local name=$1 limit=$2; shift 2
  local t0; t0=$(now)
  taskset -c "$CORES" timeout "$limit" python3 -m harness.cli.main run --arm cpu-emulated --jobs 2 --json "$OUT/$name.json" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc wall=$(python3 -c "print(round($(now) - $t0, 1))") s :: $(tail -1 "$OUT/$name.log")" | tee -a "$OUT/summary.txt"
}
run cold 420 --no-reuse
run again 120
sed -i 's/^def reference_greedy/# a one-line change\ndef reference_greedy/' drivers/dense.py
run dense-change 300
[ "${PROVE:-0}" = 1 ] && run prove 580 --prove --no-reuse
[ "${FORKBENCH:-1}" = 1 ] && taskset -c "$CORES" timeout 150 python3 bench/bench_forkserver.py --runs 20 2>&1 | tail -4 | tee -a "$OUT/summary.txt"
exit 0
