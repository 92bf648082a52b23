"""TransformersBackend: a Hugging Face model folder run with PyTorch on the CPU.

Block outputs are read with forward hooks on the decoder's blocks (layer i = output of
``layers[i-1]``), the embeddings with a pre-hook on the first block (so any embedding scale
is included), and layer n+1 with a hook on the final norm; this is the numbering in
models.backend, which Hugging Face's ``output_hidden_states`` does not follow.

Batches are right-padded: with causal attention the real tokens never attend to the pads
that follow them, and their position ids stay 0..len-1, so a text's states do not depend on
what it was batched with (pinned by a test).

``.model`` (the nn.Module) and ``.tokenizer`` are public on purpose: the weight-noise
instrument perturbs ``backend.model`` parameters in place and restores them.

``device`` (``auto``, ``cpu``, ``cuda``, ``cuda:N``, ``mps``) and ``dtype`` (``float32``,
``bfloat16``, ``float16``) choose where and in what precision the model runs; ``auto`` picks
a GPU when torch sees one. Hidden states always leave the backend as float32 numpy arrays,
but a bf16 model's states are not an fp32 model's (docs/scale.md measures the gap), so the
activation cache keys on ``dtype_name`` as well. A combination the machine cannot run is
refused in one line before the weights load (`check_device_dtype`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path
from typing import Optional

import numpy as np

from liedar.core._util import offline  # noqa: F401  (sets the HF offline switches before transformers loads)
from liedar.core.errors import InputError, ModelUnavailableError
from liedar.models.base import BackendBase, default_threads, sample_tokens

DTYPES = ("float32", "bfloat16", "float16")
DEVICES = ("auto", "cpu", "cuda", "cuda:N", "mps")
SOURCE_FILE = "liedar_source.json"  # written into dequantized copies: which GGUF they came from
# Weight formats that torch.load unpickles (running code from the file). Never loaded.
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")


def check_safetensors_folder(folder: Path) -> None:
    """Refuse a model folder whose weights exist only in a pickle format.

    Why: ``pytorch_model.bin`` and friends are pickles, and unpickling runs whatever code the
    file names; only safetensors (plain tensors) are loaded, so a folder offering nothing
    else is refused with the conversion to run, before transformers or torch sees it."""
    folder = Path(folder)
    files = [p for p in folder.iterdir() if p.is_file()]
    if any(p.suffix == ".safetensors" for p in files):
        return
    pickles = sorted(p.name for p in files if p.suffix.lower() in PICKLE_SUFFIXES)
    if pickles:
        raise InputError(
            f"{folder} holds weights only in a pickle format ({', '.join(pickles[:3])}), which liedar never loads "
            "(unpickling can run code): convert them once to safetensors, e.g. "
            "AutoModelForCausalLM.from_pretrained(folder).save_pretrained(folder, safe_serialization=True) "
            "in an environment you trust"
        )
    raise ModelUnavailableError(f"{folder} holds no *.safetensors weights; point to a Hugging Face model folder")


def resolve_device(device: str = "cpu") -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``mps`` when available, else ``cpu``;
    any other value is checked against what this machine has (one-line InputError)."""
    import torch

    device = str(device or "cpu")
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        return "mps" if mps is not None and mps.is_available() else "cpu"
    if device == "cpu":
        return device
    if device == "cuda" or device.startswith("cuda:"):
        index = device.partition(":")[2]
        if index and not index.isdigit():
            raise InputError(f"--device {device!r}: use cuda or cuda:N with N a GPU index")
        if not torch.cuda.is_available():
            raise InputError(f"--device {device}: torch sees no CUDA GPU on this machine; use --device cpu or auto")
        if index and int(index) >= torch.cuda.device_count():
            raise InputError(
                f"--device {device}: this machine has {torch.cuda.device_count()} CUDA GPU(s) (0-based index)"
            )
        return device
    if device == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise InputError("--device mps: torch sees no Apple GPU (MPS) here; use --device cpu or auto")
        return device
    raise InputError(f"unknown device {device!r}: use one of {', '.join(DEVICES)}")


def check_device_dtype(device: str = "cpu", dtype: str = "float32") -> tuple[str, str]:
    """(resolved device, dtype) or a one-line InputError when the device cannot run the dtype.

    float16 on the CPU is refused: PyTorch's CPU kernels for half precision are partial and
    slow, and half overflows where bfloat16 does not; bfloat16 is the CPU's reduced type."""
    import torch

    if dtype not in DTYPES:
        raise InputError(f"unknown dtype {dtype!r}: use one of {', '.join(DTYPES)}")
    resolved = resolve_device(device)
    if dtype == "float16" and resolved == "cpu":
        raise InputError("--dtype float16 cannot run on the CPU here: use --dtype bfloat16 or float32 (or a GPU)")
    if dtype == "bfloat16" and resolved.startswith("cuda"):
        with torch.cuda.device(resolved):
            if not torch.cuda.is_bf16_supported():
                raise InputError(f"--dtype bfloat16: GPU {resolved} has no bfloat16 support; use --dtype float16")
    return resolved, dtype


class TransformersBackend(BackendBase):
    kind = "transformers"

    def __init__(
        self,
        folder: Path,
        *,
        name: Optional[str] = None,
        n_threads: Optional[int] = None,
        n_ctx: Optional[int] = None,
        batch_size: int = 8,
        fingerprint: Optional[str] = None,
        device: str = "cpu",
        dtype: str = "float32",
    ):
        folder = Path(folder)
        check_safetensors_folder(folder)  # before torch is even imported
        self.device, self.dtype_name = check_device_dtype(device, dtype)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # liedar shows its own bars; loading is seconds
        torch.set_num_threads(int(n_threads or default_threads()))
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
            self.model = AutoModelForCausalLM.from_pretrained(
                folder, dtype=getattr(torch, self.dtype_name), trust_remote_code=False, use_safetensors=True
            )
        except (OSError, ValueError) as exc:
            raise ModelUnavailableError(
                f"cannot load a Hugging Face model from {folder}: {exc}".splitlines()[0]
            ) from exc
        self.model.eval()
        if self.device != "cpu":
            self.model.to(self.device)
        self._torch = torch
        self.bind_model(self.model)
        cfg = self.model.config.get_text_config()
        self.name = name or folder.name
        self.n_layers = len(self._blocks)
        self.d_model = int(cfg.hidden_size)
        # Same default cap as llama.cpp (2048) so both backends refuse the same over-long inputs.
        self.n_ctx = int(n_ctx or min(getattr(cfg, "max_position_embeddings", 2048), 2048))
        self.batch_size = batch_size
        self.fingerprint = fingerprint or folder_fingerprint(folder)
        self.chat_template = self.tokenizer.chat_template if isinstance(self.tokenizer.chat_template, str) else None
        self.bos_token = self.tokenizer.bos_token or ""
        self.eos_token = self.tokenizer.eos_token or ""
        ends = self.model.generation_config.eos_token_id if self.model.generation_config else None
        ends = ends if isinstance(ends, list) else [ends]
        self._end_ids = {int(t) for t in ends + [self.tokenizer.eos_token_id] if t is not None}
        self._pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self._past = None
        # transformers 5.x renamed past_key_values to cache; accept both generations.
        self._cache_kw = "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"
        # A prompt's read needs the last position's logits only; the output head over every
        # position is about a fifth of a 135M model's prefill on a 200-token prompt.
        keeps = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        self._last_logits: dict = {"logits_to_keep": 1} if keeps else {}

    # ---- public faces for organisms (LoRA training, merged copies, batched scoring) --------
    def bind_model(self, model) -> None:
        """Make ``model`` (e.g. a deep copy whose weights get a LoRA merged in) the one this
        backend runs: its decoder blocks and final norm are what the layer hooks read, and
        any generation state of the previous model is dropped."""
        self.model = model
        decoder = model.get_decoder()
        self._blocks = decoder.layers
        self._norm = decoder.norm
        self._decoder = decoder
        self._past = None

    @property
    def pad_id(self) -> int:
        """The id padded batches are filled with (the tokenizer's, else 0); masked out."""
        return self._pad_id

    @property
    def cache_kw(self) -> str:
        """The keyword the model's forward takes its key-value cache under (transformers 4 vs 5)."""
        return self._cache_kw

    def padded(self, batch: list[list[int]]):
        """``(ids, attention_mask)`` tensors of a batch of id lists, right-padded with `pad_id`."""
        return self._padded(batch)

    # ---- primitives ---------------------------------------------------------------------
    def _tokenize(self, text, templated):
        enc = self.tokenizer(text, add_special_tokens=not templated, return_offsets_mapping=True)
        return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]

    def _capture(self, layers: list[int], store: dict, *, stop: bool = False):
        """Register hooks writing each requested layer's [batch, len, d] tensor into store.

        With ``stop`` (one layer only) the hook raises `_StopForward` once it has the
        tensor, so the layers above it are never computed."""
        handles = []

        def keep(layer):
            def hook(module, args, output):
                store[layer] = output[0] if isinstance(output, tuple) else output
                if stop:
                    raise _StopForward

            return hook

        for layer in set(layers):
            if layer == 0:

                def pre(module, args, kwargs):
                    store[0] = args[0] if args else kwargs["hidden_states"]
                    if stop:
                        raise _StopForward

                handles.append(self._blocks[0].register_forward_pre_hook(pre, with_kwargs=True))
            elif layer <= self.n_layers:
                handles.append(self._blocks[layer - 1].register_forward_hook(keep(layer)))
            else:
                handles.append(self._norm.register_forward_hook(keep(layer)))
        return handles

    def _padded(self, batch):
        torch = self._torch
        width = max(len(s) for s in batch)
        ids = torch.full((len(batch), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for r, seq in enumerate(batch):
            ids[r, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[r, : len(seq)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _forward(self, batch, layers):
        store: dict = {}
        handles = self._capture(layers, store)
        ids, mask = self._padded(batch)
        try:
            with self._torch.inference_mode():
                self._decoder(input_ids=ids, attention_mask=mask, use_cache=False)
        finally:
            for h in handles:
                h.remove()
        stacked = self._torch.stack([store[layer] for layer in layers], dim=2).float().cpu().numpy()
        return [stacked[r, : len(seq)] for r, seq in enumerate(batch)]

    def _token_logprobs(self, batch):
        ids, mask = self._padded(batch)
        with self._torch.inference_mode():
            logits = self.model(input_ids=ids, attention_mask=mask, use_cache=False).logits.float()
            logp = self._torch.log_softmax(logits[:, :-1], dim=-1)
            picked = logp.gather(-1, ids[:, 1:, None])[..., 0].cpu().numpy()
        return [picked[r, : len(seq) - 1] for r, seq in enumerate(batch)]

    def _prefix_logprobs(self, prefix, suffixes):
        """The prefix run once; its KV cache repeated for the suffixes, decoded as one batch."""
        torch = self._torch
        with torch.inference_mode():
            out = self.model(
                input_ids=torch.tensor([prefix], dtype=torch.long, device=self.device),
                use_cache=True,
                **self._last_logits,
            )
            first = torch.log_softmax(out.logits[0, -1].float(), dim=-1).cpu().numpy()
            rows = [[float(first[s[0]])] for s in suffixes]
            width = max(len(s) for s in suffixes) - 1  # the last token of each suffix is scored, never fed
            if width > 0:
                k, n = len(prefix), len(suffixes)
                past = _repeat_cache(getattr(out, self._cache_kw), n)
                ids = torch.full((n, width), self._pad_id, dtype=torch.long)
                mask = torch.zeros((n, k + width), dtype=torch.long)
                mask[:, :k] = 1
                for r, s in enumerate(suffixes):
                    ids[r, : len(s) - 1] = torch.tensor(s[:-1], dtype=torch.long)
                    mask[r, k : k + len(s) - 1] = 1
                logits = self.model(
                    input_ids=ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    use_cache=True,
                    cache_position=torch.arange(k, k + width, device=self.device),
                    **{self._cache_kw: past},
                ).logits.float()
                logp = torch.log_softmax(logits, dim=-1).cpu().numpy()
                for r, s in enumerate(suffixes):
                    rows[r].extend(float(logp[r, j - 1, s[j]]) for j in range(1, len(s)))
        return [np.array(r, dtype=np.float64) for r in rows]

    def _step(self, ids: list[int], hook_layer, stop: bool = False):
        """Feed `ids` on top of the KV cache: (next-token logits, state of the last id at
        hook_layer). With `stop` the forward pass ends at hook_layer (no logits): the cache
        then holds these ids in the lower layers only, so it is dropped."""
        store: dict = {}
        handles = self._capture([hook_layer], store, stop=stop) if hook_layer is not None else []
        out = None
        try:
            with self._torch.inference_mode():
                out = self.model(
                    input_ids=self._torch.tensor([ids], dtype=self._torch.long, device=self.device),
                    use_cache=True,
                    **{self._cache_kw: self._past},
                    **self._last_logits,
                )
        except _StopForward:
            pass
        finally:
            for h in handles:
                h.remove()
        self._past = getattr(out, self._cache_kw) if out is not None else None
        hidden = store[hook_layer][0, -1].float().cpu().numpy().copy() if hook_layer is not None else None
        logits = out.logits[0, -1].float().cpu().numpy() if out is not None else None
        return logits, hidden

    def _gen_begin(self, ids, hook_layer):
        self._past = None
        return self._step(ids, None)[0]

    def _gen_feed(self, token, hook_layer):
        return self._step([token], hook_layer)

    def _gen_read(self, token, hook_layer):
        return self._step([token], hook_layer, stop=True)[1]

    def _piece(self, token):
        return self.tokenizer.decode([token])

    def _decode(self, ids):
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _is_end(self, token):
        return token in self._end_ids

    def sample_continuations(self, ids, rngs, budget, temperature, marks=()):
        """The K continuations of one prompt: `sample_continuations_many` with one prompt."""
        return self.sample_continuations_many([ids], [rngs], budget, temperature, marks=[marks])[0]

    def sample_continuations_many(self, prompts, rngs, budget, temperature, first_logits=None, marks=None):
        """Every prompt's K continuations decoded as one batch: each prompt read once and kept
        once; row (i, k) draws with ``rngs[i][k]`` exactly as `generate` would.

        Why one batch over many prompts: a decoding step costs about the same for 20 rows as
        for 300 (the weights are read once a step either way), so the 15 menus of a
        configuration sampled together decode several times more tokens a second than one
        menu's 20 rows. The prompts are left-padded (masked, with their own positions), and
        each step's attention reads a prompt's keys once for all its rows
        (`liedar.models.shared_prefix`) rather than once per row from a copied cache.

        A row leaves the batch at the step it ends (`SharedPrefixState.shed`): chain-of-thought
        replies to one menu end at very different lengths (smollm2-135m: mean 89-104 of a
        160-token budget, a quarter to a third cut by it), and a batch that kept them would
        decode every row to the longest."""
        from liedar.models.shared_prefix import SharedPrefixState, logits_into_buffer, shared_prefix_decoding

        torch = self._torch
        outs: list[list[list[int]]] = [[[] for _ in r] for r in rngs]
        pairs = [(i, k) for i, r in enumerate(rngs) for k in range(len(r))]  # batch row -> (prompt, sample)
        if not pairs or budget < 1:
            if first_logits is not None:
                first_logits.extend(self.decode_start(p) for p in prompts)
            return outs
        common = _shared_lead(prompts)
        width = max(len(p) for p in prompts) - common
        ids = torch.full((len(prompts), width), self._pad_id, dtype=torch.long)
        real = torch.zeros((len(prompts), width), dtype=torch.bool)
        for i, p in enumerate(prompts):
            ids[i, width - len(p) + common :] = torch.tensor(list(p[common:]), dtype=torch.long)
            real[i, width - len(p) + common :] = True
        index = torch.tensor([i for i, _ in pairs], dtype=torch.long)
        state = SharedPrefixState(real, index, budget, common=common)
        lengths = torch.tensor([len(prompts[i]) for i, _ in pairs], dtype=torch.long)
        step = np.full(len(pairs), self._pad_id, dtype=np.int64)  # what each row is fed next

        def forward(tokens, positions):
            with torch.inference_mode():
                out = self.model(
                    input_ids=tokens.to(self.device),
                    position_ids=positions.to(self.device),
                    use_cache=False,
                    shared_prefix=state,
                    **self._last_logits,
                )
            state.advance()
            return out.logits[:, -1]

        rows = max(len(pairs), len(prompts))
        with shared_prefix_decoding(self.model), logits_into_buffer(self.model, rows) as buffer:
            if common:
                forward(torch.tensor([list(prompts[0][:common])], dtype=torch.long), torch.arange(common)[None])
            logits = forward(ids, (common + real.long().cumsum(-1) - 1).clamp(min=0))
            if first_logits is not None:  # the prefill's own logits: the law of every row's first draw
                first_logits.extend(logits.double().cpu().numpy())
            # every row's first logits are its prompt's: spread into the buffer the passes write
            # (a fresh array of all rows faults in its pages), from a copy of the prompts' rows
            spread = buffer[: len(pairs)] if buffer is not None else None
            logits = torch.index_select(logits.clone(), 0, index.to(self.device), out=spread)
            for n in range(budget):  # each step's logits are drawn from before the next pass overwrites them
                drawn = sample_tokens(logits.cpu(), temperature, [rngs[i][k] for i, k in pairs])
                ended = []
                for b, token in enumerate(drawn):
                    if self._is_end(token):
                        ended.append(b)
                        continue
                    out = outs[pairs[b][0]][pairs[b][1]]
                    out.append(token)
                    step[b] = token
                    if marks is not None and self.begins_turn(out, marks[pairs[b][0]]):
                        ended.append(b)
                if len(ended) == len(pairs) or n + 1 >= budget:
                    break
                if ended:  # ended rows leave the batch at once
                    order = state.shed(ended)
                    lengths, step = lengths[order], step[order.numpy()]
                    pairs = [pairs[b] for b in order.tolist()]
                logits = forward(torch.from_numpy(step)[:, None], (lengths + n)[:, None])
        return outs


def _shared_lead(prompts) -> int:
    """How many leading tokens every prompt shares, leaving each at least its last token
    (whose logits the first draws need); 0 for a single prompt, whose rows share it all anyway."""
    if len(prompts) < 2:
        return 0
    first, most = prompts[0], min(len(p) for p in prompts) - 1
    n = 0
    while n < most and all(p[n] == first[n] for p in prompts):
        n += 1
    return n


def _repeat_cache(past, n: int):
    """A one-row KV cache repeated to ``n`` rows, for a batch that continues one prompt."""
    if hasattr(past, "batch_repeat_interleave"):
        past.batch_repeat_interleave(n)
        return past
    return tuple(tuple(t.repeat_interleave(n, dim=0) for t in layer) for layer in past)  # legacy tuple cache


class _StopForward(Exception):
    """Raised by a capture hook to end a forward pass once the wanted layer is read."""


def folder_fingerprint(folder: Path) -> str:
    """The GGUF's sha256 for a liedar dequantized copy; else a hash over the weight files."""
    folder = Path(folder)
    source = folder / SOURCE_FILE
    if source.is_file():
        return json.loads(source.read_text())["gguf_sha256"]
    from liedar.models.storage import sha256_file

    check_safetensors_folder(folder)
    weights = sorted(p for p in folder.iterdir() if p.suffix == ".safetensors" and p.is_file())
    digest = hashlib.sha256()
    for p in weights:
        digest.update(f"{p.name}:{sha256_file(p)}\n".encode())
    return digest.hexdigest()
