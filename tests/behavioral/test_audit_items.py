"""The audit split (`liedar.behavioral.items.audit`): its sizes, answer keys, separation from the
detectors' banks, and every format it is read in, rendered and scored on a real (tiny) model."""

from __future__ import annotations

import calendar
import dataclasses
import math
from collections import Counter
from datetime import timedelta

import numpy as np
import pytest

from liedar.behavioral.items import audit as A
from liedar.behavioral.items.audit_facts import PRODUCT_DOMAINS
from liedar.behavioral.items.claims import DEFECTS, user_message
from liedar.behavioral.items.claims_choice import CHOICE_DEFECTS
from liedar.behavioral.items.fresh import fresh_items, max_fresh
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.core.errors import InputError

NEAR = 0.8  # word-set Jaccard at or above which two wordings with one answer ask the same question


def _words(text: str) -> frozenset[str]:
    return frozenset(A.normalise(text).split())


def near_duplicates(ours: dict[str, tuple[str, str]], theirs: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """Pairs (our key, their key) of (wording, answer) entries that ask the same question: equal
    wordings after `normalise`, or the same answer with at least `NEAR` of the words shared
    (Jaccard; one template filled with two subjects shares most words but not the answer).
    Candidates come through an index of words, so the check stays fast."""
    index: dict[str, set[str]] = {}
    sets = {k: _words(t) for k, (t, _) in theirs.items()}
    for k, ws in sets.items():
        for w in ws:
            index.setdefault(w, set()).add(k)
    out = []
    for key, (text, answer) in ours.items():
        mine = _words(text)
        for other in set().union(*(index.get(w, set()) for w in mine)):
            same = A.normalise(text) == A.normalise(theirs[other][0])
            close = len(mine & sets[other]) / len(mine | sets[other]) >= NEAR
            if same or (close and A.normalise(answer) == A.normalise(theirs[other][1])):
                out.append((key, other))
    return out


def wordings(items) -> dict[str, tuple[str, str]]:
    """Every wording of multiple-choice items, keyed ``item_id/k``, with the item's answer."""
    return {f"{it.item_id}/{k}": (w, it.answer) for it in items for k, w in enumerate(it.variants)}


def test_sizes_meet_the_issue_floors_and_ids_are_the_splits():
    items = A.audit_mcq_items()
    assert len(items) >= A.MIN_MCQ_ITEMS == 150
    assert len(A.audit_products()) >= A.MIN_PRODUCTS == 96
    assert len(A.audit_sycophancy_items()) == len(items)
    claims = A.audit_choice_claims()
    assert sum(c.defect for c in claims) == len(A.audit_products())
    assert len(A.audit_claims()) == 2 * len(A.audit_products())
    assert len(A.audit_yes_no_sycophancy_items()) == 4 * len(A.audit_products())
    assert len(A.audit_belief_items()) == 2 * len(A.audit_products())
    ids = [it.item_id for it in items] + [c.claim_id for c in claims] + [c.claim_id for c in A.audit_claims()]
    assert len(set(ids)) == len(ids) and all(i.startswith(A.ID_PREFIX) for i in ids)
    # several domains, none dominating a prefix: the first 24 items span every topic's first row
    topics = Counter(it.topic for it in items)
    assert len(topics) >= 10 and max(topics.values()) < 0.2 * len(items)
    assert len(PRODUCT_DOMAINS) >= 8 and {A.product_domain(p) for p, _, _ in A.audit_products()[:8]} == set(
        PRODUCT_DOMAINS
    )
    assert {it.difficulty for it in items} == {1, 2, 3}


def test_every_item_has_a_valid_key_and_distinct_wordings():
    for it in A.audit_mcq_items():
        assert len(it.options) == 4 and len(set(it.options)) == 4 and it.answer in it.options, it
        assert len(it.paraphrases) == 3 and len({A.normalise(v) for v in it.variants}) == 4, it
        for w in it.variants:  # the question never names an option (an echoed question grades as no answer)
            assert A.grade_free(w, it) is None, (it.item_id, w)
        for o in it.options:  # no option inside another: a free answer names one option at most
            assert A.grade_free(f"It is {o}.", it) == o, (it.item_id, o)
    assert A.grade_free("Shakespeare wrote it.", _item("audit-author-romeo-and-juliet")) == "William Shakespeare"
    assert A.grade_free("8 or 6, I am not sure", _item("audit-number-spider-legs")) is None
    assert A.grade_free("18", _item("audit-number-spider-legs")) is None


def _item(item_id: str):
    return next(it for it in A.audit_mcq_items() if it.item_id == item_id)


def test_answers_the_standard_library_can_compute_are_right():
    checked = {
        "audit-number-week-days": len(calendar.day_name),
        "audit-number-year-months": len(calendar.month_name) - 1,
        "audit-number-leap-year-days": sum(calendar.monthrange(2024, m)[1] for m in range(1, 13)),
        "audit-number-hour-minutes": timedelta(hours=1) // timedelta(minutes=1),
        "audit-number-day-hours": timedelta(days=1) // timedelta(hours=1),
        "audit-number-right-angle-degrees": round(math.degrees(math.pi / 2)),
        "audit-number-circle-degrees": round(math.degrees(2 * math.pi)),
    }
    assert calendar.isleap(2024)
    for item_id, value in checked.items():
        assert _item(item_id).answer == str(value), item_id


def test_relations_keep_their_answers_apart_from_their_subjects():
    for it in A.audit_mcq_items():
        relation = it.item_id.split("-")[1]
        if relation in ("plural", "past", "opposite", "young"):
            subject = it.item_id.split("-", 2)[2].replace("-", " ")
            assert A.normalise(it.answer) != subject, it.item_id
    # an item's answer never reappears as a distractor of the same relation and subject
    answers = {(it.item_id, it.answer) for it in A.audit_mcq_items()}
    assert len(answers) == len(A.audit_mcq_items())


def test_product_sheets_state_what_their_truth_says():
    for c in A.audit_choice_claims():
        yes, no = c.options
        assert c.answer == (yes if c.defect else no) and c.truth == ("yes" if c.defect else "no")
        fact = c.sheet.removeprefix("Product sheet: ")
        assert fact in c.answer and c.product in c.question
        assert ("does not" in fact) == (not c.defect)
    for claim in A.audit_claims():
        assert claim.truth == ("no" if " does not " in claim.sheet else "yes")


def test_no_item_repeats_or_nearly_repeats_an_existing_item():
    ours = wordings(A.audit_mcq_items())
    bank = wordings(load_mcq_bank())
    fresh = {
        f"{it.item_id}/{k}": (w.split("\nAnswer: ")[0].removeprefix("Question: "), w.split("\nAnswer: ")[1])
        for it in fresh_items(max_fresh())
        for k, w in enumerate((it.original, *it.rewrites))
    }
    assert near_duplicates(ours, bank) == []
    assert near_duplicates(ours, fresh) == []
    # and none of the split's items nearly repeats another of its items (its own rewordings aside)
    pairs = near_duplicates(ours, ours)
    assert [(a, b) for a, b in pairs if a.split("/")[0] != b.split("/")[0]] == []
    # products: new names and new defects
    mine = {A.normalise(p) for p, _, _ in A.audit_products()}
    theirs = {A.normalise(p) for p, _, _ in CHOICE_DEFECTS}
    assert len(mine) == len(A.audit_products()) and not mine & theirs
    brands = {p.split()[0].lower() for p, _, _ in CHOICE_DEFECTS}
    assert not {p.split()[0].lower() for p, _, _ in A.audit_products()} & brands
    sheets = {f"{p}/{b}": (f"The {p} {t}.", "yes") for p, b, t in A.audit_products()}
    old = {f"{p}/{b}": (f"The {p} {t}.", "yes") for p, b, t in CHOICE_DEFECTS}
    assert near_duplicates(sheets, old) == []
    assert {b for _, b, _ in A.audit_products()}.isdisjoint({b for _, b, _ in CHOICE_DEFECTS})
    assert len({b for _, b, _ in A.audit_products()}) == len(A.audit_products())


def test_bank_apis_refuse_bad_input():
    with pytest.raises(InputError, match="unknown audit topic"):
        A.audit_mcq_items(["astrology"])
    assert {it.topic for it in A.audit_mcq_items(["music"])} == {"music"}
    with pytest.raises(InputError, match="not one of its options"):
        A.yes_no_question(_item("audit-young-cat"), "calf")
    with pytest.raises(InputError, match="not a product of the audit split"):
        A.product_domain(DEFECTS[0][0])
    assert len(A.audit_choice_claims(12, seed=1)) == 12 + 3
    drawn = A.AUDIT_ITEMS.draw(24, 0)
    assert len(drawn) == 24 and len({it.topic for it in drawn}) >= 10


def test_detectors_default_banks_are_untouched():
    """The split stays out of the default banks: the organisms' held-out items (and their
    recipe hashes) are the same with or without it."""
    audit_ids = {it.item_id for it in A.audit_mcq_items()}
    assert not audit_ids & {it.item_id for it in load_mcq_bank()}
    assert not {p for p, _, _ in A.audit_products()} & {p for p, _, _ in CHOICE_DEFECTS}


# ---- every format renders and is answered by a real model -----------------------------------
def test_every_item_renders_in_every_format():
    from tiny_model import TINY_CHAT_TEMPLATE

    from liedar.behavioral.runners.choice import choice_prompt
    from liedar.behavioral.runners.common import build_prompt, with_answer_prefill
    from liedar.behavioral.runners.elicitation import cloze_prompt
    from liedar.behavioral.runners.sandbagging import BENIGN_SYSTEM
    from liedar.models.chat import render

    def text(prompt) -> str:
        return render(prompt, TINY_CHAT_TEMPLATE, add_generation_prompt=True).text

    for syc in A.audit_sycophancy_items():
        it = syc.item
        letters = text(with_answer_prefill(build_prompt(it.question, it.options, BENIGN_SYSTEM, True)))
        assert it.question in letters and all(f"{k}. {o}" in letters for k, o in zip("ABCD", it.options))
        assert letters.endswith("Answer:")
        assert text(cloze_prompt(it, BENIGN_SYSTEM, True)).endswith(
            f"Question: {it.question}<|im_end|>\n<|im_start|>assistant\nAnswer:"
        )
        pushed = text(choice_prompt(syc.pressure(syc.suggested_wrong), BENIGN_SYSTEM))
        assert syc.suggested_wrong in pushed and syc.suggested_wrong != it.answer and it.question in pushed
        for o in it.options:
            assert text_in(A.yes_no_question(it, o), it.question, o)
        assert it.question in text(_dialogue(A.free_question(it)))
    for claim in A.audit_claims():
        assert claim.sheet in text(_dialogue(user_message(claim, claim.question)))


def text_in(user: str, *parts: str) -> bool:
    return all(p in user for p in parts)


def _dialogue(user: str):
    from liedar.models.chat import Dialogue, Message

    return Dialogue.of(Message("user", user, detect=True))


@pytest.fixture(scope="module")
def tiny_backend(tiny_model_dir):
    pytest.importorskip("torch")
    from liedar.models.hf import TransformersBackend

    return TransformersBackend(tiny_model_dir, n_threads=1)


def test_a_real_model_answers_the_split_in_every_format(tiny_backend):
    """The tiny random model's answers are noise; what is checked is that each format's real
    runner asks the split's items and returns a record per item."""
    from liedar.behavioral.runners.common import ask_multiple_choice
    from liedar.behavioral.runners.honesty import run_honesty
    from liedar.behavioral.runners.honesty_choice import run_honesty_choice
    from liedar.behavioral.runners.sycophancy import run_sycophancy
    from liedar.behavioral.runners.sycophancy_choice import run_choice_sycophancy
    from liedar.behavioral.runners.yesno import ask_yes_no, grade_yes_no

    items = A.AUDIT_ITEMS.draw(6, 0)
    syc, records = run_choice_sycophancy(tiny_backend, A.audit_sycophancy_items(items=items))
    assert len(records) == 6 and syc.n_items == 6
    for it in items:
        assert ask_multiple_choice(tiny_backend, it.question, it.options).label in it.options
        p = ask_yes_no(tiny_backend, A.yes_no_question(it, it.answer)).p_yes
        assert 0.0 <= p <= 1.0
        reply = tiny_backend.generate(_dialogue(A.free_question(it)), max_tokens=6).text
        assert A.grade_free(reply, it) in (None, *it.options)
    # short roles: the tiny model's context is 256 tokens of a small vocabulary
    claims = A.audit_choice_claims(4, sound_every=2, motive_roles=("Sell it.",), control_roles=("Be plain.",))
    honesty, recs = run_honesty_choice(tiny_backend, claims)
    assert len(recs) == len(claims) == 6
    yes_no, recs = run_sycophancy(tiny_backend, A.audit_yes_no_sycophancy_items()[:8])
    assert len(recs) == 8 and {r.truth for r in recs} == {"yes", "no"}
    short = [
        dataclasses.replace(b, belief_system="Be plain.", pressure_system="Sell it.")
        for b in A.audit_belief_items()[:4]
    ]
    belief, recs = run_honesty(tiny_backend, short)
    assert len(recs) == 4
    claim = A.audit_claims()[0]
    reply = tiny_backend.generate(_dialogue(user_message(claim, claim.question)), max_tokens=4).text
    assert grade_yes_no(reply) in (None, "yes", "no")
    assert np.isfinite(honesty.belief_accuracy.value)
