#!/usr/bin/env bash
# Issue 24's probe: CUDA-graph tests written elsewhere, run from the repository root on one arm.
#   bash scripts/run_probe.sh cuda      -> $OUT/probe-cuda.json      (a real GPU; SEAM_EMULATE_CUDA=0)
#   bash scripts/run_probe.sh emulated  -> $OUT/probe-emulated.json  (pytest --emulate-cuda on a CPU torch)
# Compare two runs: python scripts/compare_probe.py probe-cuda.json probe-emulated.json.
# The tests are NOT in the repository (code written elsewhere never is): the git-ignored .probe/ holds
# them, harvested by hand (docs/torch-cuda.md, "The probe"): .probe/ext (breakable-cuda-graphs 0.1.0 and
# piecewise-cuda-graphs 0.1.0, their sdists' tests unmodified), .probe/pytorch (by hand: graph tests of PyTorch's
# test/test_cuda.py at 000e43cd with the base class adapted until session 29; since session 30 its
# TestBlockStateAbsorption with PyTorch's own TestCase, evidence/README.md), .probe/vendor (absl-py, expecttest).
# On the device tool: carry .probe and set PYTHON=python3.
set -u
arm="${1:?usage: run_probe.sh cuda|emulated}"; shift
out="${OUT:-.probe/out}"
# Whichever part is there runs (scripts/harvest_probe.sh fetches .probe/ext and .probe/vendor; .probe/pytorch is by hand).
parts=()
for part in .probe/ext .probe/pytorch; do [ -d "$part" ] && parts+=("$part"); done
[ ${#parts[@]} -gt 0 ] || { echo "no harvested tests in .probe/: run bash scripts/harvest_probe.sh (see the header of this script)" >&2; exit 2; }
mkdir -p "$out"
# The cuda arm runs the machine's own python (torch with CUDA); the emulated arm prefers the repo's venv.
py="${PYTHON:-python}"
[ "$arm" = emulated ] && [ -x .venv/bin/python ] && [ -z "${PYTHON:-}" ] && py=.venv/bin/python
export PYTHONPATH=".:.probe:.probe/vendor:.subjects${PYTHONPATH:+:$PYTHONPATH}"
export PROBE_JSON="$out/probe-$arm.json"
case "$arm" in
  cuda) export SEAM_EMULATE_CUDA=0; extra=() ;;
  emulated) unset SEAM_EMULATE_CUDA; extra=(--emulate-cuda) ;;
  *) echo "unknown arm $arm" >&2; exit 2 ;;
esac
"$py" -m pytest "${parts[@]}" -p scripts.probe_outcomes -p no:cacheprovider -q -rfEsxX \
  "${extra[@]}" "$@" 2>&1 | tail -n 80 | tee "$out/probe-$arm.log"
"$py" - "$PROBE_JSON" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
print(d["meta"]); print(dict(collections.Counter(r["outcome"] for r in d["results"].values())))
PY
