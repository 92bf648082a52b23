#!/usr/bin/env bash
# Quick start 3: the behavioural instruments on a model behind an OpenAI-compatible server.
# Usage: bash examples/03_served_model.sh [WORKDIR] [PORT]   (starts llama.cpp's server on 127.0.0.1 and stops it)
set -euo pipefail
cd "${1:-.}"
PORT="${2:-8765}"
PY="$(dirname "$(command -v liedar)")/python"
GGUF="$("$PY" -c 'from liedar.models.registry import resolve; print(resolve("smollm2-135m").path)')"

"$PY" -m llama_cpp.server --model "$GGUF" --model_alias smollm2-135m --host 127.0.0.1 --port "$PORT" \
    --n_threads 1 --n_ctx 2048 --flash_attn true > server.log 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 120); do  # wait for the server to answer GET /models
    "$PY" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" \
        2>/dev/null && break
    sleep 0.5
done

# answer consistency across option shuffles and rewordings, on 4 items (raise --limit for real use)
liedar behavioral consistency --model openai:smollm2-135m --base-url "http://127.0.0.1:$PORT/v1" \
    --api completions --template-from smollm2-135m --limit 4 --output consistency.json
