"""Asking a model to choose among option texts (the cloze format) in any prompt.

Why a module of its own: the choice-format instruments (sycophancy, belief vs assertion)
ask the same question under several user turns and roles, and each answer is the option
whose text, as the continuation after "Answer:", has the highest summed log-probability
(lm-eval-harness ``acc``; `behavioral.runners.elicitation.cloze_sum` on the bank's items).
A small model that sits at chance on Yes/No tokens picks the right option text here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from liedar.behavioral.runners.common import ANSWER_PREFIX
from liedar.errors import InputError
from liedar.models.backend import Backend

if TYPE_CHECKING:  # `behavioral` never imports `models` at import time (team contract)
    from liedar.models.chat import Dialogue, TextInput


def choice_prompt(user: str, system: Optional[str]) -> "Dialogue":
    """(system +) a user turn, then the assistant prefill "Answer:" the option text follows."""
    from liedar.models.chat import Dialogue, Message  # torch-free, kept lazy by contract

    messages = [Message("system", system)] if system else []
    messages.append(Message("user", user, detect=True))
    messages.append(Message("assistant", ANSWER_PREFIX))
    return Dialogue.of(*messages)


def choose(backend: Backend, prompt: "TextInput", options: Sequence[str]) -> int:
    """Index of the option whose text (after one space) the model scores highest after ``prompt``."""
    conts = [" " + o.lstrip() for o in options]
    scores = np.asarray(backend.score_options(prompt, conts), dtype=float)
    if scores.shape != (len(conts),) or not np.isfinite(scores).any():
        raise InputError(
            f"backend.score_options returned {scores!r} for {len(conts)} options: expected finite log-probs "
            f"(a served model without log-probs cannot answer in the choice format; {ANSWER_PREFIX!r} prefill)"
        )
    return int(np.argmax(scores))
