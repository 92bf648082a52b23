#!/usr/bin/env bash
# How-to: bring your own model, as a GGUF file or a Hugging Face folder (config.json + safetensors).
# Usage: bash examples/08_bring_your_own_model.sh [WORKDIR]
# (smollm2-135m's GGUF stands in for your file, and liedar's float32 copy of it for your folder)
set -euo pipefail
cd "${1:-.}"
PY="$(dirname "$(command -v liedar)")/python"

# a GGUF file: both backends read it (llama.cpp directly, transformers through a float32 copy)
ln -sf "$("$PY" -c 'from liedar.models.registry import resolve; print(resolve("smollm2-135m").path)')" my-model.gguf
liedar probe train --model my-model.gguf --data capitals --layer 12 --probe logistic --output my-probe.npz

# a Hugging Face folder (config.json + safetensors): here the float32 copy liedar makes of the GGUF
cp -r "$("$PY" -c 'from pathlib import Path; from liedar.models.registry import dequantized_copy; from liedar.models.storage import sha256_file; p = Path("my-model.gguf").resolve(); print(dequantized_copy(p, sha256_file(p)))')" my-hf-model
liedar behavioral gap --model my-hf-model --backend transformers --limit 8 --output my-gap
