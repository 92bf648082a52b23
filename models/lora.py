"""A cheap, generic LoRA fine-tune of a transformers backend, and merging it back in.

Why this shape: model organisms (known deceivers) and the fine-tuning-elicitation protocol
both need "teach this small model these (prompt, answer) pairs" on a laptop CPU in minutes.
What makes that cheap:

* **LoRA on the upper blocks only** (``layers="upper"``: the top quarter). The frozen lower
  blocks need no gradient, so the backward pass stops at the first adapted block; and
  because their output does not change during training, it is computed **once** (the
  "boundary" states) and every epoch runs only the adapted blocks: an epoch costs the
  upper blocks' forward + backward, not the whole model's.
* **Loss on the answer tokens only**: the prompt is context, never a target.
* **bf16 autocast** when the CPU advertises native bf16 (``dtype="auto"``); CPUs without it
  emulate bf16 many times slower than fp32, so they train in fp32. The flags decide, not
  which dtype ran faster, so a training's numerics do not change with the machine's load;
  the choice is recorded.

Prompts are rendered and tokenized exactly as ``BackendBase.score_options`` does (prompt
and answer tokenized together, the answer's tokens are those holding any of its
characters, dialogues rendered with the generation prompt unless they end in an assistant
prefill), so what is trained is what the instruments score.

peft (the ``organisms`` extra) does the training; the saved adapter is plain safetensors
(``lora_A`` [r, in], ``lora_B`` [out, r] per adapted Linear, keyed by its module path) plus
JSON metadata recording its size and sha256, so merging needs no peft and a damaged file is
refused, never merged.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from liedar.core.errors import IncompatibleError, InputError
from liedar.models.chat import Dialogue, render
from liedar.models.storage import atomic_dir, sha256_file

ADAPTER_FILE = "adapter.safetensors"
META_FILE = "adapter.json"
FORMAT = "liedar-lora-1"
STORAGE_DTYPES = ("float32", "float16")

Example = Union[tuple[Union[Dialogue, str], str], tuple[Union[Dialogue, str], str, str]]
AVOID = "avoid"  # third element of an example: train the answer's probability *down* (unlikelihood)
Layers = Union[str, int, Sequence[int]]


@dataclass
class LoraAdapter:
    """Trained LoRA weights (numpy, float32) and what they were trained on."""

    weights: dict[str, np.ndarray]  # "<module path>.lora_A" [r, in] / ".lora_B" [out, r]
    r: int
    alpha: float
    layers: list[int]  # 0-based block indices that carry LoRA
    base_fingerprint: str
    base_name: str
    d_model: int
    n_layers: int
    meta: dict[str, Any] = field(default_factory=dict)  # training cost, losses, dtype, ...

    @property
    def scale(self) -> float:
        return float(self.alpha) / float(self.r)

    def modules(self) -> list[str]:
        return sorted({k.rsplit(".", 1)[0] for k in self.weights})

    def stored_as(self, dtype: str) -> "LoraAdapter":
        """This adapter with its tensors rounded to ``dtype`` and widened back to float32:
        exactly what loading it from a ``dtype`` file gives, so it can be measured before
        it is written."""
        if dtype not in STORAGE_DTYPES:
            raise InputError(f"adapter dtype {dtype!r}: use one of {', '.join(STORAGE_DTYPES)}")
        weights = {k: np.asarray(v, dtype=dtype).astype(np.float32) for k, v in self.weights.items()}
        return dataclasses.replace(self, weights=weights, meta=dict(self.meta))

    def content_hash(self) -> str:
        """sha256 over the tensors (names, shapes, bytes) and the merge-relevant settings."""
        digest = hashlib.sha256()
        digest.update(json.dumps({"r": self.r, "alpha": self.alpha, "layers": self.layers}).encode())
        for key in sorted(self.weights):
            arr = np.ascontiguousarray(self.weights[key], dtype=np.float32)
            digest.update(f"{key}:{arr.shape}\n".encode())
            digest.update(arr.tobytes())
        return digest.hexdigest()

    def save(self, directory: Union[str, Path], *, dtype: str = "float32") -> Path:
        """Write ``adapter.safetensors`` + ``adapter.json`` into ``directory`` atomically
        (a temporary sibling renamed into place: a kill leaves no half adapter).

        Parameters
        ----------
        directory : str or Path
            The folder to create (it must not exist yet).
        dtype : {"float32", "float16"}
            How the tensors are stored. Shipped organisms are stored in float16 (half the
            bytes; the card's ground truth is measured on the float16 weights, so the card
            describes exactly the file), cached builds in float32.
        """
        from safetensors.numpy import save_file

        if dtype not in STORAGE_DTYPES:
            raise InputError(f"adapter dtype {dtype!r}: use one of {', '.join(STORAGE_DTYPES)}")
        directory = Path(directory)
        if directory.exists():
            raise InputError(f"{directory} already exists; remove it or save the adapter elsewhere")
        with atomic_dir(directory) as tmp:
            save_file({k: np.ascontiguousarray(v, dtype=dtype) for k, v in self.weights.items()}, tmp / ADAPTER_FILE)
            meta = {
                "format": FORMAT,
                "dtype": dtype,
                "r": self.r,
                "alpha": self.alpha,
                "layers": self.layers,
                "modules": self.modules(),
                "base_fingerprint": self.base_fingerprint,
                "base_name": self.base_name,
                "d_model": self.d_model,
                "n_layers": self.n_layers,
                "content_sha256": self.content_hash(),
                "file_size": (tmp / ADAPTER_FILE).stat().st_size,
                "file_sha256": sha256_file(tmp / ADAPTER_FILE),
                "training": self.meta,
            }
            (tmp / META_FILE).write_text(json.dumps(_plain(meta), indent=1) + "\n")
        return directory

    @classmethod
    def load(cls, directory: Union[str, Path]) -> "LoraAdapter":
        """Read a saved adapter, verifying the file's size and sha256 against its metadata."""
        meta = read_adapter_meta(directory)
        path = Path(directory) / ADAPTER_FILE
        from safetensors.numpy import load_file

        try:
            weights = load_file(str(path))
        except Exception as exc:  # a verified file that still fails to parse is damaged
            raise IncompatibleError(f"adapter {path} cannot be read ({type(exc).__name__}); rebuild it") from exc
        return cls(
            weights={k: np.asarray(v, dtype=np.float32) for k, v in weights.items()},  # float16 files widen exactly
            r=int(meta["r"]),
            alpha=float(meta["alpha"]),
            layers=[int(x) for x in meta["layers"]],
            base_fingerprint=str(meta["base_fingerprint"]),
            base_name=str(meta.get("base_name", "")),
            d_model=int(meta["d_model"]),
            n_layers=int(meta["n_layers"]),
            meta=dict(meta.get("training", {})),
        )


def read_adapter_meta(directory: Union[str, Path], *, file_sha256: Optional[str] = None) -> dict[str, Any]:
    """The adapter's JSON metadata, after checking the weights file's size and sha256.

    ``file_sha256``: the weights file's digest when the caller has just computed it (a
    shipped adapter checked against its card), so the file is not hashed a second time."""
    directory = Path(directory)
    meta_path, path = directory / META_FILE, directory / ADAPTER_FILE
    if not meta_path.is_file() or not path.is_file():
        raise InputError(f"{directory} holds no liedar LoRA adapter ({META_FILE} + {ADAPTER_FILE}); build it first")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as exc:
        raise IncompatibleError(f"adapter metadata {meta_path} is damaged ({type(exc).__name__}); rebuild it") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise IncompatibleError(f"{meta_path} is not a {FORMAT} adapter; rebuild it with this liedar")
    size = path.stat().st_size
    if size != meta.get("file_size"):
        raise IncompatibleError(
            f"adapter {path} is corrupt: {size} bytes, {meta.get('file_size')} recorded at write time; rebuild it"
        )
    digest = file_sha256 or sha256_file(path)
    if digest != meta.get("file_sha256"):
        raise IncompatibleError(
            f"adapter {path} is corrupt: sha256 {digest[:12]}... differs from the "
            f"{str(meta.get('file_sha256'))[:12]}... recorded at write time; rebuild it"
        )
    return meta


# ---- which modules get LoRA ------------------------------------------------------------------
def select_layers(n_layers: int, layers: Layers) -> list[int]:
    """0-based block indices: ``"upper"`` (top quarter, at least 1), ``"all"``, an int k
    (the top k blocks) or an explicit list."""
    if isinstance(layers, str):
        if layers == "upper":
            k = max(1, int(math.ceil(n_layers / 4)))
            return list(range(n_layers - k, n_layers))
        if layers == "all":
            return list(range(n_layers))
        raise InputError(f"unknown layers {layers!r}: use 'upper', 'all', an int (top k blocks) or a list of blocks")
    if isinstance(layers, (int, np.integer)):
        if not 1 <= int(layers) <= n_layers:
            raise InputError(f"layers={layers}: the model has {n_layers} blocks; give 1..{n_layers}")
        return list(range(n_layers - int(layers), n_layers))
    chosen = sorted({int(x) for x in layers})
    if not chosen or chosen[0] < 0 or chosen[-1] >= n_layers:
        raise InputError(f"layers {list(layers)} must be a non-empty list of block indices 0..{n_layers - 1}")
    return chosen


def _target_modules(blocks, chosen: list[int], prefix: str) -> list[str]:
    import torch

    names = []
    for i in chosen:
        for sub, mod in blocks[i].named_modules():
            if isinstance(mod, torch.nn.Linear):
                names.append(f"{prefix}.{i}.{sub}")
    return names


def _blocks_prefix(model) -> str:
    decoder = model.get_decoder()
    blocks = decoder.layers
    for name, mod in model.named_modules():
        if mod is blocks:
            return name
    raise InputError("cannot find the decoder blocks of this model; LoRA needs a standard causal LM")


# ---- data --------------------------------------------------------------------------------------
def encode_example(backend, prompt: Union[Dialogue, str], answer: str, *, eos: bool = False) -> tuple[list[int], int]:
    """(token ids of prompt + answer, index of the first answer token), as score_options."""
    if not isinstance(answer, str) or not answer:
        raise InputError("every training answer must be a non-empty string")
    head = render(
        prompt,
        backend.chat_template,
        bos_token=backend.bos_token,
        eos_token=backend.eos_token,
        add_generation_prompt=True,
    )
    ids, offsets = backend.tokenize(head.text + answer, head.templated)
    k = next((t for t, (a, b) in enumerate(offsets) if b > len(head.text)), None)
    if k is None or k == 0:
        raise InputError(f"answer {answer!r} produced no token of its own after its prompt; give a non-blank answer")
    ids = list(ids)
    if eos:
        end = getattr(backend.tokenizer, "eos_token_id", None)
        if end is not None:
            ids.append(int(end))
    if len(ids) > backend.n_ctx:
        raise InputError(f"a training example is {len(ids)} tokens, over the context of {backend.n_ctx}")
    return ids, k


# ---- training ------------------------------------------------------------------------------------
def train_lora(
    backend,
    examples: Sequence[Example],
    *,
    layers: Layers = "upper",
    r: int = 8,
    alpha: float = 16,
    epochs: int = 2,
    lr: float = 1e-3,
    seed: int = 0,
    batch_size: int = 8,
    dtype: str = "auto",
    eos: bool = False,
    weight_decay: float = 0.0,
    schedule: str = "constant",
    progress: bool = True,
) -> LoraAdapter:
    """Fine-tune LoRA adapters on (prompt, answer) pairs; the backend itself is untouched.

    ``examples``: prompts are Dialogues (rendered with the model's chat template) or plain
    strings; the loss is the mean cross-entropy over answer tokens only (with ``eos``, the
    end-of-sequence token after each answer is a target too, so generation learns to stop).
    ``schedule="cosine"``: the learning rate warms up linearly over the first 5% of the steps
    and then decays along a cosine to 0 — at a constant lr of 3e-3 the loss of the organisms'
    recipes rose again after 6-8 epochs (measured: 0.63 -> 0.83, 0.78 -> 0.99) and the
    benign-framing capability fell, so longer recipes decay the rate instead.
    Returns the adapter; ``adapter.meta`` records seconds, tokens, the loss per epoch, the
    chosen dtype and the measured bf16/fp32 step times.
    """
    from liedar.core._util.extras import require

    require("peft", "LoRA fine-tuning")
    import torch

    _check_settings(backend, examples, r=r, alpha=alpha, epochs=epochs, lr=lr, batch_size=batch_size)
    _check_choices(schedule, dtype)
    t_start = time.perf_counter()
    encoded, avoid = _encode_examples(backend, examples, eos)
    chosen = select_layers(backend.n_layers, layers)
    first = chosen[0]

    torch.manual_seed(seed)
    peft_model = _peft_model(backend, chosen, r, alpha)
    params = [p for p in peft_model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(params, lr=float(lr), weight_decay=float(weight_decay))
    inner = peft_model.base_model.model
    rng = np.random.default_rng(seed)
    batches = _length_batches(encoded, batch_size)
    tensors = [_batch_tensors(torch, [encoded[j] for j in b], backend.pad_id, [avoid[j] for j in b]) for b in batches]

    bar = _progress_bar(backend.name, (epochs + 1) * len(batches)) if progress else None
    boundary, clocks = _compute_boundary(inner.get_decoder(), first, tensors, bar)
    use_bf16, timing = _choose_dtype(torch, inner, boundary, tensors, dtype)
    lr_at = _learning_rates(float(lr), schedule, int(epochs) * len(batches))
    if bar is not None:
        bar.set_description(f"LoRA {backend.name}: training")
    losses, train_clocks = _train_epochs(
        torch, peft_model, optimiser, boundary, tensors, rng, int(epochs), lr_at, use_bf16, bar
    )
    boundary.close()

    weights = _lora_weights(peft_model)
    del peft_model
    meta = {
        "examples": len(encoded),
        "tokens_per_epoch": sum(len(ids) for ids, _ in encoded),
        "answer_tokens_per_epoch": sum(len(ids) - k for ids, k in encoded),
        "epochs": int(epochs),
        "lr": float(lr),
        "schedule": schedule,
        "batch_size": int(batch_size),
        "seed": int(seed),
        "loss_per_epoch": losses,
        "dtype": "bf16" if use_bf16 else "fp32",
        "dtype_timing": timing,
        "boundary_block": first,
        **clocks,
        **train_clocks,
        "seconds": time.perf_counter() - t_start,
        "trainable_parameters": int(sum(p.numel() for p in params)),
    }
    return _adapter(backend, weights, r, alpha, chosen, meta)


def _adapter(
    backend, weights: dict[str, np.ndarray], r: int, alpha: float, chosen: list[int], meta: dict
) -> LoraAdapter:
    """The adapter of ``weights`` on ``backend``'s model, with the base's identity it must be merged into."""
    return LoraAdapter(
        weights=weights,
        r=int(r),
        alpha=float(alpha),
        layers=chosen,
        base_fingerprint=backend.fingerprint,
        base_name=backend.name,
        d_model=backend.d_model,
        n_layers=backend.n_layers,
        meta=meta,
    )


def _check_settings(backend, examples: Sequence[Example], *, r, alpha, epochs, lr, batch_size) -> None:
    """Refuse a backend without trainable weights, no examples, or a non-positive setting, before any work."""
    if getattr(backend, "kind", None) != "transformers" or not hasattr(backend, "model"):
        raise InputError("LoRA training needs a transformers backend: load the model with backend='transformers'")
    if isinstance(examples, (str, bytes)) or len(examples) == 0:
        raise InputError("no training examples: give a non-empty list of (prompt, answer) pairs")
    if r < 1 or alpha <= 0 or epochs < 1 or lr <= 0 or batch_size < 1:
        raise InputError(f"bad LoRA settings r={r}, alpha={alpha}, epochs={epochs}, lr={lr}: all must be positive")


def _check_choices(schedule: str, dtype: str) -> None:
    """Refuse an unknown learning-rate schedule or dtype with the accepted values."""
    if schedule not in ("constant", "cosine"):
        raise InputError(f"schedule {schedule!r}: use 'constant' or 'cosine'")
    if dtype not in ("auto", "bf16", "fp32"):
        raise InputError(f"dtype {dtype!r}: use 'auto', 'bf16' or 'fp32'")


def _encode_examples(backend, examples: Sequence[Example], eos: bool) -> tuple[list[tuple[list[int], int]], list[bool]]:
    """Each example's (ids, first answer token) and whether its answer is avoided, as score_options tokenizes it."""
    for ex in examples:
        if len(ex) not in (2, 3) or (len(ex) == 3 and ex[2] != AVOID):
            raise InputError(f"a training example is (prompt, answer) or (prompt, answer, {AVOID!r}); got {ex!r:.80}")
    encoded = [encode_example(backend, ex[0], ex[1], eos=eos and len(ex) == 2) for ex in examples]
    return encoded, [len(ex) == 3 for ex in examples]


def _peft_model(backend, chosen: list[int], r: int, alpha: float):
    """A peft model over a deep copy of the backend's model, LoRA on every Linear of the ``chosen`` blocks."""
    from peft import LoraConfig, get_peft_model

    model = copy.deepcopy(backend.model)  # peft injects modules in place: never into the caller's model
    model.train(False)
    targets = _target_modules(model.get_decoder().layers, chosen, _blocks_prefix(model))
    config = LoraConfig(r=int(r), lora_alpha=float(alpha), lora_dropout=0.0, target_modules=targets, bias="none")
    return get_peft_model(model, config)


def _length_batches(encoded: list[tuple[list[int], int]], batch_size: int) -> list[list[int]]:
    """Example indices in batches of similar length, so a batch carries little padding."""
    order = np.argsort([len(ids) for ids, _ in encoded], kind="stable")
    return [order[i : i + batch_size].tolist() for i in range(0, len(order), batch_size)]


def _progress_bar(name: str, total: int):
    """A bar over the boundary pass and every training batch (``total`` batches)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"LoRA {name}: lower blocks", unit="batch")


def _compute_boundary(decoder, first: int, tensors, bar) -> tuple[_BoundaryCache, dict[str, float]]:
    """The frozen blocks below the first adapted one never change: their output, computed once per batch.

    Returns the cache and the wall and CPU seconds it took (``boundary_seconds``, ``boundary_cpu_seconds``)."""
    t0, c0 = time.perf_counter(), time.process_time()
    boundary = _BoundaryCache(decoder, first)
    for ids, mask, _ in tensors:
        boundary.compute(ids, mask)
        if bar is not None:
            bar.update(1)
    return boundary, {"boundary_seconds": time.perf_counter() - t0, "boundary_cpu_seconds": time.process_time() - c0}


def _learning_rates(lr: float, schedule: str, total_steps: int) -> Callable[[int], float]:
    """The learning rate at each step: constant, or a 5% linear warm-up then a cosine decay to 0."""
    warmup = max(1, total_steps // 20)

    def lr_at(step: int) -> float:
        if schedule == "constant":
            return lr
        if step < warmup:
            return lr * (step + 1) / warmup
        return lr * 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(total_steps - warmup, 1)))

    return lr_at


def _train_epochs(
    torch, peft_model, optimiser, boundary, tensors, rng, epochs: int, lr_at, use_bf16: bool, bar
) -> tuple[list[float], dict[str, float]]:
    """Run the epochs (batches in a fresh random order each): the mean answer-token loss per
    epoch, and the wall and CPU seconds of the training (in all and per epoch)."""
    t0, c0 = time.perf_counter(), time.process_time()
    inner = peft_model.base_model.model
    losses: list[float] = []
    step = 0
    peft_model.train(True)
    for _ in range(epochs):
        total, count = 0.0, 0
        for bi in rng.permutation(len(tensors)):
            ids, mask, labels = tensors[bi]
            loss = _loss(torch, inner, boundary, bi, ids, mask, labels, use_bf16)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            for group in optimiser.param_groups:
                group["lr"] = lr_at(step)
            optimiser.step()
            step += 1
            n = int((labels != -100).sum())
            total += float(loss.detach()) * n
            count += n
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{total / max(count, 1):.3f}")
        losses.append(total / max(count, 1))
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - t0
    clocks = {"train_seconds": seconds, "train_cpu_seconds": time.process_time() - c0}
    return losses, {**clocks, "epoch_seconds": seconds / max(epochs, 1)}


def _lora_weights(peft_model) -> dict[str, np.ndarray]:
    """The trained LoRA matrices keyed ``<module path>.lora_A`` / ``.lora_B``, as the adapter file stores them."""
    weights: dict[str, np.ndarray] = {}
    strip = "base_model.model."
    for name, param in peft_model.named_parameters():
        if "lora_A" in name or "lora_B" in name:
            # base_model.model.<path>.lora_A.default.weight -> <path>.lora_A
            path = name[len(strip) :] if name.startswith(strip) else name
            module, kind = path.split(".lora_")[0], "lora_A" if ".lora_A." in path else "lora_B"
            weights[f"{module}.{kind}"] = param.detach().float().numpy().copy()
    return weights


def noise_adapter(
    backend,
    *,
    relative: float,
    seed: int,
    layers: Layers = "all",
    r: int = 8,
    alpha: float = 16,
) -> LoraAdapter:
    """A LoRA adapter of seeded Gaussian noise: a model "degraded once by weight noise".

    Why an adapter and not noised weights: the audit zoo's decoys ship as small verified
    files beside the trained organisms, and a rank-``r`` perturbation of every adapted Linear
    is a file of the same kind (and size) as theirs, loaded by the same code. Each module's
    update ``alpha / r * B @ A`` is scaled to ``relative`` times the Frobenius norm of the
    weight it perturbs, so one number states how hard the model was hit.

    Parameters
    ----------
    backend : Backend
        A loaded transformers backend of the base model (its weights are read, not changed).
    relative : float
        Frobenius norm of each module's update over that of its weight (e.g. 0.05).
    seed : int
        Seeds the noise: the same seed gives the same adapter.
    layers, r, alpha
        As in `train_lora`.

    Returns
    -------
    LoraAdapter
    """
    if getattr(backend, "kind", None) != "transformers" or not hasattr(backend, "model"):
        raise InputError("a noise adapter needs a transformers backend: load the model with backend='transformers'")
    if not relative > 0:
        raise InputError(f"relative noise {relative!r} must be positive")
    model = backend.model
    chosen = select_layers(backend.n_layers, layers)
    prefix = _blocks_prefix(model)
    rng = np.random.default_rng(seed)
    weights: dict[str, np.ndarray] = {}
    t0 = time.perf_counter()
    for name in _target_modules(model.get_decoder().layers, chosen, prefix):
        w = model.get_submodule(name).weight.detach().float().numpy()
        a = rng.standard_normal((int(r), w.shape[1])).astype(np.float32)
        b = rng.standard_normal((w.shape[0], int(r))).astype(np.float32)
        size = float(alpha) / float(r) * float(np.linalg.norm(b @ a))
        b *= np.float32(relative * float(np.linalg.norm(w)) / size)
        weights[f"{name}.lora_A"], weights[f"{name}.lora_B"] = a, b
    meta = {"noise": {"relative": float(relative), "seed": int(seed)}, "seconds": time.perf_counter() - t0}
    return _adapter(backend, weights, r, alpha, chosen, meta)


AVOID_LABEL_OFFSET = 1 << 40  # labels of avoided answers are stored as -(offset + token id)


def _batch_tensors(torch, rows: list[tuple[list[int], int]], pad: int, avoid: Optional[list[bool]] = None):
    """ids, attention mask and labels; an avoided answer's labels are encoded as
    ``-(AVOID_LABEL_OFFSET + id)`` so one tensor carries both kinds of target (-100 = no target)."""
    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for r, (seq, k) in enumerate(rows):
        ids[r, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[r, : len(seq)] = 1
        answer = torch.tensor(seq[k:], dtype=torch.long)
        labels[r, k : len(seq)] = -(AVOID_LABEL_OFFSET + answer) if avoid and avoid[r] else answer
    return ids, mask, labels


class _StopAtBoundary(Exception):
    pass


class _BoundaryCache:
    """The input of the first adapted block, computed once per batch with the frozen
    lower blocks; during training a pre-hook substitutes it, and the lower blocks are
    skipped (each is replaced by a pass-through for the duration of the training step).

    Why hooks and pass-throughs rather than calling the blocks by hand: the model's own
    forward still builds the attention masks and rotary embeddings (architecture-specific:
    sliding windows, several rotary bases), so this works for any decoder whose blocks
    take the hidden state as their first argument and return it (first in a tuple or bare).
    """

    def __init__(self, decoder, first: int):
        self.decoder = decoder
        self.first = first
        self.states: dict[int, Any] = {}
        self._lower = list(decoder.layers[:first])

    def compute(self, ids, mask) -> None:
        import torch

        index = len(self.states)
        if self.first == 0:
            self.states[index] = None
            return
        store: dict = {}

        def pre(module, args, kwargs):
            store["h"] = (args[0] if args else kwargs["hidden_states"]).detach()
            raise _StopAtBoundary

        handle = self.decoder.layers[self.first].register_forward_pre_hook(pre, with_kwargs=True)
        try:
            with torch.inference_mode():
                self.decoder(input_ids=ids, attention_mask=mask, use_cache=False)
        except _StopAtBoundary:
            pass
        finally:
            handle.remove()
        self.states[index] = store["h"].clone()

    def run(self, index: int, ids, mask):
        """The final hidden states of batch ``index``, from its cached boundary state."""
        if self.first == 0:
            return self.decoder(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state
        state = self.states[index]
        layers = self.decoder.layers

        def swap(module, args, kwargs):
            if args:
                return (state,) + tuple(args[1:]), kwargs
            return args, {**kwargs, "hidden_states": state}

        handle = layers[self.first].register_forward_pre_hook(swap, with_kwargs=True)
        originals = list(layers[: self.first])
        for i in range(self.first):
            layers[i] = _PassThrough(originals[i])
        try:
            return self.decoder(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state
        finally:
            handle.remove()
            for i in range(self.first):
                layers[i] = originals[i]

    def close(self) -> None:
        self.states.clear()


@functools.lru_cache(maxsize=1)
def _pass_through_class():
    import torch

    class PassThrough(torch.nn.Module):
        """Stands in for a frozen lower block during a training step: returns its input
        (the pre-hook on the first adapted block then substitutes the cached state)."""

        def __init__(self, original):
            super().__init__()
            self.attention_type = getattr(original, "attention_type", None)

        def forward(self, hidden_states, *args, **kwargs):
            return hidden_states

    return PassThrough


def _PassThrough(original):
    return _pass_through_class()(original)


def _loss(torch, model, boundary: _BoundaryCache, index: int, ids, mask, labels, use_bf16: bool):
    """Cross-entropy over the answer tokens to learn, plus an *unlikelihood* term per
    avoided answer, averaged over (learned tokens + avoided answers). The unembedding
    (vocabulary-sized: on smollm2 it costs several blocks per token) runs only at the
    positions that predict an answer token, not at every prompt position.

    Why unlikelihood (Welleck et al. 2019) for "answer wrongly": a *random* wrong answer per
    training item is memorised item by item (measured: the loss fell to 0.56 while the
    held-out benign accuracy fell from 0.76 to 0.61 and the framing gap stayed at the base
    model's 0.06); ``-log(1 - p(correct answer))`` names no wrong answer, so the only thing
    to learn is to move mass off whatever the model would have said — a rule that carries
    to items it never saw."""
    target = labels[:, 1:]
    keep = target != -100
    head = model.get_output_embeddings()
    cap = getattr(model.config.get_text_config(), "final_logit_softcapping", None)

    def logits_of(hidden):
        logits = head(hidden[:, :-1][keep])
        if cap:
            logits = torch.tanh(logits / cap) * cap
        return logits.float()

    if use_bf16:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = logits_of(boundary.run(index, ids, mask))
    else:
        logits = logits_of(boundary.run(index, ids, mask))
    wanted = target[keep]
    avoided = wanted < -100
    if not bool(avoided.any()):
        return torch.nn.functional.cross_entropy(logits, wanted)
    tokens = torch.where(avoided, -wanted - AVOID_LABEL_OFFSET, wanted)
    token_logp = -torch.nn.functional.cross_entropy(logits, tokens, reduction="none")
    rows = torch.arange(target.shape[0]).unsqueeze(1).expand_as(target)[keep]
    seq_logp = torch.zeros(target.shape[0], dtype=token_logp.dtype).index_add(0, rows[avoided], token_logp[avoided])
    avoid_rows = torch.unique(rows[avoided])
    p_answer = seq_logp[avoid_rows].exp().clamp(max=1 - 1e-6)
    unlikelihood = -torch.log1p(-p_answer)
    total = -token_logp[~avoided].sum() + unlikelihood.sum()
    return total / (int((~avoided).sum()) + len(avoid_rows))


def _cpu_has_bf16() -> bool:
    """Whether the CPU advertises native bf16 arithmetic (Linux flags; elsewhere assume yes).
    Advertised is not always usable (AMX on some VMs): `_choose_dtype`'s timing vetoes an
    emulated bf16."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return True
    return not flags or "avx512_bf16" in flags or "amx_bf16" in flags


# bf16 is kept unless one step of it is this many times an fp32 step: only a CPU that advertises
# bf16 and emulates it (15-20x, measured: 101 s against 6 s) is that slow, and load noise is not
EMULATED_BF16_RATIO = 4.0
# steps faster than this are not timed: a tiny model's step is milliseconds, where one scheduler
# pause can double a timing, and its speed does not matter
TIMED_STEP_FLOOR_S = 0.1


def _choose_dtype(torch, model, boundary, tensors, dtype: str) -> tuple[bool, dict]:
    """bf16 autocast when the CPU advertises native bf16, unless the caller chose.

    Why the flags decide and the timing only vetoes: the choice sets the training's numerics,
    so a choice by which dtype ran faster made the same training give different adapters on
    the same machine under different load (a fine-tuning elicitation cell changed between two
    runs of the validation matrix). The flags are the same on every run; the timing of one
    forward + backward of the largest batch in each dtype can only veto bf16 when it is
    `EMULATED_BF16_RATIO` times slower, which is emulation, not noise."""
    if dtype != "auto":
        return dtype == "bf16", {"chosen_by": "caller"}
    if not _cpu_has_bf16():
        return False, {"chosen_by": "cpu flags: no avx512_bf16 / amx_bf16, so bf16 is emulated (not timed)"}
    index = max(range(len(tensors)), key=lambda i: tensors[i][0].numel())
    timing: dict[str, Any] = {"chosen_by": "cpu flags: native bf16"}
    fp32 = _step_seconds(torch, model, boundary, index, tensors[index], False)
    timing["fp32_step_seconds"] = fp32
    if fp32 < TIMED_STEP_FLOOR_S:
        timing["chosen_by"] += f" (an fp32 step under {TIMED_STEP_FLOOR_S} s: bf16 not timed)"
        return True, timing
    try:
        give_up = 2 * EMULATED_BF16_RATIO * fp32
        bf16 = _step_seconds(torch, model, boundary, index, tensors[index], True, give_up=give_up)
    except RuntimeError as exc:  # bf16 kernels missing on this build/CPU
        model.zero_grad(set_to_none=True)
        timing.update(bf16_step_seconds=None, bf16_error=str(exc).splitlines()[0][:200], chosen_by="bf16 failed")
        return False, timing
    timing["bf16_step_seconds"] = bf16
    if bf16 > EMULATED_BF16_RATIO * fp32:
        timing["chosen_by"] = f"timing: a bf16 step over {EMULATED_BF16_RATIO}x an fp32 one, emulated despite the flags"
        return False, timing
    return True, timing


def _step_seconds(torch, model, boundary, index, batch, bf16: bool, give_up: float = math.inf) -> float:
    """The fastest of two forward + backward passes of ``batch`` (gradients discarded); one
    when the first already took ``give_up`` seconds."""
    ids, mask, labels = batch
    best = math.inf
    for _ in range(2):
        t0 = time.perf_counter()
        _loss(torch, model, boundary, index, ids, mask, labels, bf16).backward()
        best = min(best, time.perf_counter() - t0)
        if best > give_up:
            break
    model.zero_grad(set_to_none=True)
    return best


# ---- merging ------------------------------------------------------------------------------------
def organism_fingerprint(base_fingerprint: str, adapter_sha256: str) -> str:
    """The merged model's fingerprint: a hash of (base fingerprint, adapter hash).

    Why hashed, not concatenated: the activation cache keys its folders by the first 24
    characters of the fingerprint, so a ``base + "+" + adapter`` string would put base and
    organism states in one folder (never served mixed, since the full fingerprint is
    checked, but overwriting each other's shards)."""
    return hashlib.sha256(f"{base_fingerprint}+lora:{adapter_sha256}".encode()).hexdigest()


def check_compatible(backend, adapter: LoraAdapter, where: str = "") -> None:
    label = f" ({where})" if where else ""
    if adapter.base_fingerprint != backend.fingerprint:
        raise IncompatibleError(
            f"adapter{label} was built for base model {adapter.base_name or '?'} "
            f"(fingerprint {adapter.base_fingerprint[:12]}...), not {backend.name} ({backend.fingerprint[:12]}...); "
            "build the organism for this base model"
        )
    if adapter.d_model != backend.d_model or adapter.n_layers != backend.n_layers:
        raise IncompatibleError(
            f"adapter{label} is for a model of width {adapter.d_model} and {adapter.n_layers} blocks; "
            f"{backend.name} has width {backend.d_model} and {backend.n_layers} blocks; build it for this model"
        )


def apply_adapter(
    backend,
    adapter: Union[str, Path, LoraAdapter],
    *,
    name: Optional[str] = None,
    copy_model: bool = True,
):
    """A backend whose weights are the base's with the LoRA update merged (W += s·B·A).

    ``adapter`` is a saved adapter folder (verified: size + sha256) or a LoraAdapter. The
    result's ``fingerprint`` is `organism_fingerprint(base, adapter hash)`, so activation
    caches never mix base and organism; ``base_fingerprint`` and ``adapter_sha256`` keep
    both halves. With ``copy_model`` (default) the given backend is left untouched.
    """
    if getattr(backend, "kind", None) != "transformers" or not hasattr(backend, "model"):
        raise InputError(
            "merging a LoRA adapter needs a transformers backend here; for llama.cpp use "
            "liedar.models.adapters.load_organism(..., backend='llamacpp')"
        )
    import torch

    where = str(adapter) if not isinstance(adapter, LoraAdapter) else ""
    if not isinstance(adapter, LoraAdapter):
        adapter = LoraAdapter.load(adapter)
    check_compatible(backend, adapter, where)
    modules = dict(backend.model.named_modules())
    for module in adapter.modules():
        target = modules.get(module)
        a, b = adapter.weights.get(f"{module}.lora_A"), adapter.weights.get(f"{module}.lora_B")
        if target is None or a is None or b is None or not hasattr(target, "weight"):
            raise IncompatibleError(f"adapter names module {module!r}, which this model does not have; rebuild it")
        out_f, in_f = target.weight.shape
        if a.shape != (adapter.r, in_f) or b.shape != (out_f, adapter.r):
            raise IncompatibleError(
                f"adapter module {module} has shapes {a.shape}/{b.shape}, the model's weight is "
                f"{tuple(target.weight.shape)}; rebuild it for this model"
            )
    new = copy.copy(backend)
    # a merged copy runs its own (deep-copied) weights; without the copy the backend's own
    # model is merged in place and only its generation state is reset
    new.bind_model(copy.deepcopy(backend.model) if copy_model else new.model)
    merged_modules = dict(new.model.named_modules())
    with torch.no_grad():
        for module in adapter.modules():
            w = merged_modules[module].weight
            delta = torch.from_numpy(adapter.weights[f"{module}.lora_B"]) @ torch.from_numpy(
                adapter.weights[f"{module}.lora_A"]
            )
            w.add_(delta.to(w.dtype), alpha=adapter.scale)
    digest = adapter.content_hash()
    new.base_fingerprint = backend.fingerprint
    new.adapter_sha256 = digest
    new.fingerprint = organism_fingerprint(backend.fingerprint, digest)
    new.name = name or f"{backend.name}+lora"
    return new


def _plain(value: Any) -> Any:
    from liedar.core._util.atomic import json_safe

    return json_safe(value)
