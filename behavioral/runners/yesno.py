"""Asking a model a yes/no question through ``score_options``.

Why log-probabilities of "Yes" and "No" and not generated text: a small model's free text
is often neither, while the two one-token continuations always compare cleanly, and
P(yes) renormalised over {Yes, No} is the quantity negation consistency needs. The
question is sent as a chat dialogue (system + user), so the continuation starts the
assistant turn and has no leading space (see `behavioral.runners.common`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from liedar.core._util.serial import Serial
from liedar.core.errors import InputError
from liedar.models.backend import Backend

CONTINUATIONS = ("Yes", "No")


@dataclass(frozen=True)
class YesNoAnswer(Serial):
    p_yes: float  # P(Yes) renormalised over {Yes, No}
    logprobs: tuple[float, float]

    key_order = (..., "answer")

    @property
    def answer(self) -> str:
        return "yes" if self.p_yes >= 0.5 else "no"


def ask_yes_no(backend: Backend, user: str, *, system: Optional[str] = None) -> YesNoAnswer:
    """Score "Yes" and "No" as the assistant's reply to ``user`` (after ``system``)."""
    from liedar.models.chat import Dialogue, Message  # torch-free, kept lazy by contract

    messages = ([Message("system", system)] if system else []) + [Message("user", user, detect=True)]
    scores = np.asarray(backend.score_options(Dialogue.of(*messages), list(CONTINUATIONS)), dtype=float)
    if scores.shape != (2,) or not np.all(np.isfinite(scores)):
        raise InputError(f"backend.score_options returned {scores!r} for Yes/No: expected two finite log-probs")
    p = np.exp(scores - scores.max())
    return YesNoAnswer(float(p[0] / p.sum()), (float(scores[0]), float(scores[1])))


def grade_yes_no(text: str) -> Optional[str]:
    """ "yes" / "no" from the first word of a *generated* answer (quotes, asterisks and
    punctuation around it ignored); None when it is neither. The organisms' ground truth and
    the validation matrix grade generations with this one rule."""
    words = text.strip().lower().lstrip("\"'*").split()
    first = words[0].strip(".,!:;\"'*") if words else ""
    return first if first in ("yes", "no") else None
