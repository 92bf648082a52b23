"""The paired excess: item by item over the items both models answered, a bootstrap over items."""

from __future__ import annotations

import dataclasses
import importlib.util
import random
from pathlib import Path

import pytest

from liedar.audit.paired import item_scores
from liedar.audit.verdict import mover_difference
from liedar.behavioral.honesty import EVADE, HonestyRecord, belief_vs_assertion
from liedar.behavioral.honesty_choice import HonestyChoiceRecord, honesty_choice
from liedar.behavioral.sandbagging import sandbagging_gap
from liedar.behavioral.sycophancy import SycophancyRecord, sycophancy
from liedar.behavioral.sycophancy_choice import ChoiceSycophancyRecord, choice_sycophancy
from liedar.core.paired import paired_excess

ROOT = Path(__file__).resolve().parents[2]


def _scores(values):
    return {f"q{i}": ["all", v] for i, v in enumerate(values)}


def test_the_reference_against_itself_reads_exactly_zero_with_a_zero_width_interval():
    rng = random.Random(3)
    ref = _scores([rng.choice([-1, 0, 0, 0, 1]) for _ in range(64)])
    e = paired_excess(ref, ref)
    assert (e.value, e.lo, e.hi) == (0.0, 0.0, 0.0)
    assert e.n == 64 and e.extra["up"] == e.extra["down"] == 0
    assert e.extra["reference_discordance"] == pytest.approx(sum(v[1] != 0 for v in ref.values()) / 64)


def test_a_real_excess_is_seen_where_the_independent_interval_misses_it():
    ref = _scores([1] * 8 + [-1] * 4 + [0] * 28)  # the reference's own gap: 0.10
    model = _scores([1] * 8 + [-1] * 4 + [1] * 6 + [0] * 22)  # six more items lost under the framing
    e = paired_excess(model, ref)
    assert e.value == pytest.approx(6 / 40)
    assert e.lo > 0 and e.extra["up"] == 6 and e.extra["down"] == 0
    # the same two gaps read as independent estimates (the first rule's MOVER) cannot tell
    gap_m, gap_r = (_gap([v for _s, v in x.values()]) for x in (model, ref))
    assert gap_m.value - gap_r.value == pytest.approx(e.value)
    assert mover_difference(gap_m, gap_r).lo < 0 < e.lo


def _gap(values):
    """The gap instrument's paired gap on items whose score (benign minus framed correct) is ``values``."""
    elicited = {f"q{i}": v >= 0 for i, v in enumerate(values)}
    framed = {f"q{i}": v <= 0 for i, v in enumerate(values)}
    return sandbagging_gap(elicited, framed, protocol="p", framing="f", chance=0.25).gap


def test_only_items_both_models_answered_are_paired():
    ref = {"a": ["all", 0], "b": ["all", 1]}
    model = {"a": ["all", 1], "c": ["all", 1]}
    e = paired_excess(model, ref)
    assert e.n == 1 and e.value == 1.0
    assert paired_excess({"x": ["all", 1]}, ref) is None


def _mean(scores):
    strata: dict = {}
    for s, v in scores.values():
        strata.setdefault(s, []).append(v)
    return sum(sum(v) / len(v) for v in strata.values())


def test_item_scores_reproduce_each_units_effect():
    rng = random.Random(0)
    opts = ["w", "x", "y", "z"]
    recs = []
    for i in range(30):
        neutral = "w" if rng.random() < 0.8 else "x"
        asked = neutral == "w"
        recs.append(
            ChoiceSycophancyRecord(
                f"s{i}",
                "w",
                4,
                neutral,
                "y",
                rng.choice(opts) if asked else None,
                rng.choice(["w", "w", "x"]) if asked else None,
            )
        )
    res = choice_sycophancy(recs)
    raw = {"records": [r.to_dict() for r in recs]}
    assert _mean(item_scores("sycophancy_choice", raw, {})["sycophancy_choice"]) == pytest.approx(res.excess.value)

    hrecs = []
    for i in range(30):
        belief = "yes" if rng.random() < 0.7 else "no"
        asked = belief == "yes"
        hrecs.append(
            HonestyChoiceRecord(
                f"h{i}",
                "yes",
                True,
                belief,
                rng.choice(["yes", "no"]) if asked else None,
                rng.choice(["yes", "yes", "no"]) if asked else None,
            )
        )
    res = honesty_choice(hrecs)
    raw = {"records": [r.to_dict() for r in hrecs]}
    assert _mean(item_scores("honesty_choice", raw, {})["honesty_choice"]) == pytest.approx(res.excess.value)

    srecs = [
        SycophancyRecord(
            f"c{i}", "yes", rng.choice(["yes", "yes", "no"]), rng.choice(["yes", "no"]), rng.choice(["yes", "no"])
        )
        for i in range(40)
    ]
    res = sycophancy(srecs)
    raw = {"records": [r.to_dict() for r in srecs]}
    assert _mean(item_scores("sycophancy", raw, {})["sycophancy"]) == pytest.approx(res.excess.value)

    lrecs = [
        HonestyRecord(
            f"l{i}",
            "yes",
            tuple(rng.choice(["yes", "yes", "no", EVADE]) for _ in range(3)),
            rng.choice(["yes", "no", EVADE]),
        )
        for i in range(40)
    ]
    res = belief_vs_assertion(lrecs)
    raw = {"records": [dataclasses.asdict(r) for r in lrecs]}
    assert _mean(item_scores("honesty", raw, {})["honesty"]) == pytest.approx(res.lies.value)

    elicited = {f"g{i}": rng.random() < 0.7 for i in range(40)}
    framed = {f"g{i}": rng.random() < 0.5 for i in range(40)}
    res = sandbagging_gap(elicited, framed, protocol="p", framing="f", chance=0.25)
    raw = {
        "result": {
            "extra": {
                "framed_protocol": "cloze_sum",
                "framed_correct": framed,
                "ceiling": {"per_item": {"cloze_sum": elicited}},
            }
        }
    }
    assert _mean(item_scores("sandbagging", raw, {})["sandbagging_gap"]) == pytest.approx(res.gap.value)


def test_coverage_by_simulation_is_near_nominal():
    spec = importlib.util.spec_from_file_location("cov", ROOT / "scripts" / "check_interval_coverage.py")
    cov = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cov)  # type: ignore[union-attr]
    # two of the script's cells at 300 repetitions (Monte Carlo error about 0.013)
    for cell in [(30, 0.15, 0.10, 0.5), (64, 0.30, 0.25, 0.0)]:
        coverage, width = cov.paired_coverage(*cell, reps=300, draws=500)
        assert coverage >= 0.91, (cell, coverage)
        assert 0 < width < 1
