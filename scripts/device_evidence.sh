#!/usr/bin/env bash
# Run on the GPU machine (the device tool), from the repo root: the whole suite's CUDA arm in three file
# orders (three single processes, side by side), every cuda arm of the gate suite (its JSON report is
# G5 evidence), and the fidelity corpus on every arm. Usage: SEAMGATE_COMMIT=<sha> bash scripts/device_evidence.sh
# Needs there: torch with CUDA, pytest, pyyaml, rich; junitparser, jsonschema and coverage as wheels in .whl/ (carried).
set -uo pipefail
FINAL=${OUT:?set OUT to the output folder}
# The device tool returns at most 8 files: everything is written to a scratch folder, and only the
# summary and one tarball of it go back.
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/evidence.tgz" -C "$OUT" . ; cp "$OUT/summary.txt" "$FINAL/" 2>/dev/null' EXIT
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
source scripts/device_install.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-}
S=$OUT/summary.txt
python3 - <<'PY' | tee "$OUT/provenance.json" >>"$S"
import json, os, subprocess, torch
p = torch.cuda.get_device_properties(0)
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
print(json.dumps({"device": p.name, "capability": f"{p.major}.{p.minor}", "nvidia_smi": smi, "torch": torch.__version__,
                  "cuda": torch.version.cuda, "commit": os.environ.get("SEAMGATE_COMMIT", "unknown")}))
PY
# The whole suite in three orders, side by side (SUITE=0 skips it: scripts/device_orders.sh runs it
# alone, which fits the device tool's 10 minutes better). Each order in its own copy: the gate run below
# watches this tree (a test writing into it meanwhile would make every cuda gate an ERROR, as it should).
if [ "${SUITE:-1}" = 1 ]; then
  all=$(ls tests/test_*.py tests/*/test_*.py | sort)
  rev=$(echo "$all" | sort -r)
  shuf=$(python3 -c "import random,sys;f=sys.stdin.read().split();random.Random(11).shuffle(f);print(' '.join(f))" <<<"$all")
  for order in fwd rev shuf; do
    files=${!order:-$all}; [ $order = fwd ] && files=$all
    echo "$files" | tr ' ' '\n' >"$OUT/files-$order.txt"
    rm -rf "/tmp/suite-$order" && cp -a . "/tmp/suite-$order"
    ( cd "/tmp/suite-$order" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/suite-$order:/tmp/site SEAM_ARMS=cuda \
        SEAMGATE_FILE_ORDER="$OUT/files-$order.txt" timeout ${LIMIT:-480} \
        python3 -m pytest -q -p no:cacheprovider -p scripts.order_plugin tests >"$OUT/pytest-$order.log" 2>&1
      echo "rc=$?" >>"$OUT/pytest-$order.log" ) &
  done
fi
timeout 420 python3 -m harness.cli run --arm cuda --jobs 8 --json "$OUT/gates-cuda.json" >"$OUT/gates-cuda.log" 2>&1
echo "gates rc=$? :: $(tail -1 "$OUT/gates-cuda.log")" | tee -a "$S"
if [ "${FIDELITY:-1}" = 1 ]; then  # FIDELITY=0: the seam is unchanged since the last fidelity record
  timeout 150 python3 -m tests.fidelity.table --measure "$OUT/fidelity-h200.json" --jobs 8; echo "fidelity rc=$?" | tee -a "$S"
fi
wait
[ "${SUITE:-1}" = 1 ] && for order in fwd rev shuf; do
  echo "pytest $order :: $(grep -E 'passed|failed|error' "$OUT/pytest-$order.log" | tail -1) $(tail -1 "$OUT/pytest-$order.log")" | tee -a "$S"
  grep -E "^(FAILED|ERROR)" "$OUT/pytest-$order.log" | cut -c1-200 | tee -a "$S"
done
