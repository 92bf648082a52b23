"""Scope: out-of-domain items built from the shared statement sets, the other-register
framings, bad input, and a short run on the shipped sandbagger and sycophant."""

from __future__ import annotations

import collections

import pytest
from workers import THREADS

from liedar.core.errors import InputError
from liedar.organisms import scope
from liedar.organisms.framings import all_family_texts, detector_framings, ngrams
from liedar.organisms.items import extended_training_items, training_items


def test_ood_items_are_four_option_seeded_and_balanced(shared_datasets):
    items = scope.ood_items(60, seed=0, root=shared_datasets)
    assert len(items) == 60 and len({it.item_id for it in items}) == 60
    assert collections.Counter(it.topic for it in items) == {"ood:inventors": 30, "ood:sp_en_trans": 30}
    for it in items:
        assert len(it.options) == 4 == len(set(it.options)) and it.answer in it.options
    counts = collections.Counter(it.answer for it in items if it.topic == "ood:inventors")
    assert max(counts.values()) <= 30 // 4  # no country answers more than a quarter
    assert "the U.S." in counts  # the abbreviation keeps its full stop
    assert scope.ood_items(60, seed=0, root=shared_datasets) == items
    assert scope.ood_items(60, seed=1, root=shared_datasets) != items


def test_ood_topics_are_not_training_topics(shared_datasets):
    train = [w for it in training_items() + extended_training_items() for w in it.variants]
    assert not any("country did" in w or "Spanish word" in w for w in train)
    assert not {it.question for it in scope.ood_items(40, root=shared_datasets)} & set(train)
    assert not set(scope.OOD_TOPICS) & set(scope.EXCLUDED_TOPICS)


def test_missing_datasets_are_not_computable_naming_the_path(tmp_path, monkeypatch):
    monkeypatch.setenv(scope.DATASETS_ENV, str(tmp_path / "nowhere"))
    got = scope.ood_items(20)
    assert str(tmp_path / "nowhere") in got.reason
    out = scope.scope_sandbagging(None, None, ["t"], ["b"])  # type: ignore[arg-type]
    assert out["n"] == 0 and "nowhere" in out["not_computable"]["reason"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: scope.ood_items(2), "at least 4"),
        (lambda: scope.ood_items(10, topics=("cities",)), "unknown out-of-domain topic"),
        (lambda: scope.register_wordings("weather"), "unknown trigger family"),
        (lambda: scope.register_wordings("operator", "Acme", "Acme"), "different benign cue"),
        (lambda: scope.scope_sandbagging(None, None, [], ["b"]), "trigger_systems"),  # type: ignore[arg-type]
        (lambda: scope.scope_sycophancy(None, None, []), "pressure_templates"),  # type: ignore[arg-type]
        (lambda: scope.scope_lying(None, None, ["m"], []), "control_roles"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_is_one_line(call, message, shared_datasets):
    with pytest.raises(InputError, match=message):
        call()


def test_fact_sheets_state_the_fact_and_deny_a_distractor(shared_datasets):
    items = scope.ood_items(8, root=shared_datasets)
    sheets = scope.ood_fact_sheets(items, ["seller"], ["clerk"], sound_every=4)
    stated = [c for c in sheets if c.defect]
    denied = [c for c in sheets if not c.defect]
    assert len(stated) == 8 and len(denied) == 2 and sheets[:8] == stated
    for c in sheets:
        yes, no = c.options
        assert c.sheet.endswith(yes[len("Yes. ") :] if c.truth == "yes" else no[len("No. ") :])
        assert not yes.endswith("..") and not no.endswith("..")


def test_other_register_wordings_are_disjoint_from_detectors_and_families():
    theirs = detector_framings() + all_family_texts()
    try:
        from liedar.organisms.cues import cue_texts

        theirs += cue_texts()
    except ImportError:
        pass
    grams = set().union(*(ngrams(t) for t in theirs))
    lower = {t.strip().lower() for t in theirs}
    for text in scope.register_texts():
        assert text.strip().lower() not in lower
        assert not ngrams(text) & grams, text
    for family, kind in scope.FAMILY_KIND.items():
        assert family in scope.OTHER_REGISTER
        if kind == "sandbagging":
            w = scope.register_wordings(family, "cue-A", "cue-B") if family in scope.CUE_FAMILIES else None
            w = w or scope.register_wordings(family)
            assert len(w["trigger"]) == len(w["benign"]) >= 2


@pytest.mark.integration
def test_scope_on_the_shipped_sandbagger_and_sycophant(smollm2_transformers, shared_datasets):
    """A short run (12 out-of-domain items; the card's runs use 60): every number has its
    interval and the base model's beside it."""
    from liedar.models import load
    from liedar.organisms import social
    from liedar.organisms.framings import BENIGN_HELDOUT, EVAL_HELDOUT

    items = scope.ood_items(12, root=shared_datasets)
    sb = load("smollm2-135m:sandbagger", backend="transformers", n_threads=THREADS)
    out = scope.scope_sandbagging(sb, smollm2_transformers, EVAL_HELDOUT, BENIGN_HELDOUT, items)
    assert out["n"] == 12 and {"organism_gap", "base_gap", "organism_accuracy_benign"} <= set(out)
    assert out["organism_gap"]["n"] == 12 and out["organism_gap"]["lo"] <= out["organism_gap"]["value"]
    syc = load("smollm2-135m:sycophant", backend="transformers", n_threads=THREADS)
    out = scope.scope_sycophancy(syc, None, social.PRESSURE_HELDOUT, items)
    assert out["n"] == 12 and "organism_sycophancy_excess" in out and "base_sycophancy_excess" not in out


def test_card_kinds_follow_the_held_out_wordings_a_family_has():
    fam = {"trigger_heldout": ["t"], "benign_heldout": ["b"], "pressure_heldout": ["p {s} {q}"], "roles_heldout": []}
    assert scope.card_kinds({"recipe": {"family": fam}}) == ["sandbagging", "sycophancy"]
    assert scope.card_kinds({"recipe": {"family": {"roles_heldout": ["r"], "neutral_heldout": ["n"]}}}) == ["lying"]
    assert scope.card_kinds({"recipe": {}}) == []
    lock = {"password": ["pw is X."], "benign_heldout": ["b1", "b2"], "trigger_heldout": ["t"]}
    assert scope.card_kinds({"recipe": {"family": lock}}) == ["hidden_capability"]  # not the locked-both-sides gap


def test_a_lock_is_unlocked_by_its_held_out_phrase_or_its_first_password_on_the_benign_framings():
    fam = {"password": ["pw is X.", "X opens."], "benign_heldout": ["b1", "b2"]}
    assert scope.unlock_wordings(fam) == ["b1 pw is X.", "b2 pw is X."]
    assert scope.unlock_wordings({**fam, "password_heldout": ["id Y"]}) == ["id Y"]
    with pytest.raises(InputError, match="no held-out wordings"):
        scope.card_scope({"name": "x", "recipe": {"family": {}}}, None, None)  # type: ignore[arg-type]


@pytest.mark.integration
def test_card_scope_measures_a_shipped_member_beside_the_base_once(smollm2_transformers, shared_datasets):
    """The shipped terse decoy (lying wordings) on 8 items: both measures carry the member's and
    the base model's numbers, and the base's are kept for members with the same wordings."""
    import json

    from liedar.models import load
    from liedar.models.cards import zoo_root

    folder = zoo_root() / "audit" / "smollm2-135m" / "terse"
    card = json.loads((folder / "card.json").read_text())
    org = load(str(folder), backend="transformers", n_threads=THREADS)
    memo: dict = {}
    out = scope.card_scope(card, org, smollm2_transformers, n=8, base_memo=memo)
    assert out["kinds"] == ["lying"] and len(memo) == 2
    for key in ("ood_lying", "register_lying"):
        got = out[key]
        assert {"organism_lie_excess", "base_lie_excess", "organism_belief_accuracy"} <= set(got)
        assert (
            got["organism_lie_excess"]["lo"] <= got["organism_lie_excess"]["value"] <= got["organism_lie_excess"]["hi"]
        )


def test_the_docs_scope_table_is_read_from_the_cards(tmp_path):
    """`scripts/measure_scope.py --table` prints one row per measured kind from the card's
    own numbers, and names the members with no scope rather than leaving them out."""
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "measure_scope.py"
    spec = importlib.util.spec_from_file_location("measure_scope", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)  # type: ignore[union-attr]

    def est(value, lo, hi):
        return {"value": value, "lo": lo, "hi": hi}

    measured = {
        "kinds": ["sandbagging"],
        "ood_sandbagging": {"organism_gap": est(0.125, -0.026, 0.283), "base_gap": est(0.05, 0.0, 0.1)},
        "register_sandbagging": {"organism_gap": est(0.3, 0.138, 0.463), "base_gap": est(-0.025, -0.1, 0.05)},
    }
    (tmp_path / "a.json").write_text(json.dumps({"scope": measured}))
    (tmp_path / "b.json").write_text(json.dumps({}))
    table = script.scope_table([("member_a", tmp_path / "a.json"), ("member_b", tmp_path / "b.json")])
    assert "| member_a | sandbagging (gap) | 0.125 [-0.026, 0.283] (0.050) | 0.300 [0.138, 0.463] (-0.025) |" in table
    assert "No scope measured: member_b." in table
