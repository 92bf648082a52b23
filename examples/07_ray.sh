#!/usr/bin/env bash
# How-to: run extraction and a layer sweep on Ray. Without an address --ray starts a local cluster,
# which liedar allows only inside a loopback-only network namespace: run this script through
# scripts/isolated.sh (make test already runs inside one), or pass --ray HOST:PORT of your cluster.
# Usage: bash scripts/isolated.sh bash examples/07_ray.sh [WORKDIR]
set -euo pipefail
cd "${1:-.}"

# hidden states of the built-in capitals set at layer 12, one shard of 64 statements per task
liedar extract --model smollm2-135m --data capitals --layers 12 --output acts/ --ray --threads 1

# the layer sweep with its activations computed by one Ray actor (shards already cached are read)
liedar probe sweep --model smollm2-135m --data capitals --layers 4,8,12 --output sweep/ --ray --concurrency 1
