#!/usr/bin/env bash
# Headless Chromium for the report's browser checks (tests/liedar/test_report_browser.py), for
# `make test` only: the main job (`make demo`) never needs a browser. A Debian package,
# installed once when we are root and it is missing; without root it is left to the user and
# the browser checks skip with that reason.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "[bootstrap] chromium (headless browser for the report checks)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } ||
    echo "[bootstrap] could not install chromium: the browser checks will be skipped"
fi
