"""Which items every registered instrument asks, pinned by id for a few seeds and limits.

Why pinned: the CLI, the demo and saved runs rely on `Instrument.items` drawing the same
items in the same order for the same seed and limit; a change to how an instrument declares
its items (its bank, sampling, grouping, default limit) must not move a single id.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from liedar.behavioral.registry import get

MCQ_SEED_0 = [
    "arithmetic-sub-52-13",
    "geography-capital-the-united-kingdom",
    "geography-capital-nigeria",
    "science-animal-platypus",
    "science-planet-has-the-hottest-surface",
]
MCQ_SEED_7 = [
    "arithmetic-add-9-2",
    "geography-capital-japan",
    "geography-capital-turkey",
    "science-symbol-carbon",
    "science-symbol-helium",
]
MENUS = ["support_triage", "alert_routing", "content_moderation", "job_screening", "procurement"]

# (instrument, limit, seed, options, ids in the order asked)
PINNED: list[tuple[str, int, int, dict[str, Any], list[str]]] = [
    *[(name, 5, 0, {}, MCQ_SEED_0) for name in ("gap", "noise", "observer", "contamination", "verbalized")],
    *[(name, 5, 7, {}, MCQ_SEED_7) for name in ("gap", "noise", "observer", "contamination", "verbalized")],
    ("menus", 5, 0, {}, MENUS),
    ("menus", 5, 7, {}, MENUS),
    ("menus", 2, 0, {"scenarios": ["procurement"]}, ["procurement"]),
    (
        "consistency",
        5,
        0,
        {},
        [
            "arithmetic-mul-22-3",
            "geography-capital-italy",
            "geography-capital-morocco",
            "geography-continent-moldova",
            "science-unit-length",
        ],
    ),
    (
        "consistency",
        5,
        7,
        {},
        [
            "geography-continent-ghana",
            "geography-continent-laos",
            "science-symbol-gold",
            "science-unit-electric-current",
            "science-organ-takes-in-oxygen-when-we-breathe",
        ],
    ),
    (
        "consistency",
        4,
        2,
        {"topics": ["geography"]},
        [
            "geography-capital-spain",
            "geography-capital-sweden",
            "geography-capital-portugal",
            "geography-continent-mongolia",
        ],
    ),
    (
        "sycophancy",
        5,
        0,
        {},
        ["sound-02-suggest-yes", "sound-02-suggest-no", "defect-18-suggest-yes", "defect-18-suggest-no"],
    ),
    (
        "sycophancy",
        5,
        7,
        {},
        ["sound-10-suggest-yes", "sound-10-suggest-no", "defect-15-suggest-yes", "defect-15-suggest-no"],
    ),
    (
        "sycophancy",
        7,
        3,
        {},
        [
            "sound-06-suggest-yes",
            "sound-06-suggest-no",
            "defect-12-suggest-yes",
            "defect-12-suggest-no",
            "defect-13-suggest-yes",
            "defect-13-suggest-no",
        ],
    ),
    (
        "sycophancy_choice",
        5,
        0,
        {},
        [
            f"{i}|{w}|{k}"
            for i, w, k in zip(MCQ_SEED_0, ("40", "Berlin", "Lagos", "amphibian", "Saturn"), (0, 1, 2, 3, 0))
        ],
    ),
    (
        "sycophancy_choice",
        5,
        7,
        {},
        [f"{i}|{w}|{k}" for i, w, k in zip(MCQ_SEED_7, ("14", "Dublin", "Rome", "O", "K"), (0, 1, 2, 3, 0))],
    ),
    (
        "negation",
        5,
        0,
        {},
        ["neutral-defect-04", "neutral-defect-18", "neutral-defect-21", "costly-defect-02", "costly-defect-13"],
    ),
    (
        "negation",
        5,
        7,
        {},
        ["neutral-defect-04", "neutral-defect-15", "costly-defect-02", "costly-defect-08", "costly-defect-10"],
    ),
    ("honesty", 5, 0, {}, ["sound-02", "defect-04", "sound-13", "defect-18", "defect-21"]),
    ("honesty", 5, 7, {}, ["sound-02", "defect-04", "sound-08", "sound-10", "defect-15"]),
    (
        "honesty_choice",
        5,
        0,
        {},
        [
            "defect-choice-14|defect",
            "defect-choice-25|defect",
            "defect-choice-34|defect",
            "defect-choice-39|defect",
            "sound-choice-14|sound",
        ],
    ),
    (
        "honesty_choice",
        5,
        7,
        {},
        [
            "defect-choice-02|defect",
            "defect-choice-03|defect",
            "defect-choice-30|defect",
            "defect-choice-35|defect",
            "sound-choice-02|sound",
        ],
    ),
    (
        "honesty_choice",
        9,
        1,
        {"sound_every": 2},
        [
            "defect-choice-20|defect",
            "defect-choice-21|defect",
            "defect-choice-24|defect",
            "defect-choice-36|defect",
            "defect-choice-39|defect",
            "defect-choice-41|defect",
            "sound-choice-20|sound",
            "sound-choice-24|sound",
            "sound-choice-39|sound",
        ],
    ),
    (
        "contamination",
        6,
        3,
        {"bank": "famous"},
        ["famous-00", "famous-01", "famous-02", "famous-07", "famous-10", "famous-11"],
    ),
]

# (instrument, items asked without a limit, digest of their ids in order): the whole bank, or the default limit
WITHOUT_LIMIT: list[tuple[str, int, str]] = [
    ("consistency", 30, "10c3b08e9e961e7c"),
    ("menus", 5, "3cad0438ef6f7027"),
    *[(name, 131, "d55ebf932a5f22c1") for name in ("gap", "noise", "observer", "contamination", "verbalized")],
    ("sycophancy", 96, "57e59cd44d98b17d"),
    ("sycophancy_choice", 40, "f48457b0c256d167"),
    ("negation", 48, "7264c7fdc2147a2e"),
    ("honesty", 48, "a9bc0fcd58fad0f9"),
    ("honesty_choice", 45, "1ce427e68c2b985d"),
]


def key(item: Any) -> str:
    """An item's identity as pinned: its id, plus what the draw decides beyond the id."""
    if isinstance(item, str):  # menus: scenario keys
        return item
    if hasattr(item, "suggested_wrong"):  # choice sycophancy: the seeded wrong option and wording
        return f"{item.item_id}|{item.suggested_wrong}|{item.wording}"
    if hasattr(item, "claim_id"):  # choice belief vs assertion: a defect or a sound sheet
        return f"{item.claim_id}|{'defect' if item.defect else 'sound'}"
    return getattr(item, "item_id", None) or item.pair_id


@pytest.mark.parametrize(("name", "limit", "seed", "options", "ids"), PINNED)
def test_items_for_a_seed_and_limit_are_pinned(name, limit, seed, options, ids) -> None:
    assert [key(it) for it in get(name).items(limit=limit, seed=seed, **options)] == ids


@pytest.mark.parametrize(("name", "n", "digest"), WITHOUT_LIMIT)
def test_items_without_a_limit_are_pinned(name, n, digest) -> None:
    keys = [key(it) for it in get(name).items(limit=None, seed=0)]
    assert (len(keys), hashlib.sha256("\n".join(keys).encode()).hexdigest()[:16]) == (n, digest)


def test_without_a_limit_an_instrument_asks_its_default_limit() -> None:
    """``--limit``'s help names ``default_limit`` as the default: no limit must ask exactly those items."""
    from liedar.behavioral.registry import instruments

    declared = [i for i in instruments().values() if i.needs_model and i.default_limit is not None]
    assert {i.name for i in declared} >= {"consistency", "sycophancy_choice", "honesty_choice"}
    for inst in declared:
        assert [key(it) for it in inst.items(seed=3)] == [
            key(it) for it in inst.items(limit=inst.default_limit, seed=3)
        ]
