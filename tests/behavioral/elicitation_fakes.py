"""Fake backends for the elicitation tests: a letter-biased model with (or without) content
knowledge, whose every protocol's answer is known in advance."""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from liedar.behavioral.items.mcq import load_mcq_bank

ANSWERS = {it.question: it.answer for it in load_mcq_bank()}


def _last_user(prompt) -> tuple[str, str, int]:
    """(system, last user turn, number of worked examples) of a prompt."""
    if isinstance(prompt, str):
        blocks = prompt.split("\n\n")
        return "", blocks[-1], sum("\nAnswer: " in b for b in blocks[:-1])
    system = " ".join(m.content for m in prompt.messages if m.role == "system")
    users = [m.content for m in prompt.messages if m.role == "user"]
    shots = sum(1 for m in prompt.messages[:-1] if m.role == "assistant")
    return system, users[-1], shots


def _shown(user: str) -> tuple[str, list[str]]:
    lines = user.split("\n")
    question = lines[0].removeprefix("Question: ")
    return question, [ln.split(". ", 1)[1] for ln in lines[1:] if re.match(r"^[A-J]\. ", ln)]


def _logsoftmax(x: np.ndarray) -> np.ndarray:
    return x - (x.max() + np.log(np.exp(x - x.max()).sum()))


class LetterBiasKnower:
    """Prefers the letter ``letter`` by ``bias`` nats whatever the content, and adds ``know``
    nats to the right option (its letter, or its text under cloze). know = 0 is a pure
    position bias with no knowledge at all."""

    kind = "fake"

    def __init__(self, bias: float = 5.0, know: float = 1.0, letter: str = "C"):
        self.bias, self.know, self.letter = bias, know, letter
        self.prompts: list = []

    def score_options(self, prompt, options: Sequence[str]) -> np.ndarray:
        self.prompts.append(prompt)
        _, user, _ = _last_user(prompt)
        question, shown = _shown(user)
        if all(re.fullmatch(r" [A-J]", o) for o in options):
            x = np.array(
                [
                    self.bias * (o.strip() == self.letter) + self.know * (shown[i] == ANSWERS[question])
                    for i, o in enumerate(options)
                ],
                dtype=float,
            )
            return _logsoftmax(x)
        # cloze: like a language model, longer texts cost more (0.1 nats a byte), plus knowledge
        return np.array([-0.1 * len(o.encode()) + self.know * (o.strip() == ANSWERS[question]) for o in options])
