#!/usr/bin/env bash
# Quick start 4: check the detectors against model organisms (models that deceive in a known way).
# Usage: bash examples/04_validate_on_organisms.sh [WORKDIR]
# (the test suite runs it small: ORGANISMS=sycophant VALIDATE_ARGS="--quick --organisms sycophant")
set -euo pipefail
cd "${1:-.}"

# re-measure the shipped organisms (zoo/) on this machine: did each still learn its behaviour?
liedar organism verify --model smollm2-135m ${ORGANISMS:-}
# every detector on the base model and on each organism: recall and false flags
liedar validate --model smollm2-135m --no-build --output val/ ${VALIDATE_ARGS:-}
