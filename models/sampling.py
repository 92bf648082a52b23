"""Exact choice laws and shared-prefix sampling on a local backend (the law also on a served one).

Two ways to make the menu study's stochastic mode cheap, both built on a backend's public
decoding steps (`decode_start`, `decode_step`, `sample_continuations`, `detokenize`) and on
the one sampling rule of `models.base` (`sample_token`), so their numbers mean what `generate`
means:

* `choice_law` — for a *constrained* reply (one of the given options and nothing else),
  the probability that temperature-T sampling produces each option: the product of the
  tempered, renormalised next-token probabilities along the option's tokens, normalised
  over the options. It is the law of ``generate(..., temperature=T)`` conditioned on the
  reply starting with one of the options' token sequences, with no sampling noise. When
  every option is one token after a shared prompt (answer letters) it costs one forward
  pass, the same pass whose argmax is the deterministic choice. On a served model it is
  read from the answer token's top log-probs (one request; see `choice_law`).
* `sample_shared_prefix` — K sampled replies to one prompt with the prompt read once:
  transformers decodes the K continuations as one batch over the prompt's KV cache;
  llama.cpp restores the prompt's cache between samples (its positions after the prompt
  are removed; `BackendBase.sample_continuations` in each backend). Sample k uses
  ``default_rng(seed + k)`` and `sample_token`, exactly as the loop
  ``[generate(prompt, seed=seed + k) for k in range(K)]`` does, so the two give the same
  replies up to floating-point differences of batched arithmetic.

Why not through `generate`: it re-reads the prompt for every sample (K prompt passes per
menu), which is what made the K = 20 study hours long.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from liedar.core.errors import InputError
from liedar.models.backend import Backend, Generation
from liedar.models.base import BackendBase
from liedar.models.chat import TextInput, render, reply_text

if TYPE_CHECKING:
    from liedar.models.served import ServedBackend


@dataclass(frozen=True)
class ChoiceLaw:
    """The exact law of a constrained reply over ``options``.

    Attributes
    ----------
    options : tuple of str
        The allowed replies, in the order given.
    logprobs : numpy.ndarray
        Summed log-probability of each option's tokens at temperature 1 (what
        `score_options` returns); its argmax is the greedy (deterministic) choice.
    probs : numpy.ndarray
        Probability of each option under temperature-``temperature`` sampling, conditioned
        on the reply being one of the options; sums to 1.
    mass : numpy.ndarray
        Unconditioned probability of each option's token sequence at ``temperature``;
        ``mass.sum()`` is the share of sampled replies the constrained law speaks for.
    temperature : float
    n_forward : int
        Model calls used (1 for single-token options after one prompt, 0 when they are read
        from the caller's ``next_logits``; on a served model, requests).
    mass_floor : numpy.ndarray, optional
        Served models only: a lower bound of ``mass``. The server lists only its top tokens,
        so ``mass`` there is renormalised over the listed ones (an upper bound); the
        unlisted rest can lower it at most to this (at T > 1 nothing bounds the rest
        without the vocabulary's size: zeros). None on a local model, where ``mass`` is exact.
    unlisted : tuple of str
        Served models only: the options absent from the server's top list. When any is,
        ``probs``, ``mass`` and ``mass_floor`` are NaN: the law is not computable from that
        response, and is not guessed.
    """

    options: tuple[str, ...]
    logprobs: np.ndarray
    probs: np.ndarray
    mass: np.ndarray
    temperature: float
    n_forward: int
    mass_floor: Optional[np.ndarray] = None
    unlisted: tuple[str, ...] = ()

    @property
    def computable(self) -> bool:
        """False when the options' probabilities could not be read (`unlisted`)."""
        return not self.unlisted


def _local(backend: Backend, what: str) -> BackendBase:
    if not isinstance(backend, BackendBase):
        raise InputError(
            f"{what} needs a local model's token probabilities (transformers or llama.cpp); "
            f"{type(backend).__name__} has none: use sampled replies instead"
        )
    return backend


def _log_softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - z.max()
    return z - np.log(np.exp(z).sum())


def option_tokens(backend: BackendBase, prompt: TextInput, options: Sequence[str]) -> list[tuple[list[int], int]]:
    """Each option's token ids after the prompt, split exactly as `score_options` splits them.

    Returns ``(ids, k)`` per option: ``ids`` is prompt + option tokenized together and
    ``ids[k:]`` are the option's tokens (a token straddling the boundary counts as the
    option's). Dialogue prompts get the generation prompt, as in `generate`.
    """
    if isinstance(options, str) or len(options) == 0:
        raise InputError("options must be a non-empty list of strings")
    head = render(
        prompt, backend.chat_template, bos_token=backend.bos_token, eos_token=backend.eos_token,
        add_generation_prompt=True,
    )  # fmt: skip
    out = []
    for option in options:
        if not option:
            raise InputError("an option is the empty string; every option needs at least one character")
        ids, offsets = backend.tokenize(head.text + option, head.templated)
        if len(ids) > backend.n_ctx:
            raise InputError(f"prompt + option is {len(ids)} tokens, over {backend.name}'s context of {backend.n_ctx}")
        k = next((t for t, (a, b) in enumerate(offsets) if b > len(head.text)), None)
        if k is None or k == 0:
            raise InputError(f"option {option!r} has no token of its own after a non-empty prompt")
        out.append((list(ids), k))
    return out


def choice_law(
    backend: Backend,
    prompt: TextInput,
    options: Sequence[str],
    temperature: float,
    *,
    next_logits: Optional[np.ndarray] = None,
) -> ChoiceLaw:
    """The probability of each option under temperature-``temperature`` sampling, exactly.

    Parameters
    ----------
    backend : Backend
        A local backend (its next-token logits are read), or a served model
        (`liedar.models.served.ServedBackend`: single-token options only, from the answer
        token's top list; see Notes).
    prompt : TextInput
        Plain text or a dialogue (rendered with the generation prompt).
    options : sequence of str
        The only replies allowed, e.g. the menu's answer letters.
    temperature : float
        Must be > 0 (at 0 the law is a point mass on the argmax of ``logprobs``).
    next_logits : numpy.ndarray, optional
        A local model's next-token logits after ``prompt`` (rendered with the generation
        prompt), already computed by the caller: the options' first tokens are read from
        them instead of a new forward pass (`sample_with_choice_laws`).

    Returns
    -------
    ChoiceLaw

    Notes
    -----
    ``P_T(o) = prod_t softmax(logits_t / T)[o_t]`` along the option's tokens, each factor
    renormalised over the whole vocabulary at temperature T (what `sample_token` draws from),
    then normalised over the options. Options whose token sequences are prefixes of one
    another overlap as events; the law treats them as distinct (letters never are).

    On a served model the first token's log-probs come from the server's top list (the
    request `score_options` sends, so the argmax and the law read one response). Over the
    options the law is exact, ``softmax(logprob / T)``, because the vocabulary's
    normaliser cancels; ``mass`` needs that normaliser, which the listed tokens only bound
    (``mass_floor``). An option missing from the list makes the law not computable
    (``unlisted``) rather than guessed from the list's floor.
    """
    if not np.isfinite(temperature) or temperature <= 0:
        raise InputError(f"the exact choice law needs a temperature > 0, got {temperature}")
    from liedar.models.served import ServedBackend  # the one backend without logits

    if isinstance(backend, ServedBackend):
        return _served_choice_law(backend, prompt, options, temperature)
    backend = _local(backend, "the exact choice law")
    split = option_tokens(backend, prompt, options)
    first_logits: dict[tuple[int, ...], np.ndarray] = {}
    if next_logits is not None:  # an option whose tokens begin right after the prompt reads them
        first_logits[tuple(backend.encode(prompt, add_generation_prompt=True).ids)] = np.asarray(next_logits)
    lp1, lpt, n_forward = [], [], 0
    for ids, k in split:
        prefix = tuple(ids[:k])
        if prefix not in first_logits or len(ids) > k + 1:
            logits = backend.decode_start(prefix)
            n_forward += 1
            first_logits[prefix] = logits
        logits = first_logits[prefix]
        a = b = 0.0
        for t in range(k, len(ids)):
            if t > k:
                logits = backend.decode_step(ids[t - 1])
                n_forward += 1
            a += _log_softmax(logits, 1.0)[ids[t]]
            b += _log_softmax(logits, temperature)[ids[t]]
        lp1.append(a)
        lpt.append(b)
    return _law(options, np.asarray(lp1), np.asarray(lpt), temperature, n_forward)


def _law(
    options: Sequence[str],
    lp1: np.ndarray,
    lpt: np.ndarray,
    temperature: float,
    n_forward: int,
    mass_floor: Optional[np.ndarray] = None,
) -> ChoiceLaw:
    """The law from each option's log-probability at T = 1 and at T (normalised over the options)."""
    probs = np.exp(lpt - lpt.max())
    return ChoiceLaw(
        tuple(options), lp1, probs / probs.sum(), np.exp(lpt), float(temperature), n_forward, mass_floor=mass_floor
    )


def _served_choice_law(
    backend: "ServedBackend", prompt: TextInput, options: Sequence[str], temperature: float
) -> ChoiceLaw:
    """`choice_law` on a served model, from the top list of the one scoring request.

    Each listed token is tempered over the listed tokens (`_log_softmax` at T), then the
    options are read from the tempered list exactly as `score_options` reads them from the
    raw one (one token, or its stripped variants summed), so the law and the scores match
    tokens the same way. Tokens outside the list hold ``1 - sum(listed p)`` at T = 1, each
    at most the smallest listed ``p_min``; at T <= 1 their tempered weight is therefore at
    most ``(1 - sum p) * p_min ** (1/T - 1)``, which gives ``mass_floor``.
    """
    from liedar.models.served import option_logprobs

    n = len(options)
    scored = backend.score_with_top(prompt, options)
    lp1 = np.asarray(scored.scores, dtype=np.float64)
    if scored.top is None:  # the server gave no log-probs (the choice was parsed), or prefetch is planning
        return _not_computable(options, lp1, temperature, tuple(options))
    tokens = list(scored.top)
    raw = np.asarray([scored.top[t] for t in tokens], dtype=np.float64)
    tempered = dict(zip(tokens, _log_softmax(raw, temperature)))
    lpt, listed = option_logprobs(tempered, options, exact=scored.exact)
    if len(listed) != n or not all(listed):
        missing = tuple(o for o, ok in zip(options, listed or [False] * n) if not ok)
        return _not_computable(options, lp1, temperature, missing)
    p = np.exp(raw)
    weights = np.exp(raw / temperature)
    rest = max(0.0, 1.0 - float(p.sum())) * float(p.min()) ** (1.0 / temperature - 1.0) if temperature <= 1 else np.inf
    floor = np.exp(lpt) * weights.sum() / (weights.sum() + rest)
    return _law(options, lp1, lpt, temperature, 1, mass_floor=floor)


def _not_computable(
    options: Sequence[str], lp1: np.ndarray, temperature: float, unlisted: tuple[str, ...]
) -> ChoiceLaw:
    nan = np.full(len(options), np.nan)
    return ChoiceLaw(tuple(options), lp1, nan, nan, float(temperature), 1, mass_floor=nan, unlisted=unlisted)


def sample_shared_prefix(
    backend: Backend,
    prompt: TextInput,
    *,
    samples: int,
    max_tokens: int = 64,
    temperature: float = 0.7,
    seed: int = 0,
) -> list[Generation]:
    """``samples`` sampled replies to one prompt, the prompt read once.

    Parameters
    ----------
    backend : BackendBase
        Transformers (one batch over the prompt's KV cache) or llama.cpp (the prompt's
        cache kept, each sample's positions removed before the next).
    prompt : TextInput
    samples : int
        K >= 1.
    max_tokens, temperature, seed
        As in `generate`; sample k is seeded with ``seed + k``.

    Returns
    -------
    list of Generation
        In seed order, as the per-sample loop returns them.
    """
    return sample_shared_prefix_many(
        backend, [prompt], samples=samples, max_tokens=max_tokens, temperature=temperature, seeds=[seed]
    )[0]


def sample_shared_prefix_many(
    backend: Backend,
    prompts: Sequence[TextInput],
    *,
    samples: int,
    max_tokens: int = 64,
    temperature: float = 0.7,
    seeds: Sequence[int],
) -> list[list[Generation]]:
    """``samples`` sampled replies to each prompt, each prompt read once, all decoded together
    where the engine can (`BackendBase.sample_continuations_many`).

    Parameters
    ----------
    backend : BackendBase
        Transformers (every prompt's K rows in one left-padded batch) or llama.cpp (one
        prompt at a time, its cache kept between samples).
    prompts : sequence of TextInput
    samples : int
        K >= 1, per prompt.
    max_tokens, temperature
        As in `generate`.
    seeds : sequence of int
        One per prompt: sample k of prompt i is seeded with ``seeds[i] + k``.

    Returns
    -------
    list of list of Generation
        ``out[i]`` holds prompt i's replies in seed order, as the per-sample loop returns them.
    """
    return _sample_many(backend, prompts, samples, max_tokens, temperature, seeds, None)


def sample_with_choice_laws(
    backend: Backend,
    prompts: Sequence[TextInput],
    options: Sequence[Sequence[str]],
    *,
    samples: int,
    max_tokens: int = 64,
    temperature: float = 0.7,
    seeds: Sequence[int],
) -> tuple[list[list[Generation]], list[ChoiceLaw]]:
    """`sample_shared_prefix_many` and each prompt's `choice_law` at the same temperature,
    from one forward pass over the prompts.

    Why one pass: the exact law of a constrained reply is read from the next-token logits
    after the prompt, which are the logits the sampled replies' first draws are made from.
    Sampling already computes them, so the law costs no forward pass of its own (an option
    of several tokens still walks its tokens), and the sampled replies' first tokens are
    drawn from exactly the law they are tested against.

    Parameters
    ----------
    backend : BackendBase
    prompts : sequence of TextInput
    options : sequence of sequence of str
        Each prompt's allowed replies, e.g. its menu's letters.
    samples, max_tokens, temperature, seeds
        As in `sample_shared_prefix_many`; ``temperature`` must be > 0 (the law's).

    Returns
    -------
    replies : list of list of Generation
        As `sample_shared_prefix_many` returns them.
    laws : list of ChoiceLaw
        One per prompt, as `choice_law` computes it.
    """
    if not np.isfinite(temperature) or temperature <= 0:
        raise InputError(f"the exact choice law needs a temperature > 0, got {temperature}")
    if len(options) != len(prompts):
        raise InputError(f"one list of options per prompt: got {len(options)} for {len(prompts)} prompts")
    first: list[np.ndarray] = []
    replies = _sample_many(backend, prompts, samples, max_tokens, temperature, seeds, first)
    laws = [choice_law(backend, p, o, temperature, next_logits=logits) for p, o, logits in zip(prompts, options, first)]
    return replies, laws


def _sample_many(
    backend: Backend,
    prompts: Sequence[TextInput],
    samples: int,
    max_tokens: int,
    temperature: float,
    seeds: Sequence[int],
    first_logits: Optional[list[np.ndarray]],
) -> list[list[Generation]]:
    """`sample_shared_prefix_many`'s work; ``first_logits``, when a list, receives each
    prompt's next-token logits (`BackendBase.sample_continuations_many`)."""
    backend = _local(backend, "shared-prefix sampling")
    if samples < 1:
        raise InputError(f"samples must be >= 1, got {samples}")
    if temperature < 0:
        raise InputError(f"temperature must be >= 0, got {temperature}")
    if len(seeds) != len(prompts):
        raise InputError(f"one seed per prompt: got {len(seeds)} seeds for {len(prompts)} prompts")
    encoded = [backend.encode(p, add_generation_prompt=True) for p in prompts]
    if any(not enc.ids for enc in encoded):
        raise InputError("a prompt is empty: give a prompt to generate from")
    budget = min(int(max_tokens), backend.n_ctx - max(len(enc.ids) for enc in encoded))
    rngs = [[np.random.default_rng(seed + k) for k in range(samples)] for seed in seeds]
    marks = [enc.rendered.turn_marks for enc in encoded]
    outs = backend.sample_continuations_many(
        [enc.ids for enc in encoded], rngs, budget, temperature, first_logits, marks=marks
    )
    return [
        [Generation(enc.rendered.text, reply_text(backend.detokenize(out), m), out, len(enc.ids)) for out in row]
        for enc, m, row in zip(encoded, marks, outs)
    ]
