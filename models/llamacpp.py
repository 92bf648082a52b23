"""LlamaCppBackend: a GGUF run by llama.cpp (llama-cpp-python 0.3.36), hidden states included.

llama-cpp-python exposes no intermediate states, so we give our own llama.cpp context an
eval callback (``cb_eval``) that copies the tensors we ask for out of the compute graph
(facts measured in ../shared/notes/llamacpp-capture.md):

* layer 0 = the embeddings as the first block sees them: ``inp_scaled`` when the
  architecture scales them (Gemma), else ``embd`` (the token-embedding lookup);
* layer i (1..n) = ``l_out-{i-1}``; layer n+1 = ``result_norm``;
* llama.cpp trims the *last* block's output to the rows that need logits, so whenever
  layer n or n+1 is captured every token is marked as an output;
* a decode longer than ``n_ubatch`` calls back once per micro-batch: pieces are joined;
* the ctypes callback object is kept on ``self`` for the context's whole life;
* ggml asks the callback about every graph node (hundreds per token), so the asking is
  done by a small C function (models/llamacpp_capture.c, compiled at install, loaded by
  models/native.py) and Python runs only for wanted tensors: with it, decoding with the
  callback installed is as fast as without (docs/monitor.md); ``capture="python"`` is the
  slower fallback used automatically when the install had no C compiler;
* returning False from the data callback makes ggml skip the rest of the graph: reading
  the final generated token's state stops at the probe's layer (`_gen_read`).
* `_forward` and `_token_logprobs` pack several sequences into one ``llama_decode``
  (``seq_id`` k for sequence k, each at positions 0..len-1; up to ``n_seq_max`` sequences
  and ``batch_tokens`` tokens). The context has one KV stream (``kv_unified``), for which
  llama.cpp cuts the batch into micro-batches in batch order (``split_simple``), so the
  captured rows are the sequences one after another. With one stream per sequence
  (``kv_unified=False``) llama.cpp uses ``split_equal`` and the rows come back interleaved:
  measured, layer-0 cosine down to -0.45 against the same sequence alone.
  tests/models/test_llamacpp_packing.py checks both.
* numerics depend on the micro-batch's row count, not on its neighbours: rows of a
  micro-batch of <= 63 tokens are bit-identical to the same tokens decoded alone (measured
  at n_ubatch 16, 31 and 512, across micro-batch boundaries); from 64 rows on the CPU
  kernels round differently (min cosine 0.99974 at layer 15, 0.9978 at layer 30 for one
  256-token text; packs of 240 short texts: 0.9995 and 0.9925). Hence the default
  ``batch_tokens`` of 63: packing is then exact, and within timing noise as fast as larger
  packs (1.11x vs 1.14x over one sequence per decode, 1 thread, loaded machine).

The Python struct below mirrors ``ggml_tensor`` of the llama.cpp vendored in 0.3.36. The
layout is verified on every captured tensor (F32 type, 2-D shape with d_model columns and
``ggml_nbytes == rows * cols * 4``); a mismatch raises IncompatibleError instead of
returning garbage.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Optional

import numpy as np

from liedar.core.errors import IncompatibleError, InputError, ModelUnavailableError
from liedar.models.base import BackendBase, default_threads
from liedar.models.storage import sha256_file

DEFAULT_N_CTX = 2048
CAPTURE_MODES = ("native", "python", "none")
DEFAULT_N_SEQ_MAX = 16  # sequences packed into one llama_decode (distinct seq_ids)
# Token budget of one packed decode. A micro-batch of 64+ rows runs different CPU kernels
# (smollm2: bit-identical states up to 63 rows; from 64 on, min cosine 0.9995-0.9997 at
# layer 15 and 0.9925-0.998 at layer 30), so packs of <= 63 tokens give every sequence
# exactly the states it gets alone.
DEFAULT_BATCH_TOKENS = 63
_KV_UNIFIED = True  # one KV stream for all sequences: micro-batches keep batch order (see __init__)


class _GGMLTensor(ctypes.Structure):
    # ggml.h: GGML_MAX_DIMS 4, GGML_MAX_SRC 10, GGML_MAX_OP_PARAMS 64 bytes, GGML_MAX_NAME 64
    _fields_ = [
        ("type", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * 4),
        ("nb", ctypes.c_size_t * 4),
        ("op", ctypes.c_int),
        ("op_params", ctypes.c_int32 * 16),
        ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * 10),
        ("view_src", ctypes.c_void_p),
        ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("name", ctypes.c_char * 64),
        ("extra", ctypes.c_void_p),
        ("padding", ctypes.c_char * 8),
    ]


class LlamaCppBackend(BackendBase):
    kind = "llamacpp"

    def __init__(
        self,
        gguf: Path,
        *,
        name: Optional[str] = None,
        n_threads: Optional[int] = None,
        n_ctx: Optional[int] = None,
        n_ubatch: int = 512,
        fingerprint: Optional[str] = None,
        capture: str = "native",
        n_seq_max: int = DEFAULT_N_SEQ_MAX,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        reuse_prefix: bool = False,
    ):
        if capture not in CAPTURE_MODES:
            raise InputError(f"capture={capture!r} is not one of {', '.join(CAPTURE_MODES)}")
        if not 1 <= int(n_seq_max) <= 256:
            raise InputError(
                f"n_seq_max={n_seq_max} is out of range; pass 1 (no packing) up to 256 sequences per decode"
            )
        if int(batch_tokens) < 1:
            raise InputError(f"batch_tokens={batch_tokens} must be a positive token count, e.g. 512")
        try:
            import llama_cpp
            from llama_cpp import llama_cpp as L
            from llama_cpp._ggml import libggml
        except ImportError as exc:
            raise ModelUnavailableError(
                "llama-cpp-python is not installed; run scripts/bootstrap.sh (it builds llama-cpp-python==0.3.36)"
            ) from exc
        gguf = Path(gguf)
        threads = int(n_threads or default_threads())
        # The Llama object supplies the model and vocabulary; its own tiny context is unused.
        self.llm = llama_cpp.Llama(model_path=str(gguf), n_ctx=32, n_batch=32, n_threads=threads, verbose=False)
        self._L, self._ggml = L, libggml
        libggml.ggml_backend_tensor_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t]
        libggml.ggml_backend_tensor_get.restype = None
        libggml.ggml_nbytes.argtypes = [ctypes.c_void_p]
        libggml.ggml_nbytes.restype = ctypes.c_size_t
        model = self.llm.model
        self._vocab = L.llama_model_get_vocab(model)
        self.name = name or gguf.stem
        self.n_layers = int(L.llama_model_n_layer(model))
        self.d_model = int(L.llama_model_n_embd(model))
        train_ctx = int(L.llama_model_n_ctx_train(model))
        self.n_ctx = int(n_ctx or min(DEFAULT_N_CTX, train_ctx))
        self.fingerprint = fingerprint or sha256_file(gguf)
        meta = self.llm.metadata
        self.chat_template = meta.get("tokenizer.chat_template") or None
        self._add_bos = bool(L.llama_vocab_get_add_bos(self._vocab))
        self.bos_token = self._piece(self.llm.token_bos()) if self.llm.token_bos() >= 0 else ""
        self.eos_token = self._piece(self.llm.token_eos()) if self.llm.token_eos() >= 0 else ""

        params = L.llama_context_default_params()
        params.n_ctx = params.n_batch = self.n_ctx
        params.n_ubatch = min(n_ubatch, self.n_ctx)
        params.n_threads = params.n_threads_batch = threads
        # Packing: one KV stream shared by all sequences (kv_unified). With one stream,
        # llama.cpp 0.3.36 cuts a batch into micro-batches with split_simple, i.e. in batch
        # order, so the rows the callback copies follow the batch (pinned by
        # tests/models/test_llamacpp_packing.py). Without it, every sequence gets its own
        # stream of n_ctx / n_seq_max cells and split_equal reorders tokens across
        # sequences. Recurrent and hybrid memories always split per sequence: no packing.
        packable = not (L.llama_model_is_recurrent(model) or L.llama_model_is_hybrid(model))
        self.n_seq_max = int(n_seq_max) if packable else 1
        self.batch_tokens = min(int(batch_tokens), self.n_ctx)
        self.batch_size = max(self.batch_size, self.n_seq_max)
        params.n_seq_max = self.n_seq_max
        params.kv_unified = _KV_UNIFIED
        self._install_callback(params, capture)
        from llama_cpp._utils import suppress_stdout_stderr

        with suppress_stdout_stderr(disable=False):  # llama.cpp logs context set-up to stderr
            self._ctx = L.llama_init_from_model(model, params)
        if not self._ctx:
            raise ModelUnavailableError(f"llama.cpp could not create a context of {self.n_ctx} tokens for {gguf}")
        self._n_vocab = int(L.llama_vocab_n_tokens(self._vocab))
        self._n_past = 0
        self.reuse_prefix = bool(reuse_prefix)
        self._embd_name = self._find_embedding_tensor() if self.capture_path != "none" else b""

    def __del__(self):
        ctx = getattr(self, "_ctx", None)
        if ctx:
            self._L.llama_free(ctx)
            self._ctx = None

    # ---- the eval callback ---------------------------------------------------------------
    def _install_callback(self, params, capture: str) -> None:
        """Give the context the C callback or, without a compiler, its Python twin; both
        fill `self._capture`'s buffers (models/native.py). The ctypes objects live on
        ``self`` as long as the context does. ``capture="none"`` installs nothing: bare
        llama.cpp speed (the monitor benchmark's baseline), and no hidden states."""
        from liedar.models.native import Capture, load_capture_library

        self._capture = None
        self.capture_path = capture
        if capture == "none":
            return
        self._capture = Capture(_GGMLTensor, self.d_model, self._ggml.ggml_nbytes, self._ggml.ggml_backend_tensor_get)
        lib = load_capture_library() if capture == "native" else None
        if lib is not None:
            address = ctypes.cast(lib.liedar_eval_callback, ctypes.c_void_p).value
            self._callback = self._L.ggml_backend_sched_eval_callback(address)
            params.cb_eval_user_data = ctypes.cast(ctypes.pointer(self._capture.state), ctypes.c_void_p)
        else:
            self.capture_path = "python"
            self._callback = self._L.ggml_backend_sched_eval_callback(self._capture.python_callback())
            params.cb_eval_user_data = None
        params.cb_eval = self._callback

    def _arm(self, names: set[bytes], n_rows: int = 0) -> None:
        """Say which tensors the next decode copies (none: an empty set)."""
        if self._capture is None:
            if names:
                raise IncompatibleError(
                    f"{self.name} was loaded with capture='none' and cannot read hidden states; "
                    "load it with capture='native'"
                )
            return
        if names or self._capture.names:
            self._capture.arm(names, n_rows)

    def _tensor_name(self, layer: int) -> bytes:
        if layer == 0:
            return self._embd_name
        if layer <= self.n_layers:
            return f"l_out-{layer - 1}".encode()
        return b"result_norm"

    def _find_embedding_tensor(self) -> bytes:
        """Gemma scales embeddings (``inp_scaled``); most models feed ``embd`` directly."""
        ids = self.llm.tokenize(b"Hello", add_bos=self._add_bos)
        self._arm({b"inp_scaled", b"embd"}, len(ids))
        self._run(ids, all_logits=False)
        found = [name for name in (b"inp_scaled", b"embd") if self._capture.filled(name)]
        if not found:
            raise IncompatibleError(f"llama.cpp shows no embeddings tensor for {self.name}; layer 0 is unavailable")
        return found[0]

    # ---- decoding --------------------------------------------------------------------------
    def _run(self, ids: list[int], *, all_logits: bool, start: int = 0, lengths: Optional[list[int]] = None) -> None:
        """Decode `ids` in one ``llama_decode``.

        `lengths` (summing to ``len(ids)``) packs several sequences: sequence k gets
        ``seq_id`` k and positions 0..len-1, and each sees only itself (the KV mask). Packed
        decodes start from empty memory; without `lengths`, `ids` is one sequence (seq 0)
        continuing at `start` (the generation path). Logits: every token, or the last of
        each sequence."""
        L = self._L
        lengths = [len(ids)] if lengths is None else list(lengths)
        if sum(lengths) != len(ids) or min(lengths, default=0) < 1:
            raise ValueError(f"lengths {lengths} do not split {len(ids)} tokens into non-empty sequences")
        if len(lengths) > self.n_seq_max:
            raise ValueError(f"{len(lengths)} sequences in one decode, context allows {self.n_seq_max}")
        if len(lengths) > 1 and start != 0:
            raise ValueError("packed sequences always start at position 0")
        if start == 0:
            L.llama_memory_clear(L.llama_get_memory(self._ctx), True)
        batch = L.llama_batch_init(len(ids), 0, 1)
        try:
            i = 0
            for seq, n in enumerate(lengths):
                for p in range(n):
                    batch.token[i] = ids[i]
                    batch.pos[i] = start + p
                    batch.n_seq_id[i] = 1
                    batch.seq_id[i][0] = seq
                    batch.logits[i] = 1 if (all_logits or p == n - 1) else 0
                    i += 1
            batch.n_tokens = len(ids)
            rc = L.llama_decode(self._ctx, batch)
        finally:
            L.llama_batch_free(batch)
        if rc != 0:
            raise InputError(
                f"llama.cpp could not decode {len(ids)} tokens (code {rc}); shorten the input or raise n_ctx"
            )
        if self._capture is not None and self._capture.python_error:
            raise IncompatibleError(self._capture.python_error)
        self._n_past = start + len(ids)

    # ---- public faces for organisms (runtime LoRA) and benchmarks ------------------------
    @property
    def lib(self):
        """The llama.cpp C API bindings this backend calls (``llama_cpp.llama_cpp``)."""
        return self._L

    @property
    def context(self):
        """The llama.cpp context every decode runs in (its eval callback captures states)."""
        return self._ctx

    def set_lora(self, handle) -> int:
        """Apply a LoRA adapter handle at scale 1 to this backend's context; the handle is
        kept alive as long as the backend. Returns llama.cpp's status (0 = applied)."""
        self._lora = handle
        return int(self._L.llama_set_adapter_lora(self._ctx, handle, 1.0))

    def packs(self, batch: list[list[int]]) -> list[list[int]]:
        """Indices of `batch` grouped into the decodes liedar makes (see `_packs`)."""
        return self._packs(batch)

    def _packs(self, batch: list[list[int]]) -> list[list[int]]:
        """Indices of `batch` grouped into decodes, in order: at most ``n_seq_max`` sequences
        and ``batch_tokens`` tokens each (a longer sequence is decoded alone: inputs are
        checked against n_ctx, never cut)."""
        packs: list[list[int]] = []
        tokens = 0
        for k, seq in enumerate(batch):
            if packs and len(packs[-1]) < self.n_seq_max and tokens + len(seq) <= self.batch_tokens:
                packs[-1].append(k)
                tokens += len(seq)
            else:
                packs.append([k])
                tokens = len(seq)
        return packs

    def _logits(self, n_rows: int) -> np.ndarray:
        ptr = self._L.llama_get_logits(self._ctx)
        return np.ctypeslib.as_array(ptr, shape=(n_rows, self._n_vocab)).copy()

    def _run_capture(
        self, ids: list[int], layers: list[int], start: int = 0, stop: bool = False, lengths: Optional[list[int]] = None
    ) -> np.ndarray:
        """Decode `ids` and return float32 ``[len(ids), len(layers), d_model]``; with
        `stop`, ggml ends the graph once the (single) wanted tensor is copied. `lengths`
        packs several sequences (see `_run`); rows stay in batch order."""
        from liedar.models.native import CaptureError

        names = [self._tensor_name(x) for x in layers]
        self._arm(set(names), len(ids))
        self._capture.state.stop_after_capture = int(stop)
        trimmed = any(x >= self.n_layers for x in layers)
        try:
            self._run(ids, all_logits=trimmed, start=start, lengths=lengths)
        finally:
            self._capture.state.stop_after_capture = 0
        out = np.empty((len(ids), len(names), self.d_model), dtype=np.float32)
        for j, name in enumerate(names):
            try:
                out[:, j] = self._capture.rows(name, len(ids))
            except CaptureError as exc:
                raise IncompatibleError(f"{self.name}: {exc}") from None
        return out

    # ---- primitives --------------------------------------------------------------------
    def _tokenize(self, text, templated):
        add_bos = self._add_bos and not templated
        data = text.encode("utf-8")
        ids = self.llm.tokenize(data, add_bos=add_bos, special=True)
        pieces = [self._piece_bytes(t) for t in ids]
        skip = 1 if add_bos and ids and ids[0] == self.llm.token_bos() else 0
        byte_spans = _align(data, pieces[skip:])
        char_of = _byte_to_char(text)
        offsets = [(0, 0)] * skip + [(char_of[a], char_of[b]) for a, b in byte_spans]
        return list(ids), offsets

    def _forward(self, batch, layers):
        # Several sequences per decode (see `_packs`); the captured rows follow the batch,
        # so each sequence's states are a contiguous slice.
        out: list[Optional[np.ndarray]] = [None] * len(batch)
        for pack in self._packs(batch):
            seqs = [list(batch[k]) for k in pack]
            lengths = [len(x) for x in seqs]
            states = self._run_capture([t for x in seqs for t in x], layers, lengths=lengths)
            for k, lo, n in zip(pack, np.cumsum([0] + lengths[:-1]), lengths):
                out[k] = states[lo : lo + n]
        return out

    def _token_logprobs(self, batch):
        out: list[Optional[np.ndarray]] = [None] * len(batch)
        for pack in self._packs(batch):
            seqs = [list(batch[k]) for k in pack]
            lengths = [len(x) for x in seqs]
            self._arm(set())
            self._run([t for x in seqs for t in x], all_logits=True, lengths=lengths)
            ptr = self._L.llama_get_logits(self._ctx)
            view = np.ctypeslib.as_array(ptr, shape=(sum(lengths), self._n_vocab))
            for k, seq, lo in zip(pack, seqs, np.cumsum([0] + lengths[:-1])):
                logits = view[lo : lo + len(seq)].astype(np.float64)
                logp = logits - logits.max(axis=1, keepdims=True)
                logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
                out[k] = logp[np.arange(len(seq) - 1), np.asarray(seq[1:], dtype=np.intp)]
        return out

    def _prefix_logprobs(self, prefix, suffixes):
        """With ``reuse_prefix``: the prompt decoded once and kept in the context's memory;
        before each option the positions after the prompt are removed and the option is
        decoded from there. Why opt-in: a cloze over four options then reads its prompt once
        instead of four times, but the option's tokens go through llama.cpp's small-batch
        kernels instead of the whole sequence's, so the log-probabilities differ from the
        default path in their last digits (measured in docs/capable.md); records scored on
        the default path stay reproducible bit for bit."""
        if not self.reuse_prefix:
            return super()._prefix_logprobs(prefix, suffixes)
        k = len(prefix)
        first = self._gen_begin(list(prefix), None).astype(np.float64)
        first = first - first.max()
        first -= np.log(np.exp(first).sum())
        memory = self._L.llama_get_memory(self._ctx)
        out = []
        for suffix in suffixes:
            row = [float(first[suffix[0]])]
            if len(suffix) > 1:  # the last token of a suffix is scored, never fed
                self._L.llama_memory_seq_rm(memory, 0, k, -1)
                fed = list(suffix[:-1])
                self._run(fed, all_logits=True, start=k)
                logits = self._logits(len(fed)).astype(np.float64)
                logp = logits - logits.max(axis=1, keepdims=True)
                logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
                row.extend(float(logp[j - 1, suffix[j]]) for j in range(1, len(suffix)))
            out.append(np.array(row, dtype=np.float64))
        return out

    def _gen_begin(self, ids, hook_layer):
        self._arm(set())
        self._run(list(ids), all_logits=False)
        return self._logits(1)[0]

    def _gen_feed(self, token, hook_layer):
        if hook_layer is None:
            self._arm(set())
            self._run([token], all_logits=True, start=self._n_past)
            return self._logits(1)[0], None
        hidden = self._run_capture([token], [hook_layer], start=self._n_past)[0, 0]
        return self._logits(1)[0], hidden

    def _gen_read(self, token, hook_layer):
        # The callback returns False after the wanted tensor: ggml then skips the rest of
        # the graph (later blocks, their KV writes, the logits), so the context is spent.
        return self._run_capture([token], [hook_layer], start=self._n_past, stop=True)[0, 0]

    def _piece_bytes(self, token: int) -> bytes:
        buf = ctypes.create_string_buffer(64)
        n = self._L.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, True)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = self._L.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, True)
        return buf.raw[:n]

    def _piece(self, token):
        return self._piece_bytes(token).decode("utf-8", errors="replace")

    def _decode(self, ids):
        return self.llm.detokenize(ids, special=False).decode("utf-8", errors="replace")

    def _is_end(self, token):
        return bool(self._L.llama_vocab_is_eog(self._vocab, token))

    def sample_continuations(self, ids, rngs, budget, temperature, marks=()):
        """The prompt read once; before each sample the positions after it are removed from
        the context's memory, so sample r continues the same prompt state with ``rngs[r]``."""
        n_prompt = len(ids)
        logits0 = np.asarray(self._gen_begin(list(ids), None))
        outs = []
        for rng in rngs:
            self._L.llama_memory_seq_rm(self._L.llama_get_memory(self._ctx), 0, n_prompt, -1)
            self._n_past = n_prompt
            outs.append(self._sample_from(logits0, rng, budget, temperature, marks))
        return outs


def _align(data: bytes, pieces: list[bytes]) -> list[tuple[int, int]]:
    """Byte span of each token piece in `data` (pieces normally concatenate to it exactly;
    SentencePiece vocabularies may prefix the first piece with a space that is not in the text)."""
    spans, cursor = [], 0
    for p in pieces:
        if data.startswith(p, cursor):
            spans.append((cursor, cursor + len(p)))
            cursor += len(p)
            continue
        stripped = p.lstrip(b" ")
        at = data.find(stripped, cursor) if stripped else -1
        if at >= 0:
            spans.append((at, at + len(stripped)))
            cursor = at + len(stripped)
        else:
            spans.append((cursor, cursor))
    return spans


def _byte_to_char(text: str) -> list[int]:
    """Map every byte offset of text.encode() (0..len inclusive) to a character offset;
    bytes inside a multi-byte character map to the character's start."""
    table = []
    for ci, ch in enumerate(text):
        table.extend([ci] * len(ch.encode("utf-8")))
    table.append(len(text))
    return table
