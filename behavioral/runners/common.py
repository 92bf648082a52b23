"""Asking a model a lettered multiple-choice question through the `Backend` protocol.

Why letters scored by log-probability: comparing the full option texts' log-probs favours
short or frequent strings, while one letter per option gives every option a one-token
continuation of equal length, so the comparison is about the choice and nothing else.

The leading-space issue: BPE tokenizers (GPT-2 style, SmolLM2) encode " A" (with its
space) as one token that differs from "A". After a plain-text prompt ending in
``"Answer:"`` the natural next token is ``" A"``; scoring ``"A"`` there would score an
unnatural glued continuation. In a chat dialogue the assistant turn begins right after
the template's ``"assistant\\n"`` header, where the natural token is ``"A"`` with no space.
So the continuations depend on the prompt form (see `letter_continuations`).

No torch here: the backend is whatever object implements ``score_options``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import numpy as np

from liedar.errors import InputError

if TYPE_CHECKING:  # `behavioral` never imports `models` at import time (team contract)
    from models.chat import Dialogue

LETTERS = "ABCDEFGHIJ"
ANSWER_INSTRUCTION = "Answer with the letter of the correct option only."


@dataclass(frozen=True)
class MCQAnswer:
    """The model's choice on one presentation of a multiple-choice question."""

    position: int  # chosen position in the presented order (0 = "A")
    letter: str
    label: str  # the chosen option's semantic label (its text)
    presented: tuple[str, ...]  # option labels in the order shown
    logprobs: tuple[float, ...]  # log-prob of each letter, by presented position
    chat: bool  # True when asked through the chat template

    @property
    def probabilities(self) -> tuple[float, ...]:
        """Letter probabilities renormalised over the offered letters."""
        lp = np.asarray(self.logprobs, dtype=float)
        p = np.exp(lp - lp.max())
        return tuple(float(x) for x in p / p.sum())

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "letter": self.letter,
            "label": self.label,
            "presented": list(self.presented),
            "logprobs": list(self.logprobs),
            "probabilities": list(self.probabilities),
            "chat": self.chat,
        }


def letter_continuations(n_options: int, chat: bool) -> list[str]:
    """The continuation strings to score: ``"A"`` in a chat turn, ``" A"`` after ``"Answer:"``."""
    prefix = "" if chat else " "
    return [prefix + LETTERS[i] for i in range(n_options)]


def format_question(question: str, presented: Sequence[str]) -> str:
    """The question followed by one lettered line per option."""
    lines = [f"Question: {question}"]
    lines += [f"{LETTERS[i]}. {text}" for i, text in enumerate(presented)]
    return "\n".join(lines)


def build_prompt(
    question: str, presented: Sequence[str], system: Optional[str], chat: bool
) -> Union[str, "Dialogue"]:
    """A plain-text prompt ending in ``"Answer:"``, or a system + user dialogue."""
    body = format_question(question, presented)
    if not chat:
        head = f"{system}\n\n" if system else ""
        return f"{head}{body}\nAnswer:"
    from models.chat import Dialogue, Message  # torch-free, but kept lazy by contract

    messages = [Message("system", system)] if system else []
    messages.append(Message("user", f"{body}\n{ANSWER_INSTRUCTION}", detect=True))
    return Dialogue.of(*messages)


def _check_order(order: Optional[Sequence[int]], n: int) -> list[int]:
    if order is None:
        return list(range(n))
    order = [int(i) for i in order]
    if sorted(order) != list(range(n)):
        raise InputError(f"order {order} is not a permutation of 0..{n - 1}: give each option index once")
    return order


def ask_multiple_choice(
    backend: Any,
    question: str,
    options: Sequence[str],
    *,
    system: Optional[str] = None,
    order: Optional[Sequence[int]] = None,
    chat: Optional[bool] = None,
) -> MCQAnswer:
    """Present ``options`` lettered A, B, ... in ``order`` and return the model's choice.

    ``order[i]`` is the index into ``options`` shown at position i (None: as given).
    ``chat`` (default: True when a ``system`` prompt is given) sends a
    `models.chat.Dialogue` (system + user turn) that the backend renders with the model's
    chat template; otherwise a plain-text prompt ending in ``"Answer:"``. The choice is
    the letter with the highest log-probability under ``backend.score_options``.
    """
    n = len(options)
    if not 2 <= n <= len(LETTERS):
        raise InputError(f"a multiple-choice question needs 2..{len(LETTERS)} options, got {n}")
    if len(set(options)) != n:
        raise InputError(f"duplicate option texts in {list(options)}: each option must be distinct")
    use_chat = bool(system) if chat is None else chat
    presented = tuple(options[i] for i in _check_order(order, n))
    prompt = build_prompt(question, presented, system, use_chat)
    scores = np.asarray(backend.score_options(prompt, letter_continuations(n, use_chat)), dtype=float)
    if scores.shape != (n,):
        raise InputError(
            f"backend.score_options returned shape {scores.shape} for {n} options: expected ({n},)"
        )
    position = int(np.argmax(scores))
    return MCQAnswer(
        position=position,
        letter=LETTERS[position],
        label=presented[position],
        presented=presented,
        logprobs=tuple(float(s) for s in scores),
        chat=use_chat,
    )
