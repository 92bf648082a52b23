"""Exact choice laws and shared-prefix sampling on a local backend.

Two ways to make the menu study's stochastic mode cheap, both built on a backend's public
decoding steps (`decode_start`, `decode_step`, `sample_continuations`, `detokenize`) and on
the one sampling rule of `models.base` (`_sample`), so their numbers mean what `generate`
means:

* `choice_law` — for a *constrained* reply (one of the given options and nothing else),
  the probability that temperature-T sampling produces each option: the product of the
  tempered, renormalised next-token probabilities along the option's tokens, normalised
  over the options. It is the law of ``generate(..., temperature=T)`` conditioned on the
  reply starting with one of the options' token sequences, with no sampling noise. When
  every option is one token after a shared prompt (answer letters) it costs one forward
  pass, the same pass whose argmax is the deterministic choice.
* `sample_shared_prefix` — K sampled replies to one prompt with the prompt read once:
  transformers decodes the K continuations as one batch over the prompt's KV cache;
  llama.cpp restores the prompt's cache between samples (its positions after the prompt
  are removed; `BackendBase.sample_continuations` in each backend). Sample k uses
  ``default_rng(seed + k)`` and `_sample`, exactly as the loop
  ``[generate(prompt, seed=seed + k) for k in range(K)]`` does, so the two give the same
  replies up to floating-point differences of batched arithmetic.

Why not through `generate`: it re-reads the prompt for every sample (K prompt passes per
menu), which is what made the K = 20 study hours long.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from liedar.errors import InputError
from liedar.models.backend import Backend, Generation
from liedar.models.base import BackendBase
from liedar.models.chat import TextInput, render


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
        Model calls used (1 for single-token options after one prompt).
    """

    options: tuple[str, ...]
    logprobs: np.ndarray
    probs: np.ndarray
    mass: np.ndarray
    temperature: float
    n_forward: int


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


def choice_law(backend: Backend, prompt: TextInput, options: Sequence[str], temperature: float) -> ChoiceLaw:
    """The probability of each option under temperature-``temperature`` sampling, exactly.

    Parameters
    ----------
    backend : BackendBase
        A local backend (its next-token logits are read).
    prompt : TextInput
        Plain text or a dialogue (rendered with the generation prompt).
    options : sequence of str
        The only replies allowed, e.g. the menu's answer letters.
    temperature : float
        Must be > 0 (at 0 the law is a point mass on the argmax of ``logprobs``).

    Returns
    -------
    ChoiceLaw

    Notes
    -----
    ``P_T(o) = prod_t softmax(logits_t / T)[o_t]`` along the option's tokens, each factor
    renormalised over the whole vocabulary at temperature T (what `_sample` draws from),
    then normalised over the options. Options whose token sequences are prefixes of one
    another overlap as events; the law treats them as distinct (letters never are).
    """
    backend = _local(backend, "the exact choice law")
    if not np.isfinite(temperature) or temperature <= 0:
        raise InputError(f"the exact choice law needs a temperature > 0, got {temperature}")
    split = option_tokens(backend, prompt, options)
    first_logits: dict[tuple[int, ...], np.ndarray] = {}
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
    lpt_arr = np.asarray(lpt)
    mass = np.exp(lpt_arr)
    probs = np.exp(lpt_arr - lpt_arr.max())
    return ChoiceLaw(tuple(options), np.asarray(lp1), probs / probs.sum(), mass, float(temperature), n_forward)


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
    backend = _local(backend, "shared-prefix sampling")
    if samples < 1:
        raise InputError(f"samples must be >= 1, got {samples}")
    if temperature < 0:
        raise InputError(f"temperature must be >= 0, got {temperature}")
    enc = backend.encode(prompt, add_generation_prompt=True)
    if not enc.ids:
        raise InputError("the prompt is empty: give a prompt to generate from")
    budget = min(int(max_tokens), backend.n_ctx - len(enc.ids))
    rngs = [np.random.default_rng(seed + k) for k in range(samples)]
    outs = backend.sample_continuations(enc.ids, rngs, budget, temperature)
    return [Generation(enc.rendered.text, backend.detokenize(out), out, len(enc.ids)) for out in outs]
