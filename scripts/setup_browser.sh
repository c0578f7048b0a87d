#!/usr/bin/env bash
# Debian's chromium for the HTML report's browser test (tests/reports/test_report_html_browser.py, driven
# by Playwright with executable_path=/usr/bin/chromium; `playwright install` downloads a browser build,
# which is not reachable here). A system package, so installed ONLY when asked: --with-browser, or
# CI=true. As root, or through password-less sudo. Without it the browser test skips and says how to get it.
set -uo pipefail
CHROMIUM=${SEAMGATE_CHROMIUM:-/usr/bin/chromium}
WANT=0
for arg in "$@"; do [ "$arg" = --with-browser ] && WANT=1; done
[ "${CI:-}" = true ] && WANT=1
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
if [ "$WANT" != 1 ]; then
  echo "setup: no chromium at $CHROMIUM: the HTML report's browser test will skip; 'bash scripts/setup.sh --with-browser' installs Debian's chromium (apt-get, as root or through sudo)"
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "setup: --with-browser needs apt-get (Debian/Ubuntu); install chromium yourself and set SEAMGATE_CHROMIUM to it" >&2
  exit 0
fi
SUDO=()
if [ "$(id -u)" != 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO=(sudo -n); else SUDO=(false); fi
fi
if "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
   && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then
  echo "setup: installed $("$CHROMIUM" --version 2>/dev/null || echo chromium)"
else
  echo "setup: could not install chromium (needs root or sudo): the HTML report's browser test skips, and fails under CI" >&2
fi
