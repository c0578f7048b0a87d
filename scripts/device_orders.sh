#!/usr/bin/env bash
# Run on the GPU machine (the device tool): the whole suite under SEAM_ARMS=cuda in three file orders
# (forward, reverse, shuffled; pytest collects tests/ and scripts/order_plugin.py orders the cases by
# file, since interleaved file arguments trip pytest 9.1), each in its own copy and process, with JUnit
# XML per order, then every
# case that failed in some order but not in all three re-run ALONE, with Python's GC off, with GC forced
# before each case, and with CUDA_LAUNCH_BLOCKING=1, so a red that comes and goes is isolated rather than
# written down as "load". One tarball comes back ($OUT/orders.tgz) plus summary.txt.
# Usage: OUT=... SEAMGATE_COMMIT=<sha> [ORDERS="shuf"] [LIMIT=seconds] [THREADS=n] [PATHS="tests/seam tests/drivers"] bash scripts/device_orders.sh [PYTEST_ARGS...]
# (the three orders side by side took over 8 minutes at 2727762: one call of the device tool fits one or two)
set -uo pipefail
FINAL=${OUT:?set OUT to the output folder}
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/orders.tgz" -C "$OUT" . ; cp "$OUT/summary.txt" "$FINAL/" 2>/dev/null' EXIT
export PYTHONUNBUFFERED=1
source scripts/device_install.sh
S=$OUT/summary.txt
echo "commit ${SEAMGATE_COMMIT:-unknown} $(python3 -c 'import torch;print(torch.__version__, torch.cuda.get_device_name(0))')" >"$S"
all=$(ls tests/test_*.py tests/*/test_*.py | sort)
rev=$(echo "$all" | sort -r)
shuf=$(python3 -c "import random,sys;f=sys.stdin.read().split();random.Random(11).shuffle(f);print(' '.join(f))" <<<"$all")
for order in ${ORDERS:-fwd rev shuf}; do
  files=$all; [ $order = rev ] && files=$rev; [ $order = shuf ] && files=$shuf
  echo "$files" | tr ' ' '\n' >"$OUT/files-$order.txt"
  rm -rf "/tmp/suite-$order" && cp -a . "/tmp/suite-$order"
  ( cd "/tmp/suite-$order" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/suite-$order:/tmp/site SEAM_ARMS=cuda \
      SEAMGATE_FILE_ORDER="$OUT/files-$order.txt" SEAMGATE_RED_LOG="$OUT/red-live-$order.txt" OMP_NUM_THREADS=${THREADS:-4} timeout ${LIMIT:-420} \
      python3 -m pytest -q -p no:cacheprovider -p scripts.order_plugin --junitxml="$OUT/junit-$order.xml" "$@" ${PATHS:-tests} \
      >"$OUT/pytest-$order.log" 2>&1
    echo "rc=$?" >>"$OUT/pytest-$order.log" ) &
done
wait
for order in ${ORDERS:-fwd rev shuf}; do
  echo "pytest $order :: $(grep -E 'passed|failed|error' "$OUT/pytest-$order.log" | tail -1) $(tail -1 "$OUT/pytest-$order.log")" | tee -a "$S"
  grep -E "^(FAILED|ERROR)" "$OUT/pytest-$order.log" | sed -E 's/ - .*//' | sort -u >"$OUT/red-$order.txt"
  echo "  red as they failed: $(tr '\n' ' ' 2>/dev/null <"$OUT/red-live-$order.txt")" | tee -a "$S"
done
# A case red in one or two orders (not all three) comes and goes: isolate it.
n_orders=$(echo ${ORDERS:-fwd rev shuf} | wc -w)
sort "$OUT"/red-*.txt | uniq -c | awk -v n="$n_orders" 'n > 1 && $1 < n {print $3}' | grep -E "^tests/(seam|drivers)/" | head -${MAX_ISOLATE:-3} >"$OUT/intermittent.txt"
echo "intermittent (seam/drivers): $(wc -l <"$OUT/intermittent.txt")" | tee -a "$S"
cd /tmp/suite-fwd || exit 0
while read -r id; do
  for how in alone gc-off gc-forced launch-blocking; do
    case $how in
      alone) env_=() ;; gc-off) env_=(SEAMGATE_GC=off) ;; gc-forced) env_=(SEAMGATE_GC=collect) ;;
      launch-blocking) env_=(CUDA_LAUNCH_BLOCKING=1) ;;
    esac
    r=$(env "${env_[@]}" PYTHONPATH=$PWD:/tmp/site SEAM_ARMS=cuda timeout 60 python3 -m pytest -q -p no:cacheprovider \
          -p scripts.gc_plugin "$id" 2>&1 | tail -1)
    echo "$id [$how] :: $r" | tee -a "$S"
  done
done <"$OUT/intermittent.txt"
