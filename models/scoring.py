"""The scoring engine: instruments ask for option scores, the engine decides how they are computed.

Why one engine: the sandbagging gap, consistency, the observer effect, the ceilings, the
validation units and the audit all ask a model for the log-probabilities of a few options
after a prompt, over the same multiple-choice bank and the same framings. An instrument
says *what* it wants scored — a `ScoreRequest` (prompt, options), one or many at a time
through `score_many` — and nothing about how; the engine is the one place that decides
what is computed, what is remembered and what is read back.

What the engine does with a bulk of requests, in order:

1. removes duplicates (the same prompt and options asked twice, in one bulk, by two
   framings or by two instruments on the same engine);
2. answers what it answered before from memory (one engine per model run: the cross-check
   asks the very questions the sandbagging run asked; zero-shot letter is permutation's
   first shift);
3. asks the backend for the rest, one request at a time, through its own
   ``score_options``. When the backend is behind the model-call cache
   (`liedar.models.call_cache`), that is where results persist between runs: its key holds
   the model's fingerprint, the backend's kind, its dtype, the prompt and the options, so
   an entry written by another backend or dtype is never read as this one's, and a damaged
   entry is recomputed with one note line.

Why each request is computed alone, on the direct path: every instrument's numbers must be
the ones the direct path gives, bit for bit. Reading a shared prefix once (a KV cache of the
system turn) or padding several prompts into one batch computes the same function in
another order of float operations. On smollm2-135m's multiple-choice letter prompts (16
bank items under the honest system turn, 72-76 tokens, 28 shared, one thread, 2026-12-05,
2-core AMD EPYC with AVX-512 BF16): transformers float32 with the shared 28 tokens read
once gave log-probs up to 9.2e-6 away from the direct path's and a right-padded batch of
the 16 prompts up to 1.2e-5; llama.cpp with the shared tokens kept in its memory up to
0.18, while llama.cpp's packed decode of several prompts (what ``token_logprobs_of_ids``
uses) was bit-identical but no faster than one prompt a decode. A difference that small
still flips an argmax at a near tie, so an instrument's rate could move; none of them is
used here (scripts/bench_demo.py times each step on the direct path and on the engine).

Weights that change under the engine (weight noise, a LoRA merge reading ``.model``) would
make remembered answers wrong: reading one of `WEIGHT_ATTRS` through the engine forgets
every remembered answer and turns the memory off for the engine's life, as the model-call
cache does for its store.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from liedar.models.chat import TextInput

# attributes that hand out the mutable torch model: reading one ends remembering (see above)
WEIGHT_ATTRS = frozenset({"model", "_decoder", "_blocks", "_norm"})
_OWN = frozenset({"_inner", "_memory", "_remember", "stats"})


class ScoreRequest(NamedTuple):
    """One question for the engine: the log-probability of each option after ``prompt``."""

    prompt: TextInput
    options: tuple[str, ...]


@runtime_checkable
class OptionScorer(Protocol):
    """What an instrument needs of a model to score options: a backend, a served model, a
    test fake or a `ScoringEngine` all qualify."""

    def score_options(self, prompt: TextInput, options: Sequence[str]) -> np.ndarray: ...


def request(prompt: TextInput, options: Sequence[str]) -> ScoreRequest:
    """A `ScoreRequest` with the options as a tuple (the form the engine deduplicates on)."""
    return ScoreRequest(prompt, tuple(options))


def score_many(scorer: OptionScorer, requests: Sequence[ScoreRequest]) -> list[np.ndarray]:
    """Scores of every request, in order: the engine's bulk path when ``scorer`` has one,
    else one ``score_options`` call a request (a served model, a test fake)."""
    bulk = getattr(scorer, "score_many", None)
    if callable(bulk):
        return list(bulk(requests))
    return [np.asarray(scorer.score_options(r.prompt, r.options), dtype=float) for r in requests]


class ScoringEngine:
    """``backend`` with its option scoring deduplicated and remembered (see the module docstring).

    Every other attribute is the wrapped backend's own (read and written through), so the
    engine can be handed to any code that takes a backend. ``stats`` counts ``requests``
    (asked of the engine), ``remembered`` (answered from memory or a duplicate in the same
    bulk) and ``computed`` (asked of the backend).

    Parameters
    ----------
    backend : OptionScorer
        The model, bare or behind the model-call cache, or another engine: a run that counts
        its own distinct requests (the ceilings' ``score_calls``) asks through an engine of
        its own over the model run's shared one, which answers what another unit asked.
    """

    def __init__(self, backend: Any) -> None:
        object.__setattr__(self, "_inner", backend)
        object.__setattr__(self, "_memory", {})
        object.__setattr__(self, "_remember", True)
        object.__setattr__(self, "stats", {"requests": 0, "remembered": 0, "computed": 0})

    @property
    def inner(self) -> Any:
        """The backend the engine asks."""
        return self.__dict__["_inner"]

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("_inner")
        if inner is None:
            raise AttributeError(name)
        if name in WEIGHT_ATTRS:  # the weights may change from here on: nothing remembered holds
            self.__dict__["_memory"].clear()
            object.__setattr__(self, "_remember", False)
        return getattr(inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)

    def __repr__(self) -> str:
        return f"ScoringEngine({self.inner!r})"

    def score_many(self, requests: Sequence[ScoreRequest]) -> list[np.ndarray]:
        """Scores of every request, in request order; each distinct one computed at most once."""
        memory: dict[Any, np.ndarray] = self.__dict__["_memory"]
        remember = self.__dict__["_remember"] and getattr(self.inner, "caching", True)
        fresh: dict[Any, np.ndarray] = {}
        out: list[np.ndarray] = []
        for r in requests:
            key = _key(r)
            self.stats["requests"] += 1
            known: Optional[np.ndarray] = None
            if key is not None:
                known = fresh.get(key) if key in fresh else memory.get(key) if remember else None
            if known is not None:
                self.stats["remembered"] += 1
                out.append(known)
                continue
            scores = np.asarray(self.inner.score_options(r.prompt, list(r.options)), dtype=float)
            self.stats["computed"] += 1
            if key is not None:
                fresh[key] = scores
                if remember:
                    memory[key] = scores
            out.append(scores)
        return out

    def score_options(self, prompt: TextInput, options: Sequence[str]) -> np.ndarray:
        """One request: `score_many` of it."""
        return self.score_many([request(prompt, options)])[0]


def _key(r: ScoreRequest) -> Any:
    """The request as a dictionary key (a prompt that cannot be one is never deduplicated)."""
    try:
        hash(r.prompt)
    except TypeError:
        return None
    return (type(r.prompt).__name__, r.prompt, tuple(r.options))


__all__ = ["OptionScorer", "ScoreRequest", "ScoringEngine", "WEIGHT_ATTRS", "request", "score_many"]
