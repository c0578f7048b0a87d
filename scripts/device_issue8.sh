#!/usr/bin/env bash
# On the GPU machine (device tool), repo root: issue 8's H200 table — the drivers' cuda arm in each file
# order, with the collector observed, disabled and forced, then the raw-CUDA witness programs. Into $OUT.
set -uo pipefail
OUT=${OUT:?set OUT}; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD SEAM_ARMS=cuda
python3 -c "import torch,json;p=torch.cuda.get_device_properties(0);print(json.dumps({'device':p.name,'cap':f'{p.major}.{p.minor}','torch':torch.__version__,'cuda':torch.version.cuda}))" | tee $OUT/provenance.json
fwd=$(ls tests/drivers/test_*.py | sort); rev=$(ls tests/drivers/test_*.py | sort -r)
shuf=$(python3 -c "import random,glob;f=sorted(glob.glob('tests/drivers/test_*.py'));random.Random(8).shuffle(f);print(' '.join(f))")
row() { # label mode files...
  local label=$1 mode=$2; shift 2
  local line; line=$(GC_PROBE=$mode GC_PROBE_OUT=$OUT/gc-$label.json timeout 150 python3 -m pytest -q -p no:cacheprovider -p scripts.gc_capture_probe "$@" 2>&1 | tee $OUT/log-$label.txt | grep -E "passed|failed" | tail -1)
  echo "ROW $label gc=$mode :: $line :: $(grep -c '^FAILED' $OUT/log-$label.txt) FAILED lines :: $(grep -m1 'gc-probe:' $OUT/log-$label.txt)"
  grep '^FAILED' $OUT/log-$label.txt | cut -c1-160
}
for m in ${MODES:-observe off collect}; do
  row fwd-$m $m $fwd; row rev-$m $m $rev
done
row shuf-observe observe $shuf
[ -n "${RAW:-1}" ] && timeout 240 python3 -m tests.fidelity.raw_cuda --jobs 8 --out $OUT/raw_cuda.json
