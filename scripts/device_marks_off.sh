#!/usr/bin/env bash
# Do the NCCL module and the refused-begin module still need a process of their own on the cuda arm, now that the
# torch_cuda fixture makes the default stream current after each test (fa8c77d)? In a copy of the tree with both
# `own_process` marks taken off: the plugin's stream test, the NCCL file then the refused-begin file (the pair that
# aborted the H100 in session 39), the other order, the torch_cuda folder in one process from those two on (as far as
# LIMIT lets it go), and scripts/nccl_probe.py's four refused-begin-sequence cases. Everything goes back as one
# tarball (the device tool returns few files); the summary is printed.
# Usage: OUT=... [LIMIT=240] bash scripts/device_marks_off.sh   (after `source scripts/device_install.sh`)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
W=$(mktemp -d)
trap 'tar -czf "$OUT/marks-off.tgz" -C "$W" .' EXIT
source scripts/device_install.sh
N=tests/torch_cuda/test_nccls_own_library_through_ctypes_runs_collectives_on_device_pointers.py
T=tests/torch_cuda/test_a_refused_capture_begin_leaves_the_generator_capturing.py
P=tests/plugin/test_a_test_that_leaves_a_side_stream_current_leaves_the_default_stream_to_the_next.py
C=/tmp/marks-off
mkdir -p "$C" && tar -cf - --exclude=./.whl --exclude=./.device . | tar -xf - -C "$C"
cd "$C" || exit 2
sed -i 's/^pytestmark = pytest.mark.own_process$/pass/' "$N" "$T"
grep -c "own_process$" "$N" "$T" > "$W/marks-left.txt"
run() {  # run NAME SECONDS pytest-args...
  local name=$1 secs=$2; shift 2
  SEAM_ARMS=cuda PYTHONPATH=$C timeout "$secs" python3 -m pytest -q -p no:cacheprovider "$@" > "$W/$name.log" 2>&1
  echo "$name rc=$? :: $(tail -1 "$W/$name.log")" >> "$W/summary.txt"
}
run plugin 60 "$P"
run pair 120 "$N" "$T"
run pair-reversed 120 "$T" "$N"
run folder "${LIMIT:-240}" "$N" "$T" tests/torch_cuda
for c in default_stream_begin_alone side_stream_current_then_default_stream_begin \
         refused_host_read_then_default_stream_begin refused_comm_then_default_stream_begin; do
  timeout 60 python3 scripts/nccl_probe.py --case "$c" > "$W/$c.jsonl" 2> "$W/$c.err"
  echo "probe $c rc=$?" >> "$W/summary.txt"
done
cat "$W/summary.txt"
