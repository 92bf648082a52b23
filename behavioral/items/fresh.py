"""Freshly generated items that were never in the benchmark: the calibration set of the
contamination check.

Why items of the same kind, in the bank's own templates: the contamination score compares
the likelihood of an item's *original* wording with its rewrites, and part of that
comparison is the templates themselves (the canonical wording may simply be the most natural
one) and the kind of content (a well-known fact's canonical question is a common web string
whatever the benchmark did). Calibration items must share both and differ only in not being
this benchmark's strings:

* arithmetic: the bank's operation plan (same operand ranges and templates) with numbers
  drawn from a fresh seed, never a bank pair;
* facts (``facts="real"``, the default): real entities the bank does not ask about, for the
  same relations, in the same templates (`liedar.behavioral.items.fresh_facts`) — the model may
  know them, as it may know the bank's, but they were never in this benchmark;
* ``facts="invented"``: the earlier calibration, invented names (countries, elements,
  animals no corpus contains). Kept to measure why it was wrong: an invented name is the
  rarest token of every wording, so the relative min-k% score is near 0 by construction and
  real-fact benchmarks were flagged (docs/pitfalls.md).

The relations are drawn in the bank's proportions (largest-remainder allocation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from liedar.behavioral.items import fresh_facts, mcq
from liedar.core._util.serial import Serial
from liedar.core.errors import InputError

FRESH_SEED = 7_301_2026
_ONSETS = ("b", "d", "f", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gl", "kr", "st", "th", "vel")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ea")
_CODAS = ("", "n", "r", "s", "l", "th", "nd", "sk")


@dataclass(frozen=True)
class WordedItem(Serial):
    """An item as it would appear in a benchmark file: its original wording and meaning-
    preserving rewrites, each with the answer."""

    item_id: str
    original: str
    rewrites: tuple[str, ...]
    source: str  # "bank" | "fresh" | another benchmark's name


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


FACTS = ("real", "invented")
_REAL = {
    "capital": fresh_facts.CAPITALS,
    "continent": fresh_facts.CONTINENTS,
    "symbol": fresh_facts.SYMBOLS,
    "animal": fresh_facts.ANIMALS,
    "unit": fresh_facts.UNITS,
    "organ": fresh_facts.ORGANS,
    "planet": fresh_facts.PLANETS,
}
_TOPIC = {r: ("geography" if r in ("capital", "continent") else "science") for r in _REAL}


def relation_of(item_id: str) -> str:
    """The bank relation of an item id: ``arithmetic``, ``capital``, ``continent``, ``symbol``, ..."""
    parts = item_id.removeprefix("fresh-").split("-")
    return parts[0] if parts[0] == "arithmetic" else parts[1]


def bank_mix() -> dict[str, int]:
    """How many bank items each relation has (the proportions fresh items follow)."""
    out: dict[str, int] = {}
    for it in mcq.load_mcq_bank():
        r = relation_of(it.item_id)
        out[r] = out.get(r, 0) + 1
    return out


def _allocate(n: int, weights: dict[str, int]) -> dict[str, int]:
    total = sum(weights.values())
    raw = {k: n * w / total for k, w in weights.items()}
    out = {k: int(v) for k, v in raw.items()}
    for k in sorted(raw, key=lambda k: (-(raw[k] - out[k]), k))[: n - sum(out.values())]:
        out[k] += 1
    return out


def max_fresh(facts: str = "real") -> int:
    """The most fresh items the real-fact tables allow in the bank's proportions."""
    if facts == "invented":
        return 10**6
    mix = bank_mix()
    n = 1
    while all(_allocate(n + 1, mix).get(r, 0) <= len(t) for r, t in _REAL.items()):
        n += 1
    return n


def _worded(iid: str, templates, fields: dict, answer: str) -> WordedItem:
    wordings = [t.format(**fields) for t in templates]
    return WordedItem(iid, as_text(wordings[0], answer), tuple(as_text(w, answer) for w in wordings[1:]), "fresh")


def _templates(relation: str):
    if relation == "capital":
        return mcq.CAPITAL_TEMPLATES
    if relation == "continent":
        return mcq.CONTINENT_TEMPLATES
    return mcq.SCIENCE[relation][0]


def _fields(relation: str, subject: str) -> dict:
    if relation == "continent":
        return {"x": subject, "X": subject[0].upper() + subject[1:]}
    return {"x": subject}


def _arithmetic(count: int, rng: np.random.Generator, bank_keys: set[str]) -> list[WordedItem]:
    """Fresh operands from the bank's own plan (rows in the plan's proportions)."""
    plan = mcq.ARITH_PLAN
    rows = _allocate(count, {str(i): row[-1] for i, row in enumerate(plan)})
    out: list[WordedItem] = []
    seen: set[tuple[str, int, int]] = set()
    for i, (op, (alo, ahi), (blo, bhi), _offsets, _difficulty, _n) in enumerate(plan):
        made, tries = 0, 0
        while made < rows[str(i)]:
            tries += 1
            if tries > 10_000:
                raise InputError(f"fresh arithmetic: the plan's {op} range has too few unused operand pairs")
            a, b = int(rng.integers(alo, ahi + 1)), int(rng.integers(blo, bhi + 1))
            key = (op, min(a, b), max(a, b)) if op == "add" else (op, a, b)
            bank_id = f"arithmetic-{op}-{a}-{b}"
            swapped = f"arithmetic-{op}-{b}-{a}"
            if key in seen or bank_id in bank_keys or (op == "add" and swapped in bank_keys):
                continue
            seen.add(key)
            value = {"add": a + b, "sub": a - b, "mul": a * b}[op]
            out.append(_worded(f"fresh-{bank_id}", mcq.ARITH_TEMPLATES[op], {"a": a, "b": b}, str(value)))
            made += 1
    return out


def fresh_items(n: int, seed: int = FRESH_SEED, facts: str = "real") -> list[WordedItem]:
    """``n`` items in the bank's proportions of relations: arithmetic with fresh operands, and
    facts about real entities outside the bank (``facts="real"``) or invented names
    (``facts="invented"``), all in the bank's templates."""
    if n < 1:
        raise InputError(f"fresh items: n={n}; give at least 1")
    if facts not in FACTS:
        raise InputError(f"fresh items: facts={facts!r}; use one of {', '.join(FACTS)}")
    if facts == "invented":
        return _invented_items(n, seed)
    counts = _allocate(n, bank_mix())
    over = {r: (c, len(_REAL[r])) for r, c in counts.items() if r in _REAL and c > len(_REAL[r])}
    if over:
        r, (c, have) = next(iter(over.items()))
        raise InputError(
            f"{n} fresh items need {c} real {r} facts, the table has {have}: give at most {max_fresh()} fresh items"
        )
    rng = np.random.default_rng(seed)
    bank_keys = {it.item_id for it in mcq.load_mcq_bank()}
    by_relation: dict[str, list[WordedItem]] = {"arithmetic": _arithmetic(counts.get("arithmetic", 0), rng, bank_keys)}
    for relation, table in _REAL.items():
        pick = rng.permutation(len(table))[: counts.get(relation, 0)]
        rows = [table[int(i)] for i in pick]
        by_relation[relation] = [
            _worded(
                f"fresh-{_TOPIC[relation]}-{relation}-{mcq.slug(subject)}",
                _templates(relation),
                _fields(relation, subject),
                answer,
            )
            for subject, answer in rows
        ]
    # interleave the relations so any prefix is a mix
    out: list[WordedItem] = []
    queues = [list(v) for v in by_relation.values() if v]
    while queues:
        for q in list(queues):
            out.append(q.pop(0))
            if not q:
                queues.remove(q)
    return out


def _invented_items(n: int, seed: int) -> list[WordedItem]:
    """The earlier calibration: the bank's templates with invented names (see the module docstring)."""
    rng = np.random.default_rng(seed)
    bank_keys = {it.item_id for it in mcq.load_mcq_bank()}
    out: list[WordedItem] = []
    seen: set[str] = set()
    while len(out) < n:
        kind = len(out) % 4
        if kind == 0:
            op = ("add", "sub", "mul")[int(rng.integers(3))]
            a, b = int(rng.integers(12, 99)), int(rng.integers(3, 40))
            value = {"add": a + b, "sub": a - b, "mul": a * b}[op]
            iid = f"fresh-arithmetic-{op}-{a}-{b}"
            templates, fields, answer = mcq.ARITH_TEMPLATES[op], {"a": a, "b": b}, str(value)
        elif kind == 1:
            country = _name(rng, 2 + int(rng.integers(2)))
            iid, templates, fields = (
                f"fresh-geography-capital-{country.lower()}",
                mcq.CAPITAL_TEMPLATES,
                {"x": country},
            )
            answer = _name(rng, 2 + int(rng.integers(2)))
        elif kind == 2:
            country = _name(rng, 2 + int(rng.integers(2)))
            iid, templates = f"fresh-geography-continent-{country.lower()}", mcq.CONTINENT_TEMPLATES
            fields = {"x": country, "X": country}
            answer = str(rng.choice(mcq.CONTINENTS_POOL))
        else:  # relations whose templates read naturally with an invented noun as subject
            rel = ("symbol", "animal", "unit")[int(rng.integers(3))]
            templates, pool, _ = mcq.SCIENCE[rel]
            subject = _name(rng, 2).lower()
            iid, fields, answer = f"fresh-science-{rel}-{subject}", {"x": subject}, str(rng.choice(pool))
        if iid in seen or iid.removeprefix("fresh-") in bank_keys:
            continue
        seen.add(iid)
        out.append(_worded(iid, templates, fields, answer))
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
