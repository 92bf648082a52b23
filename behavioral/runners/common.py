"""Asking a model a lettered multiple-choice question through the `Backend` protocol.

Why letters scored by log-probability: comparing the full option texts' log-probs favours
short or frequent strings, while one letter per option gives every option a one-token
continuation of equal length, so the comparison is about the choice and nothing else.

The leading-space issue: BPE tokenizers (GPT-2 style, SmolLM2) encode " A" (with its
space) as one token that differs from "A", and what follows a chat template's assistant
header ("assistant\n" in ChatML, "assistant:" in the plain fallback layout) differs
between models. So every prompt ends in ``"Answer:"`` — plain prompts literally, chat
prompts through an assistant *prefill* message "Answer:" (the backend renders a dialogue
ending in an assistant message up to the end of that message) — and the continuations
are always ``" A"``, ``" B"``, ...: one natural token after a colon, whatever the template.

No torch here: the backend is whatever object implements ``score_options``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from liedar.core._util.serial import Serial
from liedar.core.errors import InputError
from liedar.models.backend import Backend

if TYPE_CHECKING:  # `behavioral` never imports `models` at import time (team contract)
    from liedar.models.chat import Dialogue

LETTERS = "ABCDEFGHIJ"
ANSWER_INSTRUCTION = "Answer with the letter of the correct option only."
ANSWER_PREFIX = "Answer:"


@dataclass(frozen=True)
class MCQAnswer(Serial):
    """The model's choice on one presentation of a multiple-choice question."""

    position: int  # chosen position in the presented order (0 = "A")
    letter: str
    label: str  # the chosen option's semantic label (its text)
    presented: tuple[str, ...]  # option labels in the order shown
    logprobs: tuple[float, ...]  # log-prob of each letter, by presented position
    chat: bool  # True when asked through the chat template

    key_order = (..., "probabilities", "chat")

    @property
    def probabilities(self) -> tuple[float, ...]:
        """Letter probabilities renormalised over the offered letters."""
        lp = np.asarray(self.logprobs, dtype=float)
        p = np.exp(lp - lp.max())
        return tuple(float(x) for x in p / p.sum())


def letter_continuations(n_options: int, chat: bool = False) -> list[str]:
    """Letters to score: ``" A"``, ``" B"``, ... after a prompt ending in ``"Answer:"``
    (the default, used by `ask_multiple_choice` for plain and chat prompts alike), or bare
    ``"A"``, ``"B"``, ... (``chat=True``) right after a chat template's generation prompt,
    for callers that score the assistant turn's first token without a prefill."""
    prefix = "" if chat else " "
    return [prefix + LETTERS[i] for i in range(n_options)]


def format_question(question: str, presented: Sequence[str]) -> str:
    """The question followed by one lettered line per option."""
    lines = [f"Question: {question}"]
    lines += [f"{LETTERS[i]}. {text}" for i, text in enumerate(presented)]
    return "\n".join(lines)


def build_prompt(question: str, presented: Sequence[str], system: Optional[str], chat: bool) -> Union[str, "Dialogue"]:
    """A plain-text prompt ending in ``"Answer:"``, or a (system +) user dialogue (which
    `ask_multiple_choice` extends with the assistant prefill ``"Answer:"``)."""
    body = format_question(question, presented)
    if not chat:
        head = f"{system}\n\n" if system else ""
        return f"{head}{body}\n{ANSWER_PREFIX}"
    from liedar.models.chat import Dialogue, Message  # torch-free, but kept lazy by contract

    messages = [Message("system", system)] if system else []
    messages.append(Message("user", f"{body}\n{ANSWER_INSTRUCTION}", detect=True))
    return Dialogue.of(*messages)


def with_answer_prefill(prompt: Union[str, "Dialogue"]) -> Union[str, "Dialogue"]:
    """Dialogues get an assistant message ``"Answer:"`` so the letter follows a colon, as
    in plain prompts (the backend renders a dialogue ending in an assistant message up to
    the end of that message)."""
    if isinstance(prompt, str):
        return prompt
    from liedar.models.chat import Dialogue, Message

    return Dialogue(prompt.messages + (Message("assistant", ANSWER_PREFIX),))


def _check_order(order: Optional[Sequence[int]], n: int) -> list[int]:
    if order is None:
        return list(range(n))
    order = [int(i) for i in order]
    if sorted(order) != list(range(n)):
        raise InputError(f"order {order} is not a permutation of 0..{n - 1}: give each option index once")
    return order


def ask_multiple_choice(
    backend: Backend,
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
    `models.chat.Dialogue` (system + user turn + assistant prefill "Answer:") that the
    backend renders with the model's chat template; otherwise a plain-text prompt ending
    in ``"Answer:"``. The choice is
    the letter with the highest log-probability under ``backend.score_options``.
    """
    n = len(options)
    if not 2 <= n <= len(LETTERS):
        raise InputError(f"a multiple-choice question needs 2..{len(LETTERS)} options, got {n}")
    if len(set(options)) != n:
        raise InputError(f"duplicate option texts in {list(options)}: each option must be distinct")
    use_chat = bool(system) if chat is None else chat
    presented = tuple(options[i] for i in _check_order(order, n))
    prompt = with_answer_prefill(build_prompt(question, presented, system, use_chat))
    scores = np.asarray(backend.score_options(prompt, letter_continuations(n)), dtype=float)
    if scores.shape != (n,):
        raise InputError(f"backend.score_options returned shape {scores.shape} for {n} options: expected ({n},)")
    if not np.isfinite(scores).any():  # a served model whose reply named no option
        raise InputError(
            f"the model gave no answer to {question[:50]!r} (no option in its log-probs or reply; the reply is in "
            "the served journal); these trials need one choice each: use a server that returns log-probs"
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
