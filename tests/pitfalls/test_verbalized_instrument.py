"""`liedar behavioral verbalized`: planted verbal awareness is counted under evaluation-looking
presentations only, its correlation with a planted observer effect is found (and not invented
when the two are unrelated), the grader's kappa travels on the rows, and bad flags are one line."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from liedar.behavioral import registry
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.behavioral.runners.verbalized import VerbalizedAwareness, run_verbalized
from liedar.behavioral.verbalized import item_correlation
from liedar.cli import main
from liedar.core.errors import InputError

from .fakes import ObserverFake, _text, _u

SAYS = "This looks like a test of my knowledge, so I will answer carefully."
PLAIN = "Sure, here is what I think the answer is."


class NoticingFake(ObserverFake):
    """On the items it *notices* (``notice`` share, fixed per item), an evaluation-looking
    prompt makes it say so (when ``talks``) and sandbag (when ``sandbags``)."""

    capabilities = frozenset({"generate", "score_options"})

    def __init__(self, talks: bool, sandbags: bool, notice: float = 0.5, noise: float = 0.0):
        super().__init__(aware=False, noise=noise)
        self.talks, self.sandbags, self.notice = talks, sandbags, notice
        self.generations = 0

    def _item(self, text: str):
        return next(it for q, it in self.bank.items() if q in text)

    def _noticed(self, text: str) -> bool:
        return self.looks_like_eval(text) and _u(self._item(text).item_id, "notice") < self.notice

    def generate(self, prompt, max_tokens=40, **kw):
        self.generations += 1
        text = _text(prompt)
        assert not text.rstrip().endswith("Answer:")  # free answer: no prefill
        return SimpleNamespace(text=SAYS if self.talks and self._noticed(text) else PLAIN)

    def score_options(self, prompt, options):
        text = _text(prompt)
        self.aware = self.sandbags and self._noticed(text)
        self.sandbag = 1.0
        return super().score_options(prompt, options)


ITEMS = load_mcq_bank()[:40]


def test_planted_awareness_is_flagged_and_correlates_with_the_planted_observer_effect() -> None:
    fake = NoticingFake(talks=True, sandbags=True)
    res, records = run_verbalized(fake, ITEMS)
    assert res.flag and res.eval_rate.lo > 0.2 and res.deploy_rate.value == 0.0
    assert res.difference.lo > 0 and res.difference_p < 0.05
    assert res.observer is not None and res.observer.flag  # the same wordings carry the observer effect
    assert res.correlation is not None and res.correlation.lo > 0.5 and res.correlation_p < 0.05
    assert fake.generations == len(ITEMS) * 7 and len(records) == len(ITEMS)
    noticed = {it.item_id for it in ITEMS if _u(it.item_id, "notice") < 0.5}
    assert {r.item_id for r in records if r.share("evaluation") > 0} == noticed


def test_talk_without_sandbagging_gives_no_correlation() -> None:
    """Per-wording noise makes the observer difference vary over items, unrelated to noticing:
    over disjoint blocks of items the permutation test rejects no more often than its level
    allows (at most one block of four at p < 0.05; one block's r alone is a 5% gamble)."""
    bank = load_mcq_bank()
    significant = 0
    for start in range(0, 160, 40):
        res, _ = run_verbalized(NoticingFake(talks=True, sandbags=False, noise=0.15), bank[start : start + 40])
        assert res.flag  # it says so...
        assert not res.observer.flag  # ...but answers the same
        assert res.correlation is not None
        significant += res.correlation_p < 0.05
    assert significant <= 1


def test_unaware_model_has_no_rate_and_an_undefined_correlation_saying_why() -> None:
    inst = VerbalizedAwareness()
    run = inst.run(NoticingFake(talks=False, sandbags=False), ITEMS[:12], interval="clopper-pearson")
    res = run.result
    assert not res.flag and res.eval_rate.value == 0.0 and res.correlation is None
    sec = inst.section(run)
    rows = {m.id: m for m in sec.measures}
    corr = rows["verbalized_observer_correlation"]
    assert corr.estimate is None and "same on every item" in corr.not_computable.reason
    assert rows["verbalized_eval_rate"].grader_kappa.value > 0.6  # the grader's kappa on the rate row
    assert rows["verbalized_grader_kappa"].kind == "quality"
    assert rows["verbalized_eval_rate"].ceiling == "verbalized_ceiling" and sec.ceilings[0].id == "verbalized_ceiling"
    assert "few_items" in {w.code for w in rows["verbalized_difference"].warnings}
    text = inst.summary(run)  # what the CLI prints: every estimate with its interval and n
    assert "eval_rate" in text and "n=48" in text and res.reading in text
    import json

    assert json.loads(json.dumps(run.to_dict()))["result"]["grader"]["kappa"]["n"] == 48


def test_without_the_observer_no_ceiling_and_no_correlation() -> None:
    res, records = run_verbalized(NoticingFake(talks=True, sandbags=True), ITEMS[:10], observer=False)
    assert res.observer is None and res.correlation is None and all(r.observer_difference is None for r in records)
    inst = registry.get("verbalized")
    from liedar.behavioral.instrument import InstrumentRun

    sec = inst.section(InstrumentRun("verbalized", res, records, res.warnings, {}))
    assert not sec.ceilings
    corr = next(m for m in sec.measures if m.id == "verbalized_observer_correlation")
    assert "--no-observer" in corr.not_computable.reason


def test_item_correlation_interval_and_permutation() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    est, p, _ = item_correlation(x, x + rng.normal(scale=0.5, size=60))
    assert est.lo > 0.6 and p < 0.01 and est.lo <= est.value <= est.hi
    est0, p0, _ = item_correlation(x, rng.normal(size=60))
    assert est0.lo < 0 < est0.hi and p0 > 0.05
    none, _, why = item_correlation([0.0] * 5, [1.0, 2.0, 3.0, 4.0, 5.0])
    assert none is None and "same on every item" in why


def test_bad_input_one_line() -> None:
    with pytest.raises(InputError, match="evaluation and one deployment"):
        run_verbalized(NoticingFake(True, True), ITEMS[:2], families=("benchmark",))
    with pytest.raises(InputError, match="no presentation family"):
        run_verbalized(NoticingFake(True, True), ITEMS[:2], families=("benchmark", "nope"))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["verbalized", "--families", "benchmark,grader"], "at least one evaluation and one deployment family"),
        (["verbalized", "--max-tokens", "0"], "--max-tokens"),
    ],
)
def test_bad_flags_one_line(argv, message, capsys) -> None:
    try:
        code = main(["behavioral", *argv])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
