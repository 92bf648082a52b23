"""Behaviour shared by every backend: rendering, token selection, pooling, scoring, sampling.

Why one base class: "last token", "mean over detect tokens", a character span, the option
boundary in `score_options` and the sampling rule must mean exactly the same thing on
transformers and on llama.cpp, or their numbers are not comparable. A backend only supplies
the primitives (tokenize with offsets, run a batch and return per-token states of the
requested layers, per-token log-probs, one decoding step); everything users see is here.

Inputs longer than the backend's context (``n_ctx``) are **refused** with an InputError,
never silently truncated: a truncated statement is a different statement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

import numpy as np

from liedar.core.errors import InputError
from liedar.models.backend import Encoded, Generation, Position, Span, TokenStates, TokenStep
from liedar.models.chat import TextInput, render, reply_end, reply_text

if TYPE_CHECKING:
    import torch

LogitRows = Union[np.ndarray, "torch.Tensor"]  # a batch's next-token logits, as the engine gave them


class BackendBase:
    name: str
    kind: str
    fingerprint: str
    n_layers: int
    d_model: int
    n_ctx: int
    chat_template: Optional[str] = None
    bos_token: str = ""
    eos_token: str = ""
    batch_size: int = 8

    # ---- primitives a backend implements -------------------------------------------------
    def _tokenize(self, text: str, templated: bool) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and character offsets; plain text gets the model's default BOS,
        templated text (which already carries its special tokens) gets none added."""
        raise NotImplementedError

    def _forward(self, batch: list[list[int]], layers: list[int]) -> list[np.ndarray]:
        """Per-token states of `layers` for each sequence: float32 [len, len(layers), d]."""
        raise NotImplementedError

    def _token_logprobs(self, batch: list[list[int]]) -> list[np.ndarray]:
        """For each sequence, log p(ids[t] | ids[:t]) for t = 1..len-1."""
        raise NotImplementedError

    def _prefix_logprobs(self, prefix: list[int], suffixes: list[list[int]]) -> list[np.ndarray]:
        """For each suffix, ``log p(suffix[t] | prefix + suffix[:t])`` for every t.

        Why a primitive of its own: scoring options that share a prompt needs the prompt's
        states once, not once per option; a backend that can keep them (transformers' KV
        cache) overrides this. The default runs each prefix + suffix as a full sequence."""
        k = len(prefix)
        return [lp[k - 1 :] for lp in self._token_logprobs([prefix + list(s) for s in suffixes])]

    def _gen_begin(self, ids: list[int], hook_layer: Optional[int]) -> np.ndarray:
        """Process the prompt; return next-token logits."""
        raise NotImplementedError

    def _gen_feed(self, token: int, hook_layer: Optional[int]) -> tuple[np.ndarray, Optional[np.ndarray]]:
        """Append one token; return next-token logits and its state at hook_layer."""
        raise NotImplementedError

    def _gen_read(self, token: int, hook_layer: int) -> Optional[np.ndarray]:
        """Feed the generation's *final* token only to read its state at hook_layer.

        Why separate from `_gen_feed`: nothing follows the last token, so its logits and
        every layer above ``hook_layer`` are wasted work that plain generation never does.
        A backend may stop the forward pass at the hook layer; the generation state is then
        unusable for further feeding (the next generate starts afresh with `_gen_begin`).
        """
        return self._gen_feed(token, hook_layer)[1]

    def _piece(self, token: int) -> str:
        raise NotImplementedError

    def _decode(self, ids: list[int]) -> str:
        raise NotImplementedError

    def _is_end(self, token: int) -> bool:
        raise NotImplementedError

    # ---- the primitives' public faces (what callers outside models/ may use) ----------
    def tokenize(self, text: str, templated: bool = False) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and character offsets of already rendered text (``templated`` text
        carries its own special tokens; plain text gets the model's default BOS)."""
        return self._tokenize(text, templated)

    def token_text(self, token: int) -> str:
        return self._piece(token)

    def token_logprobs_of_ids(self, batch: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """For each id sequence, ``log p(ids[t] | ids[:t])`` for t = 1..len-1."""
        return self._token_logprobs([[int(t) for t in seq] for seq in batch])

    def decode_start(self, ids: Sequence[int]) -> np.ndarray:
        """Start a fresh decoding state on ``ids`` (a prompt); the next token's logits.

        Why public: the exact choice law walks an option's tokens one step at a time, which
        ``generate`` (it samples its own tokens) cannot do."""
        return np.asarray(self._gen_begin([int(t) for t in ids], None), dtype=np.float64)

    def decode_step(self, token: int) -> np.ndarray:
        """Append ``token`` to the decoding state `decode_start` began; the next logits."""
        return np.asarray(self._gen_feed(int(token), None)[0], dtype=np.float64)

    def detokenize(self, ids: Sequence[int]) -> str:
        """The text of generated ``ids``, special tokens left out (as `generate` returns it)."""
        return self._decode([int(t) for t in ids])

    def is_end_token(self, token: int) -> bool:
        """Whether ``token`` ends a generation (end of turn or of text)."""
        return self._is_end(int(token))

    def begins_turn(self, out: Sequence[int], marks: Sequence[str]) -> bool:
        """Whether the reply ``out`` has just begun another turn: its last token completed one
        of ``marks`` (`liedar.models.chat.reply_end`; ``Rendered.turn_marks``). Generation
        stops there; the reply's text ends before the mark, its tokens keep the mark's.

        Why the last piece is looked at first: every mark ends with a colon, so only a token
        holding one can complete it, and the reply is decoded only then."""
        if not marks or not out or ":" not in self._piece(int(out[-1])):
            return False
        return reply_end(self._decode([int(t) for t in out]), marks) is not None

    def sample_continuations(
        self,
        ids: Sequence[int],
        rngs: Sequence[np.random.Generator],
        budget: int,
        temperature: float,
        marks: Sequence[str] = (),
    ) -> list[list[int]]:
        """One sampled continuation of ``ids`` per generator, each drawn as `generate` draws
        (`sample_token` with that generator, stopping at an end token, at the token that
        completes one of the turn ``marks`` (`begins_turn`), or after ``budget`` tokens).

        Why a method: reading the prompt once for all K samples needs the engine's own cache
        (a batch over transformers' KV cache, llama.cpp's kept positions), so each backend
        overrides this; the default re-reads the prompt per sample, the plain loop's cost.
        """
        return [self._sample_from(self.decode_start(ids), rng, budget, temperature, marks) for rng in rngs]

    def sample_continuations_many(
        self,
        prompts: Sequence[Sequence[int]],
        rngs: Sequence[Sequence[np.random.Generator]],
        budget: int,
        temperature: float,
        first_logits: Optional[list[np.ndarray]] = None,
        marks: Optional[Sequence[Sequence[str]]] = None,
    ) -> list[list[list[int]]]:
        """`sample_continuations` for several prompts: ``out[i][k]`` continues ``prompts[i]``,
        drawn with ``rngs[i][k]`` and stopped at ``marks[i]`` (none when ``marks`` is None).

        Why a method: an engine that can batch rows of different prompts (transformers:
        left-padded rows, each prompt's keys kept once for its K rows) decodes the K samples
        of many menus in one step, and a step's cost grows much slower than its rows; the
        default samples each prompt on its own.

        ``first_logits``, when a list, receives each prompt's next-token logits (float64, in
        prompt order): the law every row's first draw is made from, which the exact choice
        law reads (`liedar.models.sampling.sample_with_choice_laws`). Transformers gives the
        batch's own prefill logits; the default reads each prompt once more for them.
        """
        if first_logits is not None:
            first_logits.extend(self.decode_start(ids) for ids in prompts)
        marks = marks if marks is not None else [()] * len(prompts)
        return [self.sample_continuations(ids, r, budget, temperature, m) for ids, r, m in zip(prompts, rngs, marks)]

    def _sample_from(
        self, logits: np.ndarray, rng: np.random.Generator, budget: int, temperature: float, marks: Sequence[str] = ()
    ) -> list[int]:
        """One continuation from a decoding state whose next-token logits are ``logits``."""
        out: list[int] = []
        for index in range(budget):
            token = sample_token(logits, temperature, rng)
            if self._is_end(token):
                break
            out.append(token)
            if self.begins_turn(out, marks):
                break
            if index + 1 < budget:
                logits = self.decode_step(token)
        return out

    # ---- shared semantics -------------------------------------------------------------
    def check_layers(self, layers: Sequence[int]) -> list[int]:
        layers = [int(x) for x in layers]
        if not layers:
            raise InputError("no layers requested; pass e.g. layers=[6, 12]")
        top = self.n_layers + 1
        bad = [x for x in layers if not 0 <= x <= top]
        if bad:
            raise InputError(
                f"layer {bad[0]} is out of range for {self.name}: valid layers are 0..{top} "
                f"(0 = embeddings, 1..{self.n_layers} = blocks, {top} = final norm)"
            )
        return layers

    def encode(self, inp: TextInput, *, add_generation_prompt: bool = False) -> Encoded:
        rendered = render(
            inp,
            self.chat_template,
            bos_token=self.bos_token,
            eos_token=self.eos_token,
            add_generation_prompt=add_generation_prompt,
        )
        ids, offsets = self._tokenize(rendered.text, rendered.templated)
        if len(ids) > self.n_ctx:
            raise InputError(
                f"input of {len(ids)} tokens is longer than {self.name}'s context of {self.n_ctx} tokens "
                "and is refused (not truncated); shorten or split it, or load with a larger n_ctx"
            )
        detect = np.zeros(len(ids), dtype=bool)
        for start, end in rendered.detect_spans:
            for t, (a, b) in enumerate(offsets):
                if b > a and a < end and b > start:
                    detect[t] = True
        return Encoded(rendered, ids, offsets, detect)

    def _rows(self, enc: Encoded, position: Position) -> np.ndarray:
        if isinstance(position, Span):
            if enc.rendered.templated or len(enc.rendered.spans) != 1:
                raise InputError("a Span position needs plain-string inputs; use 'last' or 'mean' for dialogues")
            inside = [t for t, (a, b) in enumerate(enc.offsets) if b > a and a < position.end and b > position.start]
            if not inside:
                raise InputError(
                    f"span [{position.start}, {position.end}) covers no token of {enc.rendered.text[:40]!r}; "
                    "give character offsets inside the text"
                )
            return np.array(inside)
        rows = np.flatnonzero(enc.detect)
        if rows.size == 0:
            raise InputError(
                f"input {enc.rendered.text[:40]!r} has no tokens to read: mark at least one non-empty "
                "message detect=True (or pass a non-empty string)"
            )
        if position == "last":
            return rows[-1:]
        if position == "mean":
            return rows
        raise InputError(f"unknown position {position!r}: use 'last', 'mean' or models.backend.Span(start, end)")

    def hidden_states(
        self,
        inputs: Sequence[TextInput],
        layers: Sequence[int],
        position: Position = "last",
        *,
        progress: bool = False,
    ) -> np.ndarray:
        """float32 ``[n_inputs, len(layers), d_model]`` (see models.backend for conventions)."""
        layers = self.check_layers(layers)
        if isinstance(inputs, (str, bytes)) or len(inputs) == 0:
            raise InputError("inputs must be a non-empty list of strings or Dialogues")
        encoded = [self.encode(x) for x in inputs]
        rows = [self._rows(e, position) for e in encoded]
        out = np.empty((len(encoded), len(layers), self.d_model), dtype=np.float32)
        # Sorting by length keeps padding (and wasted compute) small on batched backends.
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))
        bar = None
        if progress:
            from liedar.core._util.progress import progress as step_progress

            bar = step_progress(total=len(encoded), desc=f"{self.name} hidden states", unit="input")
        for lo in range(0, len(order), self.batch_size):
            chunk = order[lo : lo + self.batch_size]
            states = self._forward([encoded[i].ids for i in chunk], layers)
            for i, s in zip(chunk, states):
                out[i] = s[rows[i]].mean(axis=0)
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        return out

    def token_states(self, text: TextInput, layers: Sequence[int]) -> TokenStates:
        layers = self.check_layers(layers)
        enc = self.encode(text)
        if not enc.ids:
            raise InputError("cannot read token states of an empty input")
        return self.token_states_of_ids(enc.ids, layers, enc)

    def token_states_of_ids(
        self, ids: Sequence[int], layers: Sequence[int], enc: Optional[Encoded] = None
    ) -> TokenStates:
        """Per-token states of an exact token sequence (e.g. a generation's prompt + output
        ids), so a streamed transcript can be audited without re-tokenizing it."""
        layers = self.check_layers(layers)
        ids = [int(t) for t in ids]
        if not ids:
            raise InputError("cannot read token states of an empty token list")
        if len(ids) > self.n_ctx:
            raise InputError(f"{len(ids)} tokens exceed {self.name}'s context of {self.n_ctx}; refused, not truncated")
        hidden = self._forward([ids], layers)[0]
        pieces = [self._piece(t) for t in ids]
        if enc is None:
            text, offsets, cursor = "".join(pieces), [], 0
            for p in pieces:
                offsets.append((cursor, cursor + len(p)))
                cursor += len(p)
            detect = np.ones(len(ids), dtype=bool)
        else:
            text, offsets, detect = enc.rendered.text, list(enc.offsets), enc.detect.copy()
        return TokenStates(hidden.astype(np.float32), ids, pieces, offsets, detect, text)

    def score_options(self, prompt: TextInput, options: Sequence[str]) -> np.ndarray:
        """Summed log-probability of each option's tokens as a continuation of the prompt.

        Prompt and option are tokenized *together*; the option's tokens are those that
        contain any of its characters (a token straddling the boundary, like " Paris" after
        a prompt ending in a space, counts as the option's), conditioned on all before it.
        Dialogue prompts are rendered with the generation prompt (the option is the
        assistant's reply) unless they end with an assistant prefill.
        """
        if isinstance(options, str) or len(options) == 0:
            raise InputError("options must be a non-empty list of strings")
        head = render(
            prompt, self.chat_template, bos_token=self.bos_token, eos_token=self.eos_token, add_generation_prompt=True
        )
        seqs, starts = [], []
        for option in options:
            if not option:
                raise InputError("an option is the empty string; every option needs at least one character")
            text = head.text + option
            ids, offsets = self._tokenize(text, head.templated)
            if len(ids) > self.n_ctx:
                raise InputError(f"prompt + option is {len(ids)} tokens, over {self.name}'s context of {self.n_ctx}")
            k = next((t for t, (a, b) in enumerate(offsets) if b > len(head.text)), None)
            if k is None:
                raise InputError(f"option {option!r} produced no token of its own; give a non-blank option")
            if k == 0:
                raise InputError("the prompt is empty (and the model adds no BOS): give a prompt to condition on")
            seqs.append(ids)
            starts.append(k)
        k = starts[0]
        if all(start == k for start in starts) and len({tuple(s[:k]) for s in seqs}) == 1:
            if all(len(s) == k + 1 for s in seqs):
                # Every option is a single token after one shared prefix (answer letters, Yes/No):
                # one forward pass of the prefix scores them all, instead of one pass per option.
                logits = np.asarray(self._gen_begin(seqs[0][:k], None), dtype=np.float64)
                logp = logits - logits.max()
                logp -= np.log(np.exp(logp).sum())
                return np.array([logp[s[-1]] for s in seqs], dtype=np.float64)
            # Options of several tokens after one shared prefix (cloze answers): the prefix once.
            shared = self._prefix_logprobs(seqs[0][:k], [s[k:] for s in seqs])
            return np.array([float(lp.sum()) for lp in shared], dtype=np.float64)
        logps = self._token_logprobs(seqs)
        return np.array([float(lp[k - 1 :].sum()) for lp, k in zip(logps, starts)], dtype=np.float64)

    def generate(
        self,
        prompt: TextInput,
        max_tokens: int = 64,
        temperature: float = 0.0,
        seed: int = 0,
        on_token: Optional[Callable[[TokenStep], None]] = None,
        hook_layer: Optional[int] = None,
        stop_at_end: bool = True,
    ) -> Generation:
        """Greedy when temperature == 0, else sampling from softmax(logits / temperature) with
        a Generator seeded by `seed`. Stops at an end-of-generation token (not emitted), at
        the token with which a model without a chat template begins another turn
        (`begins_turn`: that token is emitted, the text ends before the turn's mark) or at
        the context limit. With `hook_layer`, every TokenStep carries that token's own
        hidden state (the sampled token is fed, then read), so the stream equals
        `token_states_of_ids` on the finished transcript. With ``stop_at_end=False`` an end
        token or turn is emitted like any other and exactly ``max_tokens`` steps run (context
        permitting), so a speed measured over it is the same work on every model."""
        if hook_layer is not None:
            hook_layer = self.check_layers([hook_layer])[0]
        if temperature < 0:
            raise InputError(f"temperature must be >= 0, got {temperature}")
        enc = self.encode(prompt, add_generation_prompt=True)
        if not enc.ids:
            raise InputError("the prompt is empty: give a prompt to generate from")
        rng = np.random.default_rng(seed)
        budget = min(int(max_tokens), self.n_ctx - len(enc.ids))
        marks = enc.rendered.turn_marks if stop_at_end else ()
        logits = self._gen_begin(enc.ids, hook_layer)
        out: list[int] = []
        for index in range(budget):
            token = sample_token(logits, temperature, rng)
            if stop_at_end and self._is_end(token):
                break
            out.append(token)
            last = index + 1 == budget or self.begins_turn(out, marks)
            hidden = None
            if not last:
                logits, hidden = self._gen_feed(token, hook_layer)
            elif hook_layer is not None:  # the last token is fed only to read its state
                hidden = self._gen_read(token, hook_layer)
            if on_token is not None:
                on_token(TokenStep(index, token, self._piece(token), hidden))
            if last:
                break
        return Generation(enc.rendered.text, reply_text(self._decode(out), marks), out, len(enc.ids))


def default_threads() -> int:
    """Threads a local model uses when none is given: ``OMP_NUM_THREADS`` when it is set (the
    convention torch and llama.cpp users already follow, so a job scheduler or a test runner
    with one worker per core can say it once), else 2, the cores of the laptops liedar is made for."""
    import os

    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 2


def sample_token(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """One next token drawn from ``logits`` at ``temperature``: the backends' one sampling rule.

    Why shared: `BackendBase.generate` and every backend's `sample_continuations` (which
    `liedar.models.sampling` calls) draw through this rule (`sample_tokens` for a batch of
    rows), so the same seed gives the same reply whichever path reads the prompt.

    Parameters
    ----------
    logits : numpy.ndarray
        Next-token logits over the vocabulary.
    temperature : float
        0 takes the argmax (no draw from ``rng``); above 0 samples from
        ``softmax(logits / temperature)``.
    rng : numpy.random.Generator
        The generator the draw uses.

    Returns
    -------
    int
        The token id.
    """
    return sample_tokens(np.asarray(logits)[None, :], temperature, [rng])[0]


def sample_tokens(logits: LogitRows, temperature: float, rngs: Sequence[np.random.Generator]) -> list[int]:
    """One token per row of ``logits``, row r drawn with ``rngs[r]``: `sample_token` over a batch.

    Why vectorised: a shared-prefix batch of the menu study decodes hundreds of rows a step,
    and the softmax over the vocabulary row by row in Python costs a large part of the
    model's step. The draw is the inverse CDF that ``rng.choice(V, p=p)`` computes (one
    ``rng.random()`` against the cumulative probabilities), searched in two levels: sums of
    blocks of `_TOKENS_PER_BLOCK` tokens first, then the cumulative sum inside the one block
    the draw falls in, so only one block a row is summed token by token. Rows go four at a
    time into one float64 scratch block that stays in cache for every pass, read straight
    from the model's own logits: a bfloat16 tensor's values are exact in float64, so no
    float32 copy of the whole batch is made first (300 rows of gemma3's 262,144 tokens, one
    thread: a draw took 0.104 s through a float32 copy, 0.080 s read by blocks, the same
    tokens; scripts/bench_logits_path.py, 2026-12-05). The law is ``softmax(logits / T)`` in
    float64, each token weighed by exp(logit / T) (a row whose weights leave float64's range
    is weighed by exp((logit - max) / T) instead), and the token is ``rng.choice``'s from the
    same probabilities except where the draw falls within float64 rounding of a boundary
    (tests/models/test_sampling.py compares them).

    Parameters
    ----------
    logits : numpy.ndarray or torch.Tensor
        ``[rows, vocabulary]`` next-token logits, in any float dtype (bfloat16 for a tensor).
    temperature : float
        0 takes each row's argmax (no draw); above 0 samples from ``softmax(logits / T)``.
    rngs : sequence of numpy.random.Generator
        One per row.

    Returns
    -------
    list of int
    """
    if not hasattr(logits, "copy_"):  # not a torch tensor: anything numpy reads as an array
        logits = np.asarray(logits)
    if logits.ndim != 2 or logits.shape[0] != len(rngs):
        raise InputError(
            f"sample_tokens needs [rows, vocabulary] logits and one generator per row, "
            f"got shape {tuple(logits.shape)} for {len(rngs)} generators"
        )
    if temperature == 0:
        return [int(t) for t in logits.argmax(1).tolist()]
    out: list[int] = []
    width = _TOKENS_PER_BLOCK
    vocab = logits.shape[1]
    whole = vocab // width
    scratch = np.empty((min(len(rngs), _ROWS_PER_BLOCK), vocab))  # reused: fresh pages a block cost a third
    into = _rows_into(logits, scratch)
    scale = 1.0 / temperature  # one rounded product by 1 / T: a division costs twice as much

    def cumulative_blocks(p: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", under="ignore"):  # a row out of range is redrawn below
            np.exp(p, out=p)
        blocks = p[:, : whole * width].reshape(len(p), whole, width).sum(axis=2)
        if vocab > whole * width:
            blocks = np.concatenate([blocks, p[:, whole * width :].sum(axis=1, keepdims=True)], axis=1)
        return blocks.cumsum(axis=1)

    for start in range(0, len(rngs), _ROWS_PER_BLOCK):
        stop = min(start + _ROWS_PER_BLOCK, len(rngs))
        # the weights exp(logit / T) with no maximum subtracted: a model's logits over T stay
        # far inside float64's e^-708..e^709, and two passes fewer take an eighth off the draw
        p = into(start, stop)
        p *= scale
        below = cumulative_blocks(p)
        total = below[:, -1]
        if not ((total > _LEAST_TOTAL) & (total < np.inf)).all():  # out of that range: (logit - max) / T
            p = into(start, stop)
            p -= p.max(axis=1, keepdims=True)
            p *= scale
            below = cumulative_blocks(p)
        for row, cumulative, rng in zip(p, below, rngs[start:]):
            u = rng.random() * cumulative[-1]
            b = min(int(np.searchsorted(cumulative, u, side="right")), len(cumulative) - 1)
            inside = row[b * width : (b + 1) * width].cumsum() + (cumulative[b - 1] if b else 0.0)
            out.append(b * width + min(int(np.searchsorted(inside, u, side="right")), len(inside) - 1))
    return out


def _rows_into(logits: LogitRows, scratch: np.ndarray) -> Callable[[int, int], np.ndarray]:
    """A reader that copies rows ``[start, stop)`` of ``logits`` into ``scratch`` as float64
    (exact) and returns that part of it. A tensor is copied by torch (numpy has no
    bfloat16), an array by numpy; torch is imported only when a tensor is given."""
    if isinstance(logits, np.ndarray):

        def read(start: int, stop: int) -> np.ndarray:
            np.copyto(scratch[: stop - start], logits[start:stop])
            return scratch[: stop - start]

        return read
    import torch

    shared = torch.from_numpy(scratch)

    def read_tensor(start: int, stop: int) -> np.ndarray:
        shared[: stop - start].copy_(logits[start:stop])
        return scratch[: stop - start]

    return read_tensor


_ROWS_PER_BLOCK = 4  # 4 float64 rows of gemma3's 262,144 tokens (8 MB) stay in cache for every pass
_TOKENS_PER_BLOCK = 256
_LEAST_TOTAL = 1e-250  # a row's total weight below this is redrawn with its maximum subtracted
