from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from instrument_fakes import FakeYesNo, consistent_seller_liar  # noqa: E402

from liedar.behavioral.honesty import EVADE, HonestyRecord, belief_vs_assertion  # noqa: E402
from liedar.behavioral.items.beliefs import belief_items  # noqa: E402
from liedar.behavioral.runners.honesty import run_honesty  # noqa: E402
from liedar.core.errors import InputError  # noqa: E402


def test_truthful_yet_dishonest_and_honest_yet_wrong_are_separated():
    # Believes "no" (wrong) on 10 items but asserts "yes" (right) under pressure: truthful, dishonest.
    truthful_liar = [HonestyRecord(f"a{i}", "yes", ("no", "no", "no"), "yes") for i in range(10)]
    # Believes "no" (wrong) and asserts "no": honest yet wrong.
    honest_wrong = [HonestyRecord(f"b{i}", "yes", ("no", "no", "no"), "no") for i in range(10)]
    a = belief_vs_assertion(truthful_liar)
    b = belief_vs_assertion(honest_wrong)
    assert a.truthfulness.value == 1.0 and a.honesty.value == 0.0 and a.lies.value == 1.0
    assert b.truthfulness.value == 0.0 and b.honesty.value == 1.0 and b.lies.value == 0.0


def test_no_belief_and_evasions_are_counted_separately():
    recs = [
        HonestyRecord("x", "yes", ("yes", "no", "yes"), "yes"),  # beliefs disagree: no belief
        HonestyRecord("y", "yes", ("yes", "yes", EVADE), "yes"),  # an evasive belief prompt: no belief
        HonestyRecord("z", "yes", ("yes", "yes", "yes"), EVADE),  # belief, evasive assertion
        HonestyRecord("w", "no", ("no", "no", "no"), "yes"),
    ]  # belief, lie
    r = belief_vs_assertion(recs)
    assert r.n_with_belief == 2 and r.belief_rate.value == 0.5
    assert r.evasions.value == 0.5 and r.lies.value == 0.5 and r.honesty.value == 0.0
    assert r.evasions.value + r.lies.value + r.honesty.value == pytest.approx(1.0)
    assert r.truthfulness.value == pytest.approx(2 / 4)


def test_no_beliefs_at_all():
    r = belief_vs_assertion([HonestyRecord("x", "yes", ("yes", "no"), "yes")])
    assert r.n_with_belief == 0 and "no consistent beliefs" in r.reading


@pytest.mark.parametrize(
    "recs,match",
    [
        ([], "no belief/assertion records"),
        ([HonestyRecord("x", "yes", ("yes",), "yes")], "at least two neutral prompts"),
        ([HonestyRecord("x", "perhaps", ("yes", "yes"), "yes")], "reference='perhaps'"),
        ([HonestyRecord("x", "yes", ("yes", "yes"), "sure")], "assertion='sure'"),
    ],
)
def test_bad_input(recs, match):
    with pytest.raises(InputError, match=match):
        belief_vs_assertion(recs)


def test_runner_catches_the_coherent_liar():
    honest, _ = run_honesty(FakeYesNo())
    assert honest.honesty.value == 1.0 and honest.truthfulness.value == 1.0
    liar, records = run_honesty(FakeYesNo(consistent_seller_liar))
    # It lies exactly on the sheets that state a defect (half the bank).
    assert liar.lies.value == pytest.approx(0.5) and liar.belief_accuracy.value == 1.0
    assert liar.truthfulness.value == pytest.approx(0.5)
    assert len(records) == len(belief_items())


def test_runner_evasion_margin():
    undecided = FakeYesNo(confidence=0.01)  # P(yes) within 0.0025 of 0.5 on every prompt
    r, _ = run_honesty(undecided, evade_margin=0.05)
    assert r.n_with_belief == 0
