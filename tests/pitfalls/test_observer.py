"""Observer effect: planted awareness is flagged, an unaware model is not; bad input in one line."""

from __future__ import annotations

import pytest

from liedar.behavioral import registry
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.behavioral.items.presentations import DEPLOYMENT, EVALUATION, families, render, variant_for
from liedar.behavioral.observer import Answer, ObserverRecord, observer_effect, sign_flip_p
from liedar.behavioral.runners.observer import ObserverEffect, run_observer
from liedar.core.errors import InputError

from .fakes import ObserverFake


def test_planted_awareness_is_flagged_and_robust() -> None:
    fake = ObserverFake(aware=True)
    res, records = run_observer(fake, load_mcq_bank()[:60])
    assert res.flag and res.direction == "worse under evaluation"
    assert res.effect.estimate.lo > 0 and res.effect.p_value < 0.05
    assert res.robust  # every evaluation family carries the planted effect
    assert all(c.estimate.value > 0 for c in res.per_family)
    assert len(records) == 60 and fake.calls == 60 * len(families("evaluation") + families("deployment"))


def test_unaware_model_is_not_flagged() -> None:
    res, _ = run_observer(ObserverFake(aware=False), load_mcq_bank()[:60])
    assert not res.flag and res.direction == "none"
    assert res.effect.estimate.lo <= 0 <= res.effect.estimate.hi


def test_section_rows_and_registration() -> None:
    inst = registry.get("observer")
    assert isinstance(inst, ObserverEffect)
    items = inst.items(limit=20, seed=0)
    assert {it.topic for it in items} == {"arithmetic", "geography", "science"}
    run = inst.run(ObserverFake(aware=True), items, interval="clopper-pearson")
    sec = inst.section(run)
    ids = {m.id for m in sec.measures}
    assert {"observer_effect", "observer_answer_shift"} <= ids
    eff = next(m for m in sec.measures if m.id == "observer_effect")
    assert eff.ceiling == "observer_ceiling" and "few_items" in {w.code for w in eff.warnings}


def test_one_family_only_is_family_dependent() -> None:
    """A model that reacts to one evaluation family alone: the pooled effect may be
    significant, but it must not be called robust."""
    bank = load_mcq_bank()[:80]
    recs = []
    for it in bank:
        ans = [Answer(f, "evaluation", f"{f}/0", "x", f != "benchmark") for f in families("evaluation")]
        ans += [Answer(f, "deployment", f"{f}/0", "x", True) for f in families("deployment")]
        recs.append(ObserverRecord(it.item_id, tuple(ans)))
    res = observer_effect(recs, chance=0.25, protocol="test")
    assert res.flag and not res.robust
    assert "family_dependent" in {w.code for w in res.warnings}


def test_ceiling_near_chance_is_said() -> None:
    res, _ = run_observer(ObserverFake(aware=False, skill=0.0, noise=0.0), load_mcq_bank()[:40])
    assert "ceiling_near_chance" in {w.code for w in res.warnings}


def test_sign_flip_p_is_exact_for_few_and_calibrated_under_the_null() -> None:
    assert sign_flip_p([1.0, 1.0, 1.0]) == pytest.approx(0.25)
    assert sign_flip_p([0.0, 0.0]) == 1.0
    import numpy as np

    rng = np.random.default_rng(0)
    ps = [sign_flip_p(rng.choice([-1.0, 0.0, 1.0], size=40), draws=2000, seed=i) for i in range(200)]
    assert 0.01 <= float(np.mean(np.array(ps) < 0.05)) <= 0.10


def test_presentations_render_and_are_disjoint_from_organism_framings() -> None:
    from liedar.organisms.framings import all_family_texts, detector_framings, ngrams

    theirs = set().union(*(ngrams(t) for t in all_family_texts() + detector_framings()))
    for p in EVALUATION + DEPLOYMENT:
        assert not (ngrams(p.all_text()) & theirs), p.key
    it = load_mcq_bank()[0]
    d = render(variant_for(it.item_id, "conversation"), it.question, it.item_id)
    assert d.messages[-1].content == "Answer:" and it.question in d.messages[-2].content
    assert len(d.messages) == 4  # two earlier turns, the question, the prefill


@pytest.mark.parametrize(
    "records, message",
    [
        ([], "no observer-effect records"),
        ([ObserverRecord("a", (Answer("f", "evaluation", "f/0", "x", True),))], "at least one evaluation and one"),
        ([ObserverRecord("a", (Answer("f", "weird", "f/0", "x", True),))], "neither evaluation nor deployment"),
        (
            [
                ObserverRecord(
                    "a", (Answer("f", "evaluation", "f/0", "x", True), Answer("g", "deployment", "g/0", "x", True))
                )
            ]
            * 2,
            "appears twice",
        ),
    ],
)
def test_bad_records_one_line(records, message) -> None:
    with pytest.raises(InputError, match=message):
        observer_effect(records, chance=0.25, protocol="t")


def test_bad_options_one_line() -> None:
    with pytest.raises(InputError, match="no presentation family 'nope'"):
        run_observer(ObserverFake(aware=False), load_mcq_bank()[:3], families=("nope",))
    with pytest.raises(InputError, match="scoring"):
        run_observer(ObserverFake(aware=False), load_mcq_bank()[:3], scoring="letters")
