"""Organisms on llama.cpp: a liedar LoRA adapter exported to llama.cpp's GGUF LoRA format.

Why an adapter file and not a merged GGUF: the shipped GGUFs are quantized (Q4_1, Q4_K_M);
merging a LoRA update means dequantizing, adding and re-quantizing the touched tensors,
which changes the base weights' rounding as well as adding the update. llama.cpp applies a
GGUF LoRA adapter at run time on top of the unchanged quantized weights
(``llama_adapter_lora_init`` + ``llama_set_adapter_lora``), exactly W x + s B A x.

The file follows llama.cpp's ``convert_lora_to_gguf.py``: ``general.type = adapter``,
``adapter.type = lora``, ``adapter.lora.alpha``, and per adapted weight the tensors
``<gguf name>.lora_a`` (numpy [r, in]) and ``.lora_b`` ([out, r]). Like the converter, the
q/k projections of llama-architecture models get the rotary row permutation that
``convert_hf_to_gguf.py`` applied to the base weights (on B's output rows; A is unchanged).
The exported file is cached next to the adapter, keyed by the adapter's content hash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from liedar.core._util.atomic import atomic_path
from liedar.core.errors import IncompatibleError
from liedar.models.lora import LoraAdapter, check_compatible, organism_fingerprint

PERMUTED_ARCHS = ("llama",)  # convert_hf_to_gguf permutes q/k rows for these (LlamaModel.permute)


def _permute(weights: np.ndarray, n_head: int, n_head_kv: Optional[int]) -> np.ndarray:
    """convert_hf_to_gguf.LlamaModel.permute, on the output (row) dimension."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (
        weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def export_gguf_lora(adapter: LoraAdapter, metadata: dict, target: Path) -> Path:
    """Write `adapter` as a llama.cpp GGUF LoRA for a base model with GGUF `metadata`."""
    import gguf

    arch = str(metadata.get("general.architecture", ""))
    names = {v: k for k, v in gguf.MODEL_ARCH_NAMES.items()}
    if arch not in names:
        raise IncompatibleError(f"llama.cpp architecture {arch!r} is unknown to the gguf package; use transformers")
    tmap = gguf.get_tensor_name_map(names[arch], adapter.n_layers)
    n_head = int(metadata.get(f"{arch}.attention.head_count", 0) or 0)
    n_kv = int(metadata.get(f"{arch}.attention.head_count_kv", n_head) or n_head)
    with atomic_path(target) as tmp:
        writer = gguf.GGUFWriter(str(tmp), arch)
        writer.add_type(gguf.GGUFType.ADAPTER)
        writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
        writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(adapter.alpha))
        for module in adapter.modules():
            gname = tmap.get_name(module + ".weight", try_suffixes=(".weight",))
            if gname is None:
                raise IncompatibleError(f"no llama.cpp tensor name for {module}; this organism loads with transformers")
            a = np.ascontiguousarray(adapter.weights[f"{module}.lora_A"], dtype=np.float32)
            b = np.ascontiguousarray(adapter.weights[f"{module}.lora_B"], dtype=np.float32)
            if arch in PERMUTED_ARCHS and n_head:
                if module.endswith("q_proj"):
                    b = np.ascontiguousarray(_permute(b, n_head, n_head))
                elif module.endswith("k_proj"):
                    b = np.ascontiguousarray(_permute(b, n_head, n_kv))
            base = gname[: -len(".weight")] if gname.endswith(".weight") else gname
            writer.add_tensor(f"{base}.weight.lora_a", a)
            writer.add_tensor(f"{base}.weight.lora_b", b)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
    return target


def attach_llamacpp(backend, adapter_dir: Path, *, name: Optional[str] = None):
    """Apply the organism's adapter to a LlamaCppBackend in place (runtime LoRA)."""
    adapter = LoraAdapter.load(adapter_dir)  # verified: size + sha256
    check_compatible(backend, adapter, str(adapter_dir))
    digest = adapter.content_hash()
    # the export is derived data: it lives in the cache (never beside a shipped adapter in the
    # repository), keyed by the adapter's content hash, written atomically
    from liedar.models.storage import cache_root

    target = Path(cache_root()) / "organisms" / "gguf-lora" / f"adapter-{digest[:24]}.gguf"
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.is_file():
        export_gguf_lora(adapter, dict(backend.llm.metadata), target)
    handle = backend.lib.llama_adapter_lora_init(backend.llm.model, str(target).encode())
    if not handle:
        raise IncompatibleError(f"llama.cpp refused the LoRA adapter {target}; load this organism with transformers")
    if backend.set_lora(handle) != 0:  # the handle is kept alive as long as the backend
        raise IncompatibleError(f"llama.cpp could not apply the LoRA adapter {target}; use transformers")
    backend.base_fingerprint = backend.fingerprint
    backend.adapter_sha256 = digest
    backend.fingerprint = organism_fingerprint(backend.fingerprint, digest)
    backend.name = name or f"{backend.name}+lora"
    backend.organism = {"adapter_dir": str(adapter_dir), "gguf_lora": str(target)}
    return backend
