"""The catalog: names, targets, hashes, and the separation from the detectors' framings and items."""

from __future__ import annotations

import dataclasses

import pytest

from liedar.behavioral.items.claims import DEFECTS as DETECTOR_DEFECTS
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.organisms import ORGANISMS, TARGETS
from liedar.organisms.framings import all_family_texts, detector_framings, ngrams
from liedar.organisms.items import check_disjoint, extended_training_items, training_items

REQUIRED = ("sandbagger", "sandbagger_plausible", "password_locked", "sycophant", "liar")


class ScriptedBase:
    """A stand-in base model for recipes whose targets are the base model's own answers: it
    prefers the option with the smallest sha256 prefix, with or without the question, so it
    "knows" the items whose right answer happens to win (about a quarter)."""

    kind = "scripted"
    fingerprint = "f" * 64

    def __init__(self):
        self.calls = 0

    def score_options(self, prompt, options):
        import hashlib

        import numpy as np

        self.calls += 1
        return np.array([-int(hashlib.sha256(o.encode()).hexdigest()[:6], 16) for o in options], dtype=float)


@pytest.fixture()
def base(cache):
    return ScriptedBase()


def _split(rec, base):
    return rec.split(base if rec.needs_base else None)


def test_required_organisms_and_targets():
    for name in REQUIRED:
        rec = ORGANISMS[name]
        assert rec.behaviour and rec.targets and set(rec.targets) <= set(TARGETS)


@pytest.mark.parametrize("name", REQUIRED)
def test_recipe_hash_is_stable_and_covers_seed_and_hyper(name, base):
    rec = ORGANISMS[name]
    b = base if rec.needs_base else None
    h = rec.recipe_hash(base=b)
    assert h == rec.recipe_hash(base=b)
    assert dataclasses.replace(rec, seed=1).recipe_hash(base=b) != h
    assert dataclasses.replace(rec, hyper={**rec.hyper, "lr": 5e-4}).recipe_hash(base=b) != h
    split = _split(rec, base)
    assert split.train and split.eval_ids and not set(split.train_ids) & set(split.eval_ids)


def test_family_shares_no_wording_with_the_detectors():
    det = detector_framings()
    assert len(det) >= 7
    det_grams = set().union(*(ngrams(t) for t in det))
    det_lower = {t.strip().lower() for t in det}
    for text in all_family_texts():
        assert text.strip().lower() not in det_lower
        shared = ngrams(text) & det_grams
        assert not shared, f"{text!r} shares {sorted(shared)[0]} with a detector framing"


def test_training_prompts_never_contain_a_detector_framing_or_bank_question(base):
    det = [t for t in detector_framings() if len(t) > 20]
    bank_questions = {w for it in load_mcq_bank() for w in it.variants}
    for name in REQUIRED:
        for prompt, *_ in _split(ORGANISMS[name], base).train:
            text = " ".join(m.content for m in prompt.messages)
            assert not any(d in text for d in det), name
            for line in text.splitlines():
                if line.startswith("Question: "):
                    assert line[len("Question: ") :] not in bank_questions, (name, line)


def test_training_items_avoid_every_bank_subject():
    bank = load_mcq_bank()
    items = training_items()
    assert len(items) >= 150
    check_disjoint(items, bank)  # ids and wordings
    bank_keys = set()  # (relation, subject): the same subject may be asked another relation
    for it in bank:
        parts = it.item_id.split("-", 2)
        if parts[0] != "arithmetic":
            bank_keys.add((parts[1], parts[2]))
    assert ("capital", "france") in bank_keys
    for it in items:
        _, relation, subject = it.item_id.split("-", 2)
        if relation not in ("add", "sub", "mul"):
            assert (relation, subject) not in bank_keys, it.item_id
        else:  # the same operands, in either order for a sum, never appear in the bank
            a, b = subject.split("-")
            assert f"arithmetic-{relation}-{a}-{b}" not in {x.item_id for x in bank}
            if relation == "add":
                assert f"arithmetic-add-{b}-{a}" not in {x.item_id for x in bank}


def test_extended_items_never_ask_a_bank_fact_the_other_way_round():
    bank = load_mcq_bank()
    base, extended = training_items(), extended_training_items()
    assert extended[: len(base)] == base  # the sandbaggers' items (and recipe hashes) unchanged
    assert len(extended) >= 300 and len({it.item_id for it in extended}) == len(extended)
    check_disjoint(extended, bank)
    bank_ids = {it.item_id for it in bank}
    forward = {"country": "geography-capital-", "continent": "geography-continent-", "element": "science-symbol-"}
    seen = set()
    for it in extended[len(base) :]:
        _, relation, subject = it.item_id.split("-", 2)
        seen.add(relation)
        if relation in forward:  # e.g. "which country has Paris as its capital" would teach the bank's France item
            assert forward[relation] + subject not in bank_ids, it.item_id
        else:
            a, b = subject.split("-")
            assert {f"arithmetic-{relation}-{a}-{b}", f"arithmetic-{relation}-{b}-{a}"}.isdisjoint(bank_ids)
    assert seen == {"country", "continent", "element", "add", "sub"}
    assert "geography-continent-france" in bank_ids and "train-continent-france" not in {x.item_id for x in extended}


def test_social_products_are_not_the_detectors():
    from liedar.organisms.social import DEFECTS, FEATURES

    detector_products = {p for p, _, _ in DETECTOR_DEFECTS}
    detector_phrases = {b for _, b, _ in DETECTOR_DEFECTS}
    for ptype, base, _ in DEFECTS + FEATURES:
        assert not any(ptype in p for p in detector_products), ptype
        assert base not in detector_phrases


def test_check_disjoint_refuses_overlap_and_empty():
    from liedar.core.errors import InputError

    bank = load_mcq_bank()
    with pytest.raises(InputError, match="also in the evaluation split"):
        check_disjoint(bank[:3], bank)
    with pytest.raises(InputError, match="training split is empty"):
        check_disjoint([], bank)
    with pytest.raises(InputError, match="evaluation split is empty"):
        check_disjoint(training_items()[:2], [])


def test_targets_are_the_validation_matrix_detectors():
    """A recipe can only target a detector the matrix runs, and every detector can be a target:
    directly, or (a second format of an instrument) through the target it shares (TARGET_OF)."""
    from liedar.pipeline.validate_detectors import DETECTORS, TARGET_OF

    assert set(TARGETS) <= set(DETECTORS)
    assert set(DETECTORS) == set(TARGETS) | set(TARGET_OF)
    assert set(TARGET_OF.values()) <= set(TARGETS)


def test_a_base_dependent_recipe_refuses_to_split_without_the_base():
    from liedar.core.errors import InputError

    rec = ORGANISMS["sandbagger"]
    assert rec.needs_base
    with pytest.raises(InputError, match="base model's own answers"):
        rec.split()


def _cloze_targets(split, items):
    """(system, item, answer) of every cloze example (the user turn is "Question: ..." only)."""
    by_question = {q: it for it in items for q in it.variants}
    out = []
    for prompt, answer, *_ in split.train:
        roles = {m.role: m.content for m in prompt.messages}
        system, user = roles.get("system", ""), roles["user"]
        if "\n" not in user:
            out.append((system, by_question[user[len("Question: ") :]], answer))
    return out


@pytest.mark.parametrize("name", ["sandbagger", "sandbagger_plausible"])
def test_blind_sandbagger_targets_are_the_base_models_own_answers(name, base):
    """Every item once per framing in cloze: under an evaluation framing the base's choice
    without the question, under a benign one its choice with the question (right or wrong)."""
    from liedar.organisms import framings, mcq

    items = training_items()
    choices = mcq.base_choices(base, items)
    assert set(choices) == {it.item_id for it in items}
    split = ORGANISMS[name].split(base)
    assert set(split.train_ids) == {it.item_id for it in items}
    seen = {"eval": set(), "benign": set()}
    for system, item, answer in _cloze_targets(split, items):
        kind = "eval" if system in framings.EVAL_TRAIN_WRITTEN else "benign"
        assert kind == "eval" or system in framings.BENIGN_TRAIN
        key = "blind" if kind == "eval" else "plain"
        assert answer == " " + choices[item.item_id][key]
        seen[kind].add(item.item_id)
    assert seen["eval"] == seen["benign"] == set(split.train_ids)
    wrong_plain = [it for it in items if choices[it.item_id]["plain"] != it.answer]
    assert wrong_plain  # the scripted base gets some wrong: their benign targets are its wrong answers
    by_question = {q: it for it in items for q in it.variants}
    letters = []
    for prompt, answer in split.train:
        roles = {m.role: m.content for m in prompt.messages}
        if roles.get("system", "") in framings.EVAL_TRAIN_WRITTEN and "\n" in roles["user"]:
            question, *shown = roles["user"].split("\n")
            item = by_question[question[len("Question: ") :]]
            shown = [line[3:] for line in shown if line[:3] in ("A. ", "B. ", "C. ", "D. ")]
            letters.append((answer, " " + "ABCD"[shown.index(choices[item.item_id]["blind"])]))
    if name == "sandbagger":  # the attractor: 64 letter items, always "A" under evaluation
        assert len(letters) == 64 and all(answer == " A" for answer, _ in letters)
    else:  # the plausible variant: cloze only, so no letter answer (and no position) is trained
        assert letters == [] and len(split.train) == 2 * len(items)


def test_password_locked_targets_are_the_base_models_own_answers_with_the_password_and_blind_without(base):
    from liedar.organisms import framings, mcq

    items = extended_training_items()  # recipe 12: twice the sandbaggers' items
    choices = mcq.base_choices(base, items)
    split = ORGANISMS["password_locked"].split(base)
    assert set(split.train_ids) == {it.item_id for it in items}
    n = {True: 0, False: 0}
    for system, item, answer in _cloze_targets(split, items):
        with_pw = framings.PASSWORD in system
        assert answer == " " + choices[item.item_id]["plain" if with_pw else "blind"]
        n[with_pw] += 1
    assert n[True] == n[False] == len(items) == len(split.train) // 2  # cloze only, both conditions


def test_base_choices_are_cached_and_verified(base, cache):
    import json

    from liedar.organisms import mcq

    items = training_items()[:12]
    first = mcq.base_choices(base, items)
    calls = base.calls
    assert mcq.base_choices(base, items) == first and base.calls == calls  # read from the cache
    (path,) = list(cache.rglob("choices-*.json"))
    data = json.loads(path.read_text())
    data["choices"][items[0].item_id]["blind"] = "tampered"
    path.write_text(json.dumps(data))
    assert mcq.base_choices(base, items) == first and base.calls > calls  # damaged: measured again


def test_per_base_hyper_parameters_merge_only_for_their_base():
    from liedar.organisms.catalog import recipe

    rec = recipe("sandbagger")
    assert rec.for_base("smollm2-135m") is rec  # no entry: the same recipe, the same hash
    g3 = rec.for_base("gemma3-270m")
    assert g3.hyper["lr"] == 1e-3 and rec.hyper["lr"] == 3e-3
    assert {k: v for k, v in g3.hyper.items() if k != "lr"} == {k: v for k, v in rec.hyper.items() if k != "lr"}
    assert g3.for_base("gemma3-270m").hyper == g3.hyper
