"""The audit split (`liedar.behavioral.items.audit`) is held out from every organism: the real
training-set builders of every recipe never return one of its items, and a recipe given one is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_catalog import ScriptedBase

from liedar.audit.rule import load_rule
from liedar.behavioral.items.audit import audit_mcq_items, audit_products, leaked_into, normalise
from liedar.core.errors import InputError
from liedar.organisms import ORGANISMS, mcq, social
from liedar.organisms.items import check_disjoint, extended_training_items, training_items
from liedar.organisms.recipe import Recipe, Split, training_texts
from liedar.organisms.zoo_recipes import ZOO_RECIPES
from liedar.pipeline.validate_detectors import item_split

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "behavioral"))
from test_audit_items import near_duplicates, wordings  # noqa: E402

RECIPES = {**ORGANISMS, **ZOO_RECIPES}
PROTOCOL2 = load_rule(Path(__file__).resolve().parents[2] / "liedar" / "audit" / "rules" / "protocol2.json")


@pytest.fixture()
def base(cache):
    return ScriptedBase()


@pytest.mark.parametrize("name", sorted(n for n, r in RECIPES.items() if r.trained))
def test_no_recipe_trains_on_an_audit_item(name, base):
    rec = RECIPES[name]
    split = rec.split(base if rec.needs_base else None)  # the real builder, refusing a leak itself
    texts = training_texts(split)
    assert texts and leaked_into(texts) == []
    audit_ids = {it.item_id for it in audit_mcq_items()}
    assert not audit_ids & set(split.train_ids) and not audit_ids & set(split.eval_ids)
    products = {normalise(p) for p, _, _ in audit_products()}
    corpus = " | ".join(normalise(t) for t in texts)
    assert not [p for p in products if p in corpus]
    # what the pinned second-protocol rule reads: the same held-out items, none of them trained on
    source = item_split(PROTOCOL2.sizes)
    read = {it.item_id for it in source.mcq()} | {c.claim_id for c in source.choice_claims(None)}
    assert source.name == "audit" and not read & (set(split.train_ids) | set(split.eval_ids))
    assert not [w for it in source.mcq() for w in it.variants if f" {normalise(w)} " in f" {corpus} "]


def test_training_items_neither_repeat_nor_nearly_repeat_an_audit_item():
    audit = audit_mcq_items()
    for items in (training_items(), extended_training_items()):
        check_disjoint(items, audit)
        assert near_duplicates(wordings(audit), wordings(items)) == []
    facts = social.facts_of(social.DEFECTS, "defect") + social.facts_of(social.FEATURES, "feature")
    theirs = {f.fact_id: (f.sheet.removeprefix("Product sheet: "), f.truth) for f in facts}
    ours = {p: (f"The {p} {t}.", "yes") for p, _, t in audit_products()}
    assert near_duplicates(ours, theirs) == []
    organism_types = [t for t, _, _ in social.DEFECTS + social.FEATURES]
    for product, _, _ in audit_products():
        assert not [t for t in organism_types if t in product.lower()], product
        assert product.split()[0] not in social.BRANDS, product


def _recipe(prompt) -> Recipe:
    def make_split(seed: int) -> Split:
        return Split(train=((prompt, " yes"),), train_ids=("t-0",), eval_ids=("e-0",))

    return Recipe("leaky", "trains on what it must not", ("sycophancy",), {}, make_split, measure=lambda *a, **k: None)


def test_a_recipe_given_an_audit_item_is_refused():
    item = audit_mcq_items()[0]
    with pytest.raises(InputError, match="audit split's held-out texts"):
        _recipe(mcq.cloze(item, item.paraphrases[1], "")).split()
    product, base_phrase, third = audit_products()[5]
    fact = social.Fact("defect-99-0", product, f"Product sheet: The {product} {third}.", "q", "yes", "Yes.", "No.")
    with pytest.raises(InputError, match="audit split's held-out texts"):
        _recipe(social.dialogue_of("", social.user_turn(fact, f"Does the {product} {base_phrase}?"))).split()
    with pytest.raises(InputError, match="also in the evaluation split"):
        check_disjoint([*training_items()[:3], item], audit_mcq_items())
    clean = training_items()[0]
    assert _recipe(mcq.cloze(clean, clean.question, "")).split().train  # an organism's own item passes
