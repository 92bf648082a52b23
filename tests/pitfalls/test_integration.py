"""The pitfall instruments on the real smollm2-135m (bounded: a few items each)."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.behavioral.items.fresh import famous_items, from_mcq
from liedar.behavioral.items.mcq import MCQ_ITEMS, load_mcq_bank
from liedar.behavioral.runners.contamination import run_contamination, score_worded, token_logprobs
from liedar.behavioral.runners.observer import run_observer

pytestmark = pytest.mark.integration


def test_observer_effect_runs_on_smollm2(smollm2_transformers) -> None:
    items = MCQ_ITEMS.draw(6, 0)
    res, records = run_observer(smollm2_transformers, items)
    assert res.n_items == 6 and len(records) == 6
    by_id = {it.item_id: it for it in items}
    for r in records:
        assert len(r.answers) == 7 and all(a.chosen in by_id[r.item_id].options for a in r.answers)
    # the per-item differences are what the effect averages
    assert -1 <= res.effect.estimate.lo <= res.effect.estimate.value <= res.effect.estimate.hi <= 1
    assert res.deploy_accuracy.n == 6


def test_token_logprobs_agree_with_score_options(smollm2_transformers) -> None:
    lm = smollm2_transformers
    text = "Question: What is the capital of France?\nAnswer: Paris"
    lp = token_logprobs(lm, [text])[0]
    head = "Question: What is the capital of France?\nAnswer:"
    n_head = len(lm._tokenize(head, False)[0])
    # the answer's tokens, scored in the full text, equal score_options' continuation score
    assert float(lp[n_head - 1 :].sum()) == pytest.approx(float(lm.score_options(head, [" Paris"])[0]), abs=1e-3)


def test_famous_lines_score_above_bank_items(smollm2_transformers) -> None:
    """A positive control on real memorisation: proverbs' original wordings beat their rewrites
    by more than the bank's canonical wordings beat theirs."""
    famous = score_worded(smollm2_transformers, famous_items()[:6])
    bank = score_worded(smollm2_transformers, [from_mcq(it) for it in load_mcq_bank()[::20]])
    assert np.median([s.wording for s in famous]) > np.median([s.wording for s in bank])


def test_contamination_runs_on_smollm2(smollm2_transformers) -> None:
    res = run_contamination(smollm2_transformers, [from_mcq(it) for it in load_mcq_bank()[::10]], n_fresh=80)
    assert res.false_flag_rate.n == 40 and 0 <= res.flag_rate.value <= 1


def test_verbalized_instrument_runs_on_smollm2(smollm2_transformers) -> None:
    """The registered instrument end to end on the real model, kept small (2 items x 2
    families, 8 tokens): free answers are generated, graded, and paired with the cloze choice
    on the same wordings; the rows carry the grader's kappa."""
    from liedar.behavioral import registry

    inst = registry.get("verbalized")
    items = inst.items(limit=2, seed=0)
    run = inst.run(
        smollm2_transformers, items, interval="clopper-pearson", families=("test_notice", "user_request"), max_tokens=8
    )
    res = run.result
    assert res.n_items == 2 and res.eval_rate.n == 2 and res.deploy_rate.n == 2
    texts = [a.text for r in run.records for a in r.answers]
    assert len(texts) == 4 and all(isinstance(t, str) and t.strip() for t in texts)
    assert all(r.observer_difference in (-1.0, 0.0, 1.0) for r in run.records)
    rows = {m.id: m for m in inst.section(run).measures}
    assert rows["verbalized_eval_rate"].grader_kappa is not None
