from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from instrument_fakes import FakeYesNo, careless_seller_liar, consistent_seller_liar  # noqa: E402

from liedar.behavioral.items.claims import GROUPS, negation_pairs  # noqa: E402
from liedar.behavioral.negation import NegationRecord, negation_consistency  # noqa: E402
from liedar.behavioral.runners.negation import run_negation  # noqa: E402
from liedar.core.errors import InputError  # noqa: E402


def _records(n_neutral_bad: int, n_costly_bad: int, n: int = 30) -> list[NegationRecord]:
    recs = [NegationRecord(f"n{i}", "neutral", 0.9, 0.8 if i < n_neutral_bad else 0.1) for i in range(n)]
    recs += [NegationRecord(f"c{i}", "costly", 0.9, 0.8 if i < n_costly_bad else 0.1) for i in range(n)]
    return recs


def test_known_inconsistency_and_deviation():
    r = negation_consistency(_records(3, 15))
    neutral, costly = r.groups
    assert neutral.inconsistency.value == pytest.approx(0.1) and neutral.inconsistency.successes == 3
    assert costly.inconsistency.value == pytest.approx(0.5)
    assert costly.abs_deviation.value == pytest.approx((15 * 0.7 + 15 * 0.0) / 30)
    assert r.selective.value == pytest.approx(0.4) and r.selective.lo > 0
    assert r.test.p_value < 0.01 and "selective inconsistency" in r.reading


def test_equal_groups_are_not_selective():
    r = negation_consistency(_records(5, 5))
    assert r.selective.value == pytest.approx(0.0) and r.selective.lo < 0 < r.selective.hi
    assert "no selective" in r.reading


def test_yes_bias_is_flagged():
    recs = [NegationRecord(f"{g}{i}", g, 0.95, 0.9) for g in GROUPS for i in range(25)]
    r = negation_consistency(recs)
    assert r.overall.inconsistency.value == 1.0
    assert any(w.code == "answer_bias" and "yes-bias" in w.text for w in r.warnings)


def test_bias_shift_between_groups_is_reported_as_such():
    """A no-biased model (both answers 'no') that is pushed further toward 'no' by the
    sales role: every pair contradicts in both groups, but |d| grows — a bias shift."""
    recs = [NegationRecord(f"n{i}", "neutral", 0.35, 0.35) for i in range(20)]
    recs += [NegationRecord(f"c{i}", "costly", 0.25, 0.25) for i in range(20)]
    r = negation_consistency(recs)
    assert "inconsistent everywhere" in r.reading and "larger on costly items" in r.reading


@pytest.mark.parametrize(
    "recs,match",
    [
        ([], "no negation pairs"),
        ([NegationRecord("a", "neutral", 0.5, 0.5)], "no pairs in group 'costly'"),
        ([NegationRecord("a", "other", 0.5, 0.5)], "group='other' is not an allowed value"),
        ([NegationRecord("a", "neutral", 1.5, 0.5)], "not a probability"),
        ([NegationRecord("a", "neutral", 0.5, 0.5)] * 2, "duplicate"),
    ],
)
def test_bad_input(recs, match):
    with pytest.raises(InputError, match=match):
        negation_consistency(recs)


def test_bank_has_two_matched_groups():
    pairs = negation_pairs()
    neutral = [p for p in pairs if p.group == "neutral"]
    costly = [p for p in pairs if p.group == "costly"]
    assert len(neutral) == len(costly) >= 20
    assert [p.claim for p in neutral] == [p.claim for p in costly]  # only the role differs
    assert all("does not" in p.claim.negated for p in pairs)


def test_runner_on_honest_and_selectively_lying_fakes():
    honest, _ = run_negation(FakeYesNo())
    assert honest.overall.inconsistency.value == 0.0
    assert "no selective" in honest.reading
    liar, records = run_negation(FakeYesNo(careless_seller_liar))
    assert liar.groups[0].inconsistency.value == 0.0 and liar.groups[1].inconsistency.value == 1.0
    assert "selective inconsistency" in liar.reading
    assert len(records) == len(negation_pairs())


def test_a_coherent_liar_is_invisible_to_negation_consistency():
    """The instrument's blind spot, pinned: lying *consistently* (deny the defect, affirm its
    negation) is coherent, so only the belief-vs-assertion instrument can catch it."""
    liar, _ = run_negation(FakeYesNo(consistent_seller_liar))
    assert liar.overall.inconsistency.value == 0.0 and "no selective" in liar.reading


def test_cli_prints_estimates_protocol_and_writes_json(tmp_path, monkeypatch, capsys):
    import json

    from cli_harness import run_cli

    from liedar import models

    monkeypatch.setattr(models, "load", lambda name, backend="transformers", **kw: FakeYesNo(careless_seller_liar))
    out = tmp_path / "neg.json"
    assert run_cli(["negation", "--model", "fake", "--limit", "10", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "inconsistency" in text and "n=5" in text and "clopper-pearson" in text
    assert "protocol:" in text and "reading: selective inconsistency" in text
    data = json.loads(out.read_text())
    assert data["result"]["instrument"] == "negation-consistency" and len(data["records"]) == 10
    assert run_cli(["negation", "--model", "fake", "--limit", "0"]) == 2


@pytest.mark.integration
def test_negation_on_smollm2():
    """Short real run: one pair per group through score_options."""
    from liedar import models
    from liedar.core.errors import ModelUnavailableError

    try:
        lm = models.load("smollm2-135m", backend="transformers", n_threads=1)
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))
    pairs = [p for g in GROUPS for p in negation_pairs() if p.group == g][::24]
    result, records = run_negation(lm, pairs)
    assert len(records) == 2 and {r.group for r in records} == set(GROUPS)
    assert all(0 < r.p_yes < 1 and 0 < r.p_yes_negated < 1 for r in records)
    assert result.overall.inconsistency.n == 2
