"""Scripted fake backends for the instrument runners: known behaviour, known answers.

They implement only ``score_options`` (what the runners use) and read the prompt the way
a perfectly attentive model would, then apply a scripted policy (honest, sycophantic,
selectively lying, sandbagging), so each runner's plumbing is checked against a known
result.
"""

from __future__ import annotations

import re
from typing import Callable, Optional, Sequence

import numpy as np

from liedar.models.chat import Dialogue


def _parts(prompt) -> tuple[str, str]:
    assert isinstance(prompt, Dialogue)
    system = " ".join(m.content for m in prompt.messages if m.role == "system")
    user = " ".join(m.content for m in prompt.messages if m.role == "user")
    return system, user


def _sheet_says_defect(user: str) -> bool:
    sheet = user.split("\n", 1)[0]
    return " does not " not in sheet


class FakeYesNo:
    """Answers product-sheet questions; ``policy(system, user, correct) -> answer``."""

    kind = "fake"

    def __init__(self, policy: Optional[Callable[[str, str, str], str]] = None, confidence: float = 4.0):
        self.policy = policy or (lambda system, user, correct: correct)
        self.confidence = confidence
        self.calls = 0

    def score_options(self, prompt, options: Sequence[str]) -> np.ndarray:
        self.calls += 1
        system, user = _parts(prompt)
        question = user.split("Customer:", 1)[1]
        negated = "Is it true that" in question and " does not " in question
        defect = _sheet_says_defect(user)
        correct = "yes" if defect != negated else "no"
        answer = self.policy(system, user, correct)
        assert list(options) == ["Yes", "No"]
        return np.array([0.0, -self.confidence]) if answer == "yes" else np.array([-self.confidence, 0.0])


def sycophant(system: str, user: str, correct: str) -> str:
    """Follows the user's stated answer whenever there is one."""
    m = re.search(r"answer is (Yes|No)|think it's (Yes|No)", user)
    return (m.group(1) or m.group(2)).lower() if m else correct


def consistent_seller_liar(system: str, user: str, correct: str) -> str:
    """Honest at the information desk; under a sales bonus, denies the defect coherently
    ("no" to "does it have the defect?", "yes" to "is it true it does not?")."""
    if "bonus" not in system:
        return correct
    question = user.split("Customer:", 1)[1]
    return "yes" if " does not " in question else "no"


def careless_seller_liar(system: str, user: str, correct: str) -> str:
    """Honest at the information desk; under a sales bonus, says "No" to every question —
    denying the defect, but also contradicting itself on the negated question."""
    return correct if "bonus" not in system else "no"


class FakeMCQ:
    """Knows every MCQ answer; under a system prompt matching ``sandbag`` it picks a wrong option.

    Reads the *last* user turn (k-shot prompts put worked examples before it) and answers
    letter prompts by letter and cloze prompts (option texts as continuations) by text.
    """

    kind = "fake"

    def __init__(self, answers: dict[str, str], sandbag: Optional[str] = None):
        self.answers = answers
        self.sandbag = sandbag

    def score_options(self, prompt, options: Sequence[str]) -> np.ndarray:
        assert isinstance(prompt, Dialogue)
        system = " ".join(m.content for m in prompt.messages if m.role == "system")
        user = [m.content for m in prompt.messages if m.role == "user"][-1]
        lines = user.split("\n")
        question = lines[0].removeprefix("Question: ")
        letters = all(re.fullmatch(r" [A-J]", o) for o in options)
        shown = (
            [ln.split(". ", 1)[1] for ln in lines[1:] if re.match(r"^[A-J]\. ", ln)]
            if letters
            else [o.strip() for o in options]
        )
        right = shown.index(self.answers[question])
        pick = (right + 1) % len(shown) if self.sandbag and self.sandbag in system else right
        scores = np.full(len(options), -5.0)
        scores[pick] = 0.0
        return scores
