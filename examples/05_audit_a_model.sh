#!/usr/bin/env bash
# How-to: audit a model you were given. One verdict (sandbagging, hidden capability, sycophancy,
# lying, clean or cannot tell) from every detector read against a trusted reference model.
# Usage: bash examples/05_audit_a_model.sh [WORKDIR]
# (the test suite runs it small: AUDIT_ARGS="--quick --workers 1", every row then reads "too few to decide")
set -euo pipefail
cd "${1:-.}"

# a shipped organism as the model "you were given"; its card names the reference (the base model)
liedar audit --model smollm2-135m:sycophant --output audit/ ${AUDIT_ARGS:-}

# the verdict page again from the saved record, no model loaded
liedar report --audit audit/audit.json --output audit/page/
