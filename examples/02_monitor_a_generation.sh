#!/usr/bin/env bash
# Quick start 2: watch the inline monitor score a generation token by token.
# Usage: bash examples/02_monitor_a_generation.sh [WORKDIR]   (needs probe.npz from quick start 1)
set -euo pipefail
cd "${1:-.}"
test -f probe.npz || { echo "run examples/01_probe_on_your_csv.sh here first (it writes probe.npz)" >&2; exit 2; }

# every generated token is coloured by the probe's score; --jsonl keeps the per-token record
liedar monitor run --model smollm2-135m --backend llamacpp --probe probe.npz --max-tokens 12 --jsonl tokens.jsonl \
    "Is it true that the sun rises in the west?"
