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
# The whole suite in three orders beside the gate run (SUITE=0 skips it; alone, scripts/device_orders.sh
# fits the device tool's 10 minutes better): that script, each order in its own copy, so the gate run
# below still watches an untouched tree (a test writing into it would make every cuda gate an ERROR).
if [ "${SUITE:-1}" = 1 ]; then
  mkdir -p "$OUT/orders"
  ( OUT=$OUT/orders bash scripts/device_orders.sh >/dev/null 2>&1 ) &
fi
timeout 420 python3 -m harness.cli.main run --arm cuda --jobs 8 --json "$OUT/gates-cuda.json" >"$OUT/gates-cuda.log" 2>&1
echo "gates rc=$? :: $(tail -1 "$OUT/gates-cuda.log")" | tee -a "$S"
if [ "${FIDELITY:-1}" = 1 ]; then  # FIDELITY=0: the seam is unchanged since the last fidelity record
  timeout 150 python3 -m tests.fidelity.table --measure "$OUT/fidelity-h200.json" --jobs 8; echo "fidelity rc=$?" | tee -a "$S"
fi
wait
[ "${SUITE:-1}" = 1 ] && cat "$OUT/orders/summary.txt" >>"$S" 2>/dev/null
