"""Contamination check: a fake that memorised the bank's original wordings is flagged, a
clean one is not, and the false-flag rate on held-out fresh items stays near nominal."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from liedar.behavioral import registry
from liedar.behavioral.contamination import ItemScore, contamination_check, min_k, score_item
from liedar.behavioral.items import fresh as fresh_mod
from liedar.behavioral.items import mcq
from liedar.behavioral.items.fresh import as_text, fresh_items, from_mcq
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.behavioral.runners.contamination import Contamination, run_contamination, token_logprobs
from liedar.cli import main
from liedar.core.errors import InputError

from .fakes import LikelihoodFake


def _bank():
    return [from_mcq(it) for it in load_mcq_bank()]


def test_planted_contamination_is_flagged() -> None:
    bank = _bank()
    res = run_contamination(LikelihoodFake(memorised=[it.original for it in bank]), bank, n_fresh=160)
    assert res.contaminated and res.fisher_p < 0.05
    assert res.flag_rate.lo > res.false_flag_rate.hi


def test_clean_model_is_not_flagged_and_false_flags_are_near_nominal() -> None:
    bank = _bank()
    res = run_contamination(LikelihoodFake(), bank, n_fresh=160)
    assert not res.contaminated
    assert res.false_flag_rate.value <= 0.15
    assert res.flag_rate.value <= 0.2


def test_partial_contamination_flags_the_memorised_items() -> None:
    bank = _bank()
    leaked = {it.item_id for it in bank[::3]}
    fake = LikelihoodFake(memorised=[it.original for it in bank if it.item_id in leaked], bonus=2.0)
    res = run_contamination(fake, bank, n_fresh=160)
    flagged = {s.item_id for s in res.items if s.flagged}
    assert len(flagged & leaked) >= 0.8 * len(leaked)
    assert len(flagged - leaked) <= 0.15 * (len(bank) - len(leaked))
    assert res.contaminated


def test_fresh_items_are_unseen_and_worded_by_the_bank_templates() -> None:
    fresh = fresh_items(40)
    bank_ids = {it.item_id for it in load_mcq_bank()}
    assert len({f.item_id for f in fresh}) == 40 and not ({f.item_id.removeprefix("fresh-") for f in fresh} & bank_ids)
    assert all(f.rewrites and f.original.startswith("Question: ") for f in fresh)
    assert fresh_items(40) == fresh  # reproducible


def test_min_k_and_score_item() -> None:
    assert min_k([-1, -2, -3, -4, -5], 0.2) == -5.0
    assert min_k([-1, -2, -3, -4, -5], 0.4) == -4.5
    s = score_item("a", "bank", [-1.0, -1.0], [[-2.0, -2.0], [-3.0]])
    assert s.wording == pytest.approx(1.5)


def test_section_rows() -> None:
    inst = registry.get("contamination")
    assert isinstance(inst, Contamination)
    items = inst.items(limit=30, seed=0)
    run = inst.run(LikelihoodFake(), items, interval="clopper-pearson", n_fresh=80)
    sec = inst.section(run)
    assert {m.id for m in sec.measures} == {"contamination_flag_rate", "contamination_false_flags"}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: contamination_check([], [ItemScore("f", "fresh", 0, 0, 0)] * 100), "no benchmark items"),
        (
            lambda: contamination_check([ItemScore("a", "b", 0, 0, 0)], [ItemScore("f", "fresh", 0, 0, 0)] * 20),
            "too few",
        ),
        (lambda: score_item("a", "b", [-1.0], []), "no rewrites"),
        (lambda: score_item("a", "b", [], [[-1.0]]), "no scored tokens"),
        (lambda: score_item("a", "b", [np.nan], [[-1.0]]), "non-finite"),
        (lambda: token_logprobs(object(), ["x"]), "per-token log-probabilities"),
        (lambda: fresh_items(0), "at least 1"),
        (lambda: run_contamination(LikelihoodFake(), _bank()[:3], k=0), "min-k"),
    ],
)
def test_bad_input_one_line(call, message) -> None:
    with pytest.raises(InputError, match=message):
        call()


# ---- fact-comparable calibration --------------------------------------------------------------


def _real_canonical() -> set[str]:
    """The canonical (first-template) wording of every real fact, in the bank or in the fresh
    tables: what a web corpus contains whether or not the benchmark leaked."""
    out = {it.original for it in _bank() if not it.item_id.startswith("arithmetic")}
    for relation, table in fresh_mod._REAL.items():
        for subject, answer in table:
            t = fresh_mod._templates(relation)[0].format(**fresh_mod._fields(relation, subject))
            out.add(as_text(t, answer))
    return out


class FamiliarPhrasingFake(LikelihoodFake):
    """The flaw behind the earlier false flags, planted: the canonical wording of a *real*
    fact is ``familiar`` nats/token more likely than its rewrites, as a web string is (sums
    with fresh numbers were exchangeable, so they get none); invented names get no such bonus;
    ``memorised`` texts get ``bonus`` on top."""

    def __init__(self, familiar: float = 0.6, **kw):
        super().__init__(**kw)
        self.familiar, self.canonical = familiar, _real_canonical()

    def token_logprobs(self, text: str) -> np.ndarray:
        lp = super().token_logprobs(text)
        if text in self.canonical:
            lp = lp + self.familiar
        return lp


def test_invented_calibration_flags_a_clean_fact_bank_and_real_calibration_does_not() -> None:
    bank = _bank()
    fake = FamiliarPhrasingFake()
    invented = run_contamination(fake, bank, n_fresh=160, calibration="invented")
    real = run_contamination(fake, bank, n_fresh=160, calibration="real")
    assert invented.contaminated  # the calibration flaw, reproduced
    assert not real.contaminated and real.flag_rate.value <= 0.15
    assert real.extra["calibration"] == "real"
    # and real memorisation of the bank's strings is still seen against real-fact calibration
    leaked = FamiliarPhrasingFake(memorised=[it.original for it in bank], bonus=1.0)
    assert run_contamination(leaked, bank, n_fresh=160).contaminated


def test_real_fresh_facts_are_outside_the_bank_and_in_its_proportions() -> None:
    bank = load_mcq_bank()
    bank_texts = {t for it in _bank() for t in (it.original, *it.rewrites)}
    fresh = fresh_items(fresh_mod.max_fresh())
    assert not ({f.original for f in fresh} & bank_texts)
    bank_subjects: dict[str, set[str]] = {}
    for it in bank:
        r = fresh_mod.relation_of(it.item_id)
        bank_subjects.setdefault(r, set()).add(it.item_id.split("-", 2)[-1])
    for relation, table in fresh_mod._REAL.items():
        slugs = {mcq.slug(s) for s, _ in table}
        assert not (slugs & bank_subjects[relation]), relation
    mix = fresh_mod.bank_mix()
    got = Counter(fresh_mod.relation_of(f.item_id) for f in fresh_items(131))
    assert dict(got) == mix  # n = bank size: exactly the bank's proportions
    assert all(f.original.startswith("Question: ") and len(f.rewrites) == 3 for f in fresh)
    assert fresh_items(80) == fresh_items(80) and fresh_items(80, seed=1) != fresh_items(80)


def test_too_many_real_fresh_items_is_one_line(capsys) -> None:
    n = fresh_mod.max_fresh() + 1
    with pytest.raises(InputError, match=f"at most {n - 1} fresh items"):
        fresh_items(n)
    assert len(fresh_items(n, facts="invented")) == n
    with pytest.raises(InputError, match="facts='made-up'"):
        fresh_items(10, facts="made-up")
    code = main(["behavioral", "contamination", "--fresh", str(n)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"at most {n - 1} fresh items" in err[0]
