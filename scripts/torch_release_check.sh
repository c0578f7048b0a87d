#!/usr/bin/env bash
# The emulator on another torch release: a venv of its own with PyPI's torch==VERSION (a CUDA build, as most CI
# installs it, on a machine without a GPU), then the emulated corpus and the emulated suites in it.
# Usage: bash scripts/torch_release_check.sh VERSION [VENV] [--corpus-only|--tests-only]
#   VERSION  a torch release on PyPI, e.g. 2.11.0 (the device tool's GPUs'); VENV defaults to .venv-torch-VERSION (git-ignored)
#   writes .seamgate/torch-VERSION/corpus-emulated.json (python -m tests.fidelity.cuda_corpus --arm emulated) and
#   .seamgate/torch-VERSION/tests.log (tests/torch_cuda, subjects, seam, drivers, fidelity), and compares the corpus
#   with the GPU's record (python -m tests.fidelity.cuda_corpus --compare).
# Needs the network and about 4 GB of disk for the CUDA build's wheels. Exit: 0 done, 2 bad usage; the compare's
# and pytest's own codes otherwise (non-zero when anything differs or fails).
set -uo pipefail
cd "$(dirname "$0")/.."
version="${1:-}"
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }
case "$version" in
  -h|--help) usage; exit 0 ;;
  ""|-*) usage >&2; exit 2 ;;
esac
venv="${2:-.venv-torch-$version}"
only="${3:-}"
case "$venv" in --*) only="$venv"; venv=".venv-torch-$version" ;; esac
out=".seamgate/torch-$version"
mkdir -p "$out"
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv" || exit 1
fi
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" 2>/dev/null \
  || "${pip[@]}" "torch==$version" || exit 1
# The test extra without torch (pinned above): hypothesis, jsonschema, mutmut, nvidia-ml-py and the real subjects, as setup.sh has.
"${pip[@]}" pyyaml junitparser rich pytest coverage pyflakes numpy jsonschema "hypothesis==6.170.17" "nvidia-ml-py==13.615.71" \
  "breakable-cuda-graphs==0.1.0" "piecewise-cuda-graphs==0.1.0" || exit 1
# seamgate itself (its pytest11 plugin: the torch_cuda fixture of the suites' child pytest sessions)
"${pip[@]}" --no-deps -e . || exit 1
export PYTHONPATH="$PWD:$PWD/.subjects${PYTHONPATH:+:$PYTHONPATH}"
"$venv/bin/python" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'GPU', torch.cuda.is_available())"
rc=0
if [ "$only" != "--tests-only" ]; then
  "$venv/bin/python" -m tests.fidelity.cuda_corpus --arm emulated --jobs "${JOBS:-2}" --out "$out/corpus-emulated.json" \
    > "$out/corpus.log" 2>&1 || rc=$?
  "$venv/bin/python" -m tests.fidelity.cuda_corpus --compare evidence/cuda-corpus-gpu.json "$out/corpus-emulated.json" \
    | tail -n 20 || rc=$?
fi
if [ "$only" != "--corpus-only" ]; then
  "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/torch_cuda tests/subjects tests/seam tests/drivers \
    tests/fidelity > "$out/tests.log" 2>&1 || rc=$?
  tail -n 3 "$out/tests.log"
fi
exit $rc
