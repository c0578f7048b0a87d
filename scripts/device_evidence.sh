#!/usr/bin/env bash
# Run on the GPU machine (the device tool), from the repo root: every CUDA arm and GPU benchmark,
# with provenance, into $OUT. Usage: SEAMGATE_COMMIT=<sha> bash scripts/device_evidence.sh
# Needs: torch with CUDA, pytest, pyyaml, rich there; junitparser as a wheel in .whl/ (carried).
set -uo pipefail
OUT=${OUT:?set OUT to the output folder}
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/tmp/install.log 2>&1 || echo "editable install failed (the root conftest loads the plugin then)"
export PYTHONPATH=$PWD:${PYTHONPATH:-}
python3 - >"$OUT/provenance.json" <<'PY'
import json, os, subprocess, torch
p = torch.cuda.get_device_properties(0)
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip()
print(json.dumps({"device": p.name, "capability": f"{p.major}.{p.minor}", "nvidia_smi": smi,
                  "torch": torch.__version__, "cuda": torch.version.cuda,
                  "commit": os.environ.get("SEAMGATE_COMMIT", "unknown")}, indent=2))
PY
cat "$OUT/provenance.json"
echo "== gate suite, cuda arms included (the JSON report is G5 evidence)"
timeout 420 python3 -m harness.cli run --arm cuda --jobs 14 --json "$OUT/gates_cuda.json" >"$OUT/gates_cuda.log" 2>&1; echo "gates rc=$?"; tail -4 "$OUT/gates_cuda.log"
echo "== G1 on CUDA, every driver"
timeout 60 python3 -m drivers.g1_cuda --out "$OUT" 2>&1 | tail -12
echo "== GPU benchmarks"
timeout 120 python3 bench/bench_cuda.py --out "$OUT" >"$OUT/bench_cuda.log" 2>&1; echo "bench rc=$?"; tail -45 "$OUT/bench_cuda.log"
echo "== raw CUDA refusals, as CUDA words them"
timeout 40 python3 -m pytest -q -s -p no:cacheprovider tests/seam/test_backend_agreement.py -k raw_cuda 2>&1 | grep -E "raw CUDA refused|passed|failed"
echo "== pytest, both arms (whatever time is left)"
timeout 80 python3 -m pytest -q -rw -p no:cacheprovider tests/seam tests/plugin tests/drivers \
  >"$OUT/pytest_cuda.log" 2>&1; echo "pytest rc=$?"; tail -3 "$OUT/pytest_cuda.log"
