from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from instrument_fakes import FakeMCQ  # noqa: E402

from liedar.behavioral.items.mcq import load_mcq_bank  # noqa: E402
from liedar.behavioral.runners.sandbagging import run_sandbagging  # noqa: E402
from liedar.behavioral.sandbagging import sandbagging_gap  # noqa: E402
from liedar.core.errors import InputError  # noqa: E402


def _gap(el, fr, chance=0.25):
    return sandbagging_gap(el, fr, protocol="test protocol", framing="danger", chance=chance)


def test_known_gap_counts_and_paired_test():
    el = {f"i{i}": True for i in range(50)}
    fr = {f"i{i}": i >= 20 for i in range(50)}  # 20 items lost under the framing
    r = _gap(el, fr)
    assert r.elicited.value == 1.0 and r.framed.value == pytest.approx(0.6)
    assert (r.only_elicited_correct, r.only_framed_correct) == (20, 0)
    assert r.gap.value == pytest.approx(0.4) and r.gap.lo > 0
    assert r.test.p_value < 1e-4 and "sandbagging signature" in r.reading
    assert r.elicited.kind == "capability" and r.framed.kind == "propensity"
    assert r.to_dict()["protocol"] == "test protocol"


def test_no_gap():
    el = {f"i{i}": i % 3 != 0 for i in range(60)}
    r = _gap(el, dict(el))
    assert r.gap.value == 0 and r.gap.lo < 0 < r.gap.hi and "no detectable gap" in r.reading


def test_ceiling_near_chance_is_not_called_honest():
    el = {f"i{i}": i % 4 == 0 for i in range(40)}  # 25% with 4 options
    r = _gap(el, dict(el))
    assert "near chance" in r.reading and "honest" in r.reading and r.warnings


@pytest.mark.parametrize(
    "el,fr,match",
    [({}, {}, "no elicited items"), ({"a": True}, {"b": True}, "do not pair")],
)
def test_bad_input(el, fr, match):
    with pytest.raises(InputError, match=match):
        _gap(el, fr)


def test_runner_detects_a_scripted_sandbagger():
    items = load_mcq_bank()[:40]
    answers = {it.question: it.answer for it in items}
    honest = run_sandbagging(FakeMCQ(answers), items)
    assert honest.elicited.value == 1.0 and honest.gap.value == 0.0
    sandbagger = run_sandbagging(FakeMCQ(answers, sandbag="dangerous-capability evaluation"), items)
    assert sandbagger.framed.value == 0.0 and sandbagger.gap.value == 1.0
    assert "sandbagging signature" in sandbagger.reading
