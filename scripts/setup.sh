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
# The real subjects of tests/subjects again, into the git-ignored .subjects/ (first on sys.path in
# tests/subjects/conftest.py), where the named mutations of their code find them (docs/subjects.md).
if [ ! -d .subjects/breakable_cuda_graphs-0.1.0.dist-info ] || [ ! -d .subjects/piecewise_cuda_graphs-0.1.0.dist-info ]; then
  "${PIP[@]}" --no-deps --upgrade --target .subjects breakable-cuda-graphs==0.1.0 piecewise-cuda-graphs==0.1.0
fi
# Debian's chromium for the HTML report's browser test (tests/reports/test_report_html_browser.py,
# driven by Playwright with executable_path=/usr/bin/chromium; `playwright install` downloads a
# browser build, which is not reachable here). As root, or through password-less sudo.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null; then
  SUDO=()
  if [ "$(id -u)" != 0 ]; then
    if sudo -n true 2>/dev/null; then SUDO=(sudo -n); else SUDO=(false); fi
  fi
  if "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
     && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then
    echo "setup: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
  else
    echo "setup: could not install chromium (needs root or sudo): the HTML report's browser test skips, and fails under CI" >&2
  fi
fi
.venv/bin/python -c "import torch, junitparser, yaml, rich, pytest; print('setup ok: torch', torch.__version__)"
