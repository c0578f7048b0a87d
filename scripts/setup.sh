#!/usr/bin/env bash
# Make .venv with everything seamgate and its tests need, on a fresh machine with no GPU.
# Idempotent: a second run installs nothing new. Override the interpreter with PYTHON=...
set -euo pipefail
cd "$(dirname "$0")/.."
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
.venv/bin/python -c "import torch, junitparser, yaml, rich, pytest; print('setup ok: torch', torch.__version__)"
