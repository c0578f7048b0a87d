#!/usr/bin/env bash
# On the GPU machine (device tool), repo root: the CUDA arm of the whole suite in three file orders,
# the drivers' cuda arm of the old tree (.old705, a worktree of 705ac52, carried) in the same orders,
# and the fidelity corpus on every arm plus the raw witness. Everything lands in $OUT.
set -uo pipefail
OUT=${OUT:?set OUT}; export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD:${PYTHONPATH:-}
S=$OUT/summary.txt
python3 -c "import torch,json,os;p=torch.cuda.get_device_properties(0);print(json.dumps({'device':p.name,'capability':f'{p.major}.{p.minor}','torch':torch.__version__,'cuda':torch.version.cuda,'commit':os.environ.get('SEAMGATE_COMMIT','')}))" | tee -a $S
orders() { # dir -> three file lists: fwd, rev, shuffled (seed 9)
  local pat=$1
  echo "fwd:$(ls $pat | sort | tr '\n' ' ')"
  echo "rev:$(ls $pat | sort -r | tr '\n' ' ')"
  echo "shuf:$(python3 -c "import random,glob,sys;f=sorted(glob.glob(sys.argv[1]));random.Random(9).shuffle(f);print(' '.join(f))" "$pat")"
}
if [ -d .old705 ]; then
  while IFS=: read -r name files; do
    line=$(cd .old705 && SEAM_ARMS=cuda PYTHONPATH=$PWD/.old705:/tmp/site timeout 150 python3 -m pytest -q -p no:cacheprovider $files 2>&1 | tee $OUT/old-$name.log | tail -1)
    echo "BEFORE(705ac52) drivers $name :: $line" | tee -a $S; grep "^FAILED" $OUT/old-$name.log | cut -c1-170 | tee -a $S
  done < <(cd .old705 && orders 'tests/drivers/test_*.py')
fi
while IFS=: read -r name files; do
  line=$(SEAM_ARMS=cuda timeout 200 python3 -m pytest -q -p no:cacheprovider $files 2>&1 | tee $OUT/new-$name.log | tail -1)
  echo "AFTER suite $name :: $line" | tee -a $S; grep -E "^(FAILED|ERROR)" $OUT/new-$name.log | cut -c1-170 | tee -a $S
done < <(orders 'tests/*/test_*.py' | head -1; orders 'tests/[sdpf][eril]*/test_*.py' | tail -2)
timeout 200 python3 -m tests.fidelity.table --measure $OUT/fidelity-h200.json --jobs 12; echo "fidelity rc=$?" | tee -a $S
rm -f $OUT/old-*.log
