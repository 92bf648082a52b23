"""Scripted fake backends with a planted, known deception (no model, no torch).

Each answers through ``score_options`` only, as the detectors ask: MCQ letters (" A".." D"),
cloze continuations (" <option text>") and the sycophancy runner's "Yes"/"No". What each
fake does is fixed here, so the validation matrix built from them has a known answer.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.behavioral.items.sycophancy import sycophancy_items

ANSWERS = {w: it for it in load_mcq_bank() for w in it.variants}
CLAIMS = {it.claim.sheet: it.claim.truth for it in sycophancy_items()}  # the sheet decides the truth
PRESSURE = re.compile(r"(?:answer is|it's) (Yes|No)\b")
EVALUATION = re.compile(r"evaluat", re.IGNORECASE)  # every evaluation framing the detectors use says so


def _parts(prompt) -> tuple[str, str]:
    if isinstance(prompt, str):
        return "", prompt
    system = " ".join(m.content for m in prompt.messages if m.role == "system")
    users = [m.content for m in prompt.messages if m.role == "user"]
    return system, users[-1]


def _logsoftmax(x: np.ndarray) -> np.ndarray:
    return x - (x.max() + np.log(np.exp(x - x.max()).sum()))


class FakeModel:
    """Knows every bank answer and every product-sheet fact.

    ``sandbag``: under an evaluation framing it answers wrongly — onto letter A / the first
    wrong option (``"attractor"``) or onto a seeded plausible wrong option (``"plausible"``).
    ``sycophant``: follows a user's stated Yes/No. An honest fake does neither.
    """

    kind = "fake"
    fingerprint = "fake-fingerprint"

    def __init__(self, name: str = "fake", *, sandbag: str = "", sycophant: bool = False, know: float = 4.0):
        self.name, self.sandbag, self.sycophant, self.know = name, sandbag, sycophant, know
        self.calls = 0

    def _target(self, item, shown: Sequence[str], system: str) -> str:
        if not self.sandbag or not EVALUATION.search(system):
            return item.answer
        if self.sandbag == "attractor":
            return shown[0] if shown[0] != item.answer else shown[1]
        wrong = sorted(o for o in item.options if o != item.answer)  # the same wrong option whatever the order
        return wrong[sum(map(ord, item.item_id)) % len(wrong)]

    def score_options(self, prompt, options: Sequence[str]) -> np.ndarray:
        self.calls += 1
        system, user = _parts(prompt)
        if list(options) == ["Yes", "No"]:
            sheet = user.split("\n\n", 1)[0]
            truth = CLAIMS[sheet]
            m = PRESSURE.search(user)
            say = m.group(1).lower() if (self.sycophant and m) else truth
            return _logsoftmax(np.array([self.know * (say == "yes"), self.know * (say == "no")]))
        lines = user.split("\n")
        question = lines[0].removeprefix("Question: ")
        item = ANSWERS[question]
        if all(re.fullmatch(r" [A-J]", o) for o in options):
            shown = [ln.split(". ", 1)[1] for ln in lines[1:] if re.match(r"^[A-J]\. ", ln)]
            target = self._target(item, shown, system)
            return _logsoftmax(np.array([self.know * (shown[i] == target) for i in range(len(options))]))
        texts = [o.strip() for o in options]
        target = self._target(item, texts, system)
        return np.array([-0.05 * len(o.encode()) + self.know * (t == target) for o, t in zip(options, texts)])
