#!/usr/bin/env bash
# Run on the GPU machine (the device tool), from the repo root: `seamgate sweep` of FILES over the seam
# selection (tests/seam but the switch and inert files, plus tests/fidelity) on every arm the machine has,
# so the cuda arm's cases judge the mutants too (seam/cuda_backend.py is reached by nothing else).
# Usage: OUT=... SEAMGATE_COMMIT=<sha> [ARM=cuda] [LIMIT=seconds] [JOBS=n] [FIDELITY=0] bash scripts/device_sweep.sh FILE... [--tests PATH...]
# (FIDELITY=0 leaves tests/fidelity out: its programs run as children, on both arms.)
# Comes back: $OUT/summary.txt, $OUT/sweep.md (seamgate report), $OUT/sweep.tgz (outcomes.json, logs).
# Needs mutmut and libcst as wheels in .whl/ (carried), besides what device_install.sh names.
set -uo pipefail
FINAL=${OUT:?set OUT to the output folder}
WORK=$(mktemp -d)
trap 'tar -czf "$FINAL/sweep.tgz" -C "$WORK" . 2>/dev/null; cp "$WORK/summary.txt" "$FINAL/" 2>/dev/null' EXIT
export PYTHONUNBUFFERED=1
source scripts/device_install.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-}
# The batch session collects, then forks one child per mutant: torch must not initialize the CUDA driver
# in the parent, and is_available() asks NVML instead of the driver when this is set (torch.cuda docs).
export PYTORCH_NVML_BASED_CUDA_CHECK=1
S=$WORK/summary.txt
echo "commit ${SEAMGATE_COMMIT:-unknown} $(python3 -c 'import torch;print(torch.__version__, torch.cuda.get_device_name(0))')" >"$S"
mapfile -t SEL < <(ls tests/seam/test_*.py | grep -v -e test_switch_behaviour.py -e test_inert.py | sed 's/^/--tests\n/')
started=$(date +%s)
timeout "${LIMIT:-420}" python3 -m harness.cli.main sweep --arm "${ARM:-cuda}" "$@" "${SEL[@]}" $( [ "${FIDELITY:-1}" = 1 ] && echo --tests tests/fidelity ) --jobs "${JOBS:-8}" \
  --equivalents tests/equivalent_mutants.yaml --output "$WORK/sweep" >"$WORK/sweep.log" 2>&1
rc=$?
echo "sweep $* rc=$rc in $(( $(date +%s) - started )) s :: $(grep -E 'score|mutants' "$WORK/sweep.log" | tail -2 | tr '\n' ' ')" | tee -a "$S"
python3 -m harness.cli.main report "$WORK/sweep" --format md --out "$FINAL/sweep.md" >>"$S" 2>&1 || echo "report failed" >>"$S"
tail -40 "$WORK/sweep.log" >>"$S"
