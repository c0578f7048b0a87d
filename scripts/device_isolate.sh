#!/usr/bin/env bash
# Run on the GPU machine (the device tool): bisect an order-dependent red. Each line of $LISTS is one
# pytest argument list (test files or node ids, in the order to run them); every line runs in its own
# copy of the tree and its own process, all lines side by side, under SEAM_ARMS=${ARMS:-cuda}, with
# OMP_NUM_THREADS=${THREADS:-2} so that they do not fight over the cores. summary.txt comes back with
# each line's last pytest line and its FAILED/ERROR node ids; isolate.tgz holds every log.
# Usage: OUT=... LISTS=path/to/lists.txt SEAMGATE_COMMIT=<sha> bash scripts/device_isolate.sh
set -uo pipefail
FINAL=${OUT:?set OUT to the output folder}
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/isolate.tgz" -C "$OUT" . ; cp "$OUT/summary.txt" "$FINAL/" 2>/dev/null' EXIT
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=${THREADS:-2}
source scripts/device_install.sh
S=$OUT/summary.txt
echo "commit ${SEAMGATE_COMMIT:-unknown} $(python3 -c 'import sys,torch,pytest;print(sys.version.split()[0], "pytest", pytest.__version__, torch.__version__, torch.cuda.get_device_name(0))')" >"$S"
n=0
while read -r line; do
  [ -z "$line" ] && continue
  n=$((n + 1))
  rm -rf "/tmp/iso-$n" && cp -a . "/tmp/iso-$n"
  ( cd "/tmp/iso-$n" && PYTHONPATH=/tmp/iso-$n:${PYTHONPATH:-} SEAM_ARMS=${ARMS:-cuda} timeout ${LIMIT:-400} \
      python3 -m pytest -q -p no:cacheprovider $line >"$OUT/log-$n.txt" 2>&1; echo "rc=$?" >>"$OUT/log-$n.txt" ) &
  echo "$line" >"$OUT/args-$n.txt"
done <"${LISTS:?set LISTS to a file of pytest argument lists}"
wait
for i in $(seq 1 $n); do
  echo "[$i] $(head -c 300 "$OUT/args-$i.txt") :: $(grep -E 'passed|failed|error' "$OUT/log-$i.txt" | tail -1) $(tail -1 "$OUT/log-$i.txt")" >>"$S"
  grep -E "^(FAILED|ERROR)" "$OUT/log-$i.txt" | sed -E 's/ - .*//; s/^/    /' >>"$S"
done
cat "$S"
