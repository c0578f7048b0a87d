#!/usr/bin/env bash
# One device call for a session's closing evidence (the device tool allows 10 minutes a call): the GPU
# evidence (scripts/device_evidence.sh: whole suite in 3 orders, every cuda gate arm) on cores 2-15 and,
# side by side, the CPU gate-suite benchmark (scripts/device_bench_suite.sh) pinned to cores 0,1 on a
# clean export of HEAD that the caller put in .whl/head (git archive HEAD | tar -x -C .whl/head).
# Usage: OUT=... SEAMGATE_COMMIT=<sha> bash scripts/device_session.sh
set -uo pipefail
: "${OUT:?set OUT}"
source scripts/device_install.sh  # once, before the two scripts start side by side (device_evidence.sh's own is then a no-op)
mkdir -p "$OUT/gpu" "$OUT/bench"
( OUT=$OUT/bench CORES=0,1 bash scripts/device_bench_suite.sh >/dev/null 2>&1 ) &
OUT=$OUT/gpu FIDELITY=${FIDELITY:-0} LIMIT=${LIMIT:-450} taskset -c 2-15 bash scripts/device_evidence.sh
wait
cat "$OUT/bench/summary.txt" 2>/dev/null
