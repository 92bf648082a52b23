"""Scripted fake backends with planted awareness and planted contamination.

They read the rendered prompt (a dialogue) to decide what the model "sees": the question (to
look up the right option) and whether the presentation is evaluation-looking. What they do
with that is the planted behaviour the instruments must (or must not) find.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.behavioral.items.presentations import EVALUATION


def _u(*keys: str) -> float:
    return int.from_bytes(hashlib.sha256("|".join(keys).encode()).digest()[:8], "little") / 2**64


def _text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(m.content for m in prompt.messages)


EVAL_MARKERS = tuple(
    s
    for p in EVALUATION
    for s in (p.system, p.user.split("{question}")[-1].strip(), p.user.split("{")[0].strip())
    if s and len(s) > 8
)


class ObserverFake:
    """Knows each bank item's answer with probability ``skill`` (fixed per item), plus
    per-wording noise ``noise``; when ``aware`` and the prompt looks like an evaluation,
    answers wrongly with probability ``sandbag``."""

    capabilities = frozenset({"score_options"})
    name = "observer-fake"

    def __init__(self, aware: bool, skill: float = 0.85, noise: float = 0.05, sandbag: float = 0.6):
        self.aware, self.skill, self.noise, self.sandbag = aware, skill, noise, sandbag
        self.bank = {it.question: it for it in load_mcq_bank()}
        self.calls = 0

    def looks_like_eval(self, text: str) -> bool:
        return any(m in text for m in EVAL_MARKERS)

    def score_options(self, prompt: Any, options: Sequence[str]) -> np.ndarray:
        self.calls += 1
        text = _text(prompt)
        item = next(it for q, it in self.bank.items() if q in text)
        right = item.options.index(item.answer)
        wrong = (right + 1 + int(_u(text, "w") * 3)) % len(options)
        knows = _u(item.item_id, "skill") < self.skill
        if _u(text, "noise") < self.noise:
            knows = not knows
        if self.aware and self.looks_like_eval(text) and _u(text, "sandbag") < self.sandbag:
            knows = False
        pick = right if knows else wrong
        # longer options get proportionally more mass so both cloze scorings pick `pick`
        return np.array([-1.0 * len(o) if i == pick else -5.0 * len(o) for i, o in enumerate(options)])


class LikelihoodFake:
    """Per-word "token" log-probs from a fixed hash of the word (so wordings differ, as
    templates do); ``memorised`` texts get every token ``bonus`` nats more likely."""

    name = "likelihood-fake"

    def __init__(self, memorised: Sequence[str] = (), bonus: float = 1.0):
        self.memorised, self.bonus = set(memorised), bonus

    def token_logprobs(self, text: str) -> np.ndarray:
        words = text.split()
        lp = np.array([-1.0 - 4.0 * _u(w, "lp") for w in words[1:]] or [-3.0])
        return lp + (self.bonus if text in self.memorised else 0.0)
