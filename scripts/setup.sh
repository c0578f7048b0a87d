#!/usr/bin/env bash
# Make .venv with everything seamgate and its tests need, on a fresh machine with no GPU.
# Idempotent: a second run installs nothing new. Override the interpreter with PYTHON=...
# Usage: bash scripts/setup.sh [--with-browser]   (--with-browser, or CI=true: also apt-get install chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
  case "$arg" in
    --with-browser) ;;
    -h|--help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option '$arg' (known: --with-browser, --help)" >&2; exit 2 ;;
  esac
done
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
# The CPU build of torch first: this machine kind keeps torch 2.13.0 (CPU) on disk, and asking for
# it by exact version stops pip from pulling a multi-gigabyte CUDA build for a bare "torch".
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  "${PIP[@]}" "torch==${SEAMGATE_TORCH_VERSION:-2.13.0}"
fi
"${PIP[@]}" -e '.[test]'
# The real subjects of tests/subjects again, into the git-ignored .subjects/ (first on sys.path in
# tests/subjects/conftest.py), where the named mutations of their code find them (docs/subjects.md).
if [ ! -d .subjects/breakable_cuda_graphs-0.1.0.dist-info ] || [ ! -d .subjects/piecewise_cuda_graphs-0.1.0.dist-info ]; then
  "${PIP[@]}" --no-deps --upgrade --target .subjects breakable-cuda-graphs==0.1.0 piecewise-cuda-graphs==0.1.0
fi
# Debian's chromium for the HTML report's browser test: a system package, so only when asked
# (--with-browser, or CI=true); scripts/setup_browser.sh says what it does and what it skips.
bash scripts/setup_browser.sh "$@"
.venv/bin/python -c "import torch, junitparser, yaml, rich, pytest, hypothesis, pynvml; print('setup ok: torch', torch.__version__)"
