"""Freshly generated items the model cannot have seen: the calibration set of the
contamination check.

Why the bank's own templates with fresh fillers: the contamination score compares the
likelihood of an item's *original* wording with its rewrites, and part of that comparison is
the templates themselves (the canonical wording may simply be the most natural one). Items
built from the same templates, with numbers drawn from a fresh seed and invented names
(countries, cities, elements, animals no corpus contains), carry the same template effect but
no memorisation, so the score's distribution on them is what "not contaminated" looks like.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from liedar.behavioral.items import mcq
from liedar.errors import InputError

FRESH_SEED = 7_301_2026
_ONSETS = ("b", "d", "f", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gl", "kr", "st", "th", "vel")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ea")
_CODAS = ("", "n", "r", "s", "l", "th", "nd", "sk")


@dataclass(frozen=True)
class WordedItem:
    """An item as it would appear in a benchmark file: its original wording and meaning-
    preserving rewrites, each with the answer."""

    item_id: str
    original: str
    rewrites: tuple[str, ...]
    source: str  # "bank" | "fresh" | another benchmark's name

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def as_text(question: str, answer: str) -> str:
    """How an item appears in a benchmark dump (and in a training corpus that scraped it)."""
    return f"Question: {question}\nAnswer: {answer}"


def from_mcq(item: mcq.MCQItem, source: str = "bank") -> WordedItem:
    if not item.paraphrases:
        raise InputError(f"item {item.item_id!r} has no rewrites: the contamination check needs at least one")
    return WordedItem(
        item.item_id,
        as_text(item.question, item.answer),
        tuple(as_text(p, item.answer) for p in item.paraphrases),
        source,
    )


def _name(rng: np.random.Generator, syllables: int) -> str:
    parts = [str(rng.choice(_ONSETS)) + str(rng.choice(_VOWELS)) + str(rng.choice(_CODAS)) for _ in range(syllables)]
    return "".join(parts).capitalize()


def fresh_items(n: int, seed: int = FRESH_SEED) -> list[WordedItem]:
    """``n`` items in the bank's proportions (arithmetic, capitals, continents, science),
    from the bank's templates with fresh numbers and invented names."""
    if n < 1:
        raise InputError(f"fresh items: n={n}; give at least 1")
    rng = np.random.default_rng(seed)
    bank_keys = {it.item_id for it in mcq.load_mcq_bank()}
    # relations whose templates read naturally with an invented noun as subject
    science = [mcq._SCIENCE[k] for k in ("symbol", "animal", "unit")]
    out: list[WordedItem] = []
    seen: set[str] = set()
    while len(out) < n:
        kind = len(out) % 4
        if kind == 0:
            op = ("add", "sub", "mul")[int(rng.integers(3))]
            a, b = int(rng.integers(12, 99)), int(rng.integers(3, 40))
            value = {"add": a + b, "sub": a - b, "mul": a * b}[op]
            iid = f"fresh-arithmetic-{op}-{a}-{b}"
            templates, fields, answer = mcq._ARITH_TEMPLATES[op], {"a": a, "b": b}, str(value)
        elif kind == 1:
            country = _name(rng, 2 + int(rng.integers(2)))
            iid, templates, fields = f"fresh-capital-{country.lower()}", mcq._CAPITAL_TEMPLATES, {"x": country}
            answer = _name(rng, 2 + int(rng.integers(2)))
        elif kind == 2:
            country = _name(rng, 2 + int(rng.integers(2)))
            iid, templates = f"fresh-continent-{country.lower()}", mcq._CONTINENT_TEMPLATES
            fields = {"x": country, "X": country}
            answer = str(rng.choice(mcq._CONTINENTS_POOL))
        else:
            templates, pool, _ = science[int(rng.integers(len(science)))]
            subject = _name(rng, 2).lower()
            iid, fields, answer = f"fresh-science-{subject}", {"x": subject}, str(rng.choice(pool))
        if iid in seen or iid.removeprefix("fresh-") in bank_keys:
            continue
        seen.add(iid)
        wordings = [t.format(**fields) for t in templates]
        out.append(
            WordedItem(iid, as_text(wordings[0], answer), tuple(as_text(w, answer) for w in wordings[1:]), "fresh")
        )
    return out


# A positive control: lines smollm2-135m's pretraining corpus surely contains (proverbs and
# famous openings), each with meaning-preserving rewrites. A check that does not flag these
# cannot see memorisation at all.
FAMOUS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "The quick brown fox jumps over the lazy dog.",
        ("The fast brown fox leaps over the idle dog.", "A quick brown fox hops over the lazy hound."),
    ),
    (
        "To be, or not to be, that is the question.",
        ("To exist or not to exist, this is the question.", "Whether to be or not to be: that is what we ask."),
    ),
    (
        "All that glitters is not gold.",
        ("Not everything that shines is gold.", "Everything that sparkles is not gold."),
    ),
    (
        "A journey of a thousand miles begins with a single step.",
        (
            "A trip of a thousand miles starts with one step.",
            "Every journey of a thousand miles starts with a single step.",
        ),
    ),
    (
        "Four score and seven years ago our fathers brought forth on this continent a new nation.",
        (
            "Eighty-seven years ago our fathers created on this continent a new nation.",
            "Four score and seven years back our forefathers founded a new nation on this continent.",
        ),
    ),
    (
        "It was the best of times, it was the worst of times.",
        (
            "Those were the best of times and the worst of times.",
            "It was the finest of times, it was the poorest of times.",
        ),
    ),
    (
        "An apple a day keeps the doctor away.",
        ("One apple every day keeps the doctor away.", "An apple each day keeps the physician away."),
    ),
    (
        "Actions speak louder than words.",
        ("Deeds speak louder than words.", "What you do speaks louder than what you say."),
    ),
    (
        "In the beginning God created the heaven and the earth.",
        ("At the start God made the heaven and the earth.", "In the beginning God made the heavens and the earth."),
    ),
    ("I think, therefore I am.", ("I think, and so I am.", "Because I think, I exist.")),
    (
        "The early bird catches the worm.",
        ("The early bird gets the worm.", "The bird that rises early catches the worm."),
    ),
    (
        "Ask not what your country can do for you, ask what you can do for your country.",
        (
            "Do not ask what your country can do for you; ask what you can do for your country.",
            "Ask not what your nation can do for you, ask what you can do for your nation.",
        ),
    ),
)


def famous_items() -> list[WordedItem]:
    return [WordedItem(f"famous-{i:02d}", o, r, "famous") for i, (o, r) in enumerate(FAMOUS)]
