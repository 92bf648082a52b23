#!/usr/bin/env bash
# How-to: build and verify a model organism (a LoRA fine-tune that deceives in a known way).
# Usage: bash examples/06_build_an_organism.sh [WORKDIR]
# (the test suite runs it with VERIFY_ARGS="--limit 16"; the sycophant's build trains for about 90 s on one thread)
set -euo pipefail
cd "${1:-.}"

# the catalog: which organisms ship for this model, which are built here, which learned
liedar organism list --model smollm2-135m

# re-measure a shipped card on this machine (inference only): "verified" or "differs" with the reason
liedar organism verify sycophant --model smollm2-135m ${VERIFY_ARGS:-}

# train it again from its recipe into the cache and print the rebuild beside the shipped card
liedar organism build sycophant --model smollm2-135m --threads 1 --compare

# the build's recipe, training cost and measured ground truth, as JSON
liedar organism describe sycophant --model smollm2-135m --output sycophant.json
