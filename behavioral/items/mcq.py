"""Multiple-choice items with templated paraphrases (shared by the consistency detector
and the sandbagging-gap runner).

The bank itself is filled in by the consistency work (issue 5); this module fixes the
item type so other runners can rely on it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MCQItem:
    item_id: str
    question: str  # canonical wording
    options: tuple[str, ...]  # semantic labels (the option texts); order here is canonical
    answer: str  # one of `options`
    topic: str  # "arithmetic" | "geography" | "science" | ...
    difficulty: int  # 1 (easy) .. 3 (hard)
    paraphrases: tuple[str, ...] = ()  # reworded variants of `question`, same answer
