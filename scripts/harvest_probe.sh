#!/usr/bin/env bash
# The probe's tests written elsewhere, fetched into the git-ignored .probe/ (docs/torch-cuda.md, "The probe"):
# .probe/ext gets the test files of the breakable-cuda-graphs 0.1.0 and piecewise-cuda-graphs 0.1.0 sdists from PyPI,
# unmodified; .probe/vendor gets absl-py and expecttest, which they import (and PyTorch's own TestCase). PyTorch's
# tests (.probe/pytorch) are harvested by hand (run_probe.sh's header): this script leaves that folder as it is.
# Usage: bash scripts/harvest_probe.sh   (needs the network; .venv's pip), then OUT=DIR bash scripts/run_probe.sh emulated
# Exit: 0 done, 1 a download or an unpack failed.
set -euo pipefail
cd "$(dirname "$0")/.."
pip=(.venv/bin/python -m pip)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${pip[@]}" download -q --no-deps --no-binary :all: -d "$work" breakable-cuda-graphs==0.1.0 piecewise-cuda-graphs==0.1.0
mkdir -p .probe/ext .probe/vendor
for sdist in "$work"/*.tar.gz; do
  tar -xzf "$sdist" -C "$work"
done
cp "$work"/*/tests/test_*.py .probe/ext/
"${pip[@]}" install -q --target .probe/vendor absl-py expecttest
ls .probe/ext
