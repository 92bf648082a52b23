"""The consistency detector: semantics, statistics, the threshold boundary and bad input."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from liedar.behavioral.consistency.detector import (
    KAPPA_RAMP_START,
    UNBACKED_INCONSISTENCY_WEIGHT,
    ConsistencyDetector,
    OptionOrderTrial,
    ParaphraseTrial,
    chance_modal_share,
    uniformity_test,
)
from liedar.core.errors import InputError

LABELS = ("w", "x", "y", "z")
CYCLIC = [LABELS[i:] + LABELS[:i] for i in range(4)]  # each label once in each position


def knower(n_items=12, rounds=CYCLIC):
    """Always picks label 'x' (the right answer) wherever it is shown."""
    return [
        OptionOrderTrial(f"q{i}", shown, shown.index("x"), correct=True) for i in range(n_items) for shown in rounds
    ]


def position_picker(n_items=12, position=2, rounds=CYCLIC):
    return [
        OptionOrderTrial(f"q{i}", shown, position, correct=shown[position] == "x")
        for i in range(n_items)
        for shown in rounds
    ]


def paraphrases(pattern):
    """pattern: list of per-item lists of correctness."""
    return [ParaphraseTrial(f"p{i}", v, c) for i, row in enumerate(pattern) for v, c in enumerate(row)]


# ----------------------------------------------------------------------------- semantics


def test_consistent_knower_is_not_flagged():
    res = ConsistencyDetector().detect_inconsistency(option_trials=knower())
    assert res.answer_consistency.value == 1.0
    assert res.position_bias_score == 0.0  # balanced shuffles: every position chosen equally
    assert not res.option_order.position_bias_significant
    assert res.confidence == 0.0 and not res.detected
    assert res.option_order.accuracy.value == 1.0


def test_consistency_is_by_label_not_position():
    # Same position every time but a different label each time -> modal share 1/4.
    res = ConsistencyDetector().analyze_option_order(position_picker(position=0))
    assert res.answer_consistency.value == pytest.approx(0.25)
    assert res.position_bias_score == pytest.approx(1.0)
    assert res.position_tests[0].attractor == 0


def test_pure_position_picker_is_flagged_by_attractor():
    res = ConsistencyDetector().detect_inconsistency(option_trials=position_picker())
    assert res.option_order.position_bias_significant
    assert res.option_order.position_bias_p_value < 1e-6
    assert res.confidence == pytest.approx(1.0)
    assert res.detected
    assert any("honest prompt" in r for r in res.recommendations)


def test_unbacked_inconsistency_is_capped_below_default_threshold():
    # Uniformly random labels, but positions exactly balanced: maximal inconsistency, no attractor.
    trials = []
    for i in range(40):
        for r, shown in enumerate(CYCLIC):
            trials.append(OptionOrderTrial(f"q{i}", shown, (i + r) % 4))  # balanced positions
    res = ConsistencyDetector().detect_inconsistency(option_trials=trials)
    assert not res.option_order.position_bias_significant
    assert res.option_order.inconsistency > 0.9
    assert res.confidence <= UNBACKED_INCONSISTENCY_WEIGHT < 0.6
    assert not res.detected


def test_mixed_option_counts_get_separate_position_tests():
    three = [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    trials = knower(6) + [OptionOrderTrial(f"t{i}", s, 0) for i in range(6) for s in three]
    res = ConsistencyDetector().analyze_option_order(trials)
    assert [t.n_options for t in res.position_tests] == [3, 4]
    assert res.position_tests[0].concentration == pytest.approx(1.0)
    # Bonferroni over the two groups
    assert res.position_bias_p_value == pytest.approx(min(1.0, 2 * min(t.p_value for t in res.position_tests)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=2, max_size=6).filter(lambda c: sum(c) > 0))
def test_concentration_bounds_and_formula(counts):
    k = len(counts)
    trials = []
    for pos, c in enumerate(counts):
        for j in range(c):
            shown = tuple(f"o{(m + j) % k}" for m in range(k))
            trials.append(OptionOrderTrial(f"i{len(trials) // 2}", shown, pos))
    if len(trials) < 2:
        return
    det = ConsistencyDetector(min_trials_per_item=2)
    # keep every item: pad to an even count by duplicating the last trial's item
    if len(trials) % 2:
        trials.append(OptionOrderTrial(trials[-1].item_id, trials[-1].presented_options, trials[-1].chosen_position))
    res = det.analyze_option_order(trials)
    got = res.position_tests[0]
    share = max(got.counts) / sum(got.counts)
    assert got.concentration == pytest.approx((share - 1 / k) / (1 - 1 / k))
    assert 0.0 <= got.concentration <= 1.0
    assert 0.0 <= res.signal <= 1.0


# ----------------------------------------------------------------------------- statistics


@pytest.mark.parametrize("n,k", [(2, 4), (3, 4), (5, 4), (4, 3), (6, 2)])
def test_chance_modal_share_matches_enumeration(n, k):
    shares = [max(np.bincount(seq, minlength=k)) / n for seq in itertools.product(range(k), repeat=n)]
    assert chance_modal_share(n, k) == pytest.approx(float(np.mean(shares)), abs=1e-12)


def test_asymptotic_test_matches_scipy():
    counts = [40, 20, 25, 15]
    stat, p, method = uniformity_test(counts)
    ref = stats.chisquare(counts)
    assert method == "chi-square"
    assert stat == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)


def test_exact_test_matches_brute_force():
    counts = [5, 1, 1, 0]  # expected 1.75 < 5
    stat, p, method = uniformity_test(counts)
    assert method == "exact multinomial"
    n, k = sum(counts), len(counts)
    ref = 0.0
    for seq in itertools.product(range(k), repeat=n):
        c = np.bincount(seq, minlength=k)
        if ((c - n / k) ** 2 / (n / k)).sum() >= stat - 1e-9:
            ref += (1 / k) ** n
    assert p == pytest.approx(ref)


def test_monte_carlo_test_is_seeded_and_sensible():
    counts = [6] + [0] * 20 + [1] * 5  # many cells, tiny expected counts
    a = uniformity_test(counts, seed=1)
    b = uniformity_test(counts, seed=1)
    assert a == b and a[2].startswith("monte-carlo")
    assert a[1] < 0.01
    uniform_counts = [1] * 26
    assert uniformity_test(uniform_counts, seed=1)[1] > 0.5


def test_kappa_hand_computed():
    # 2 items x 2 variants: item 1 right/right, item 2 right/wrong.
    res = ConsistencyDetector().analyze_paraphrase_invariance(paraphrases([[True, True], [True, False]]))
    p = 3 / 4
    observed = (2 * 1 + 0) / (2 + 2)  # pairs agreeing / all pairs (ordered)
    chance = p * p + (1 - p) ** 2
    assert res.observed_agreement == pytest.approx(observed)
    assert res.chance_agreement == pytest.approx(chance)
    assert res.kappa.value == pytest.approx((observed - chance) / (1 - chance))


def test_stable_capability_gives_kappa_one_and_no_signal():
    pattern = [[True] * 4] * 10 + [[False] * 4] * 10
    res = ConsistencyDetector().analyze_paraphrase_invariance(paraphrases(pattern))
    assert res.kappa.value == pytest.approx(1.0) and res.signal == 0.0


def test_all_correct_makes_kappa_undefined_not_a_signal():
    res = ConsistencyDetector().detect_inconsistency(paraphrase_trials=paraphrases([[True] * 3] * 5))
    assert res.paraphrase_agreement is None and res.confidence == 0.0 and not res.detected
    assert any("undefined" in r for r in res.recommendations)


@pytest.mark.parametrize("kappa,signal", [(1.0, 0.0), (KAPPA_RAMP_START, 0.0), (0.35, 0.5), (0.0, 1.0), (-0.3, 1.0)])
def test_kappa_ramp(kappa, signal):
    from liedar.behavioral.consistency.detector import _ramp_signal

    assert _ramp_signal(kappa) == pytest.approx(signal)


def test_independent_guesses_are_flagged_by_paraphrase():
    rng = np.random.default_rng(0)
    pattern = (rng.random((60, 4)) < 0.25).tolist()
    res = ConsistencyDetector().detect_inconsistency(paraphrase_trials=paraphrases(pattern))
    assert abs(res.paraphrase_agreement.value) < 0.2
    assert res.detected
    assert any("capability elicitation" in r for r in res.recommendations)


# ----------------------------------------------------------------------------- threshold


def _mixed_trials():
    rng = np.random.default_rng(7)
    trials = []
    for i in range(20):
        for _ in range(5):
            shown = tuple(rng.permutation(LABELS))
            pos = 1 if rng.random() < 0.7 else int(rng.integers(4))
            trials.append(OptionOrderTrial(f"q{i}", shown, pos))
    return trials


def test_threshold_boundary_is_greater_or_equal():
    trials = _mixed_trials()
    confidence = ConsistencyDetector().detect_inconsistency(option_trials=trials).confidence
    assert 0 < confidence < 1
    at = ConsistencyDetector(detection_threshold=confidence).detect_inconsistency(option_trials=trials)
    above = ConsistencyDetector(detection_threshold=math.nextafter(confidence, 1.0)).detect_inconsistency(
        option_trials=trials
    )
    assert at.confidence == confidence and at.detected  # equal -> detected
    assert not above.detected


def test_confidence_is_the_larger_signal():
    det = ConsistencyDetector()
    rng = np.random.default_rng(0)
    para = paraphrases((rng.random((40, 4)) < 0.25).tolist())
    res = det.detect_inconsistency(option_trials=knower(), paraphrase_trials=para)
    assert res.confidence == max(res.evidence["signals"].values())
    assert res.evidence["signals"]["option_order"] == 0.0


# ----------------------------------------------------------------------------- bad input


def test_no_trials():
    det = ConsistencyDetector()
    with pytest.raises(InputError, match="no trials"):
        det.detect_inconsistency()
    with pytest.raises(InputError, match="no trials"):
        det.detect_inconsistency(option_trials=[], paraphrase_trials=[])
    with pytest.raises(InputError, match="no option-order trials"):
        det.analyze_option_order([])
    with pytest.raises(InputError, match="no paraphrase trials"):
        det.analyze_paraphrase_invariance([])


def test_chosen_position_out_of_range():
    trials = knower(2) + [OptionOrderTrial("q0", LABELS, 4)]
    with pytest.raises(InputError, match="chosen_position=4 is out of range"):
        ConsistencyDetector().analyze_option_order(trials)
    with pytest.raises(InputError, match="out of range"):
        ConsistencyDetector().analyze_option_order([OptionOrderTrial("q0", LABELS, -1)] * 2)


def test_duplicate_labels_in_one_presentation():
    with pytest.raises(InputError, match="duplicate option label"):
        ConsistencyDetector().analyze_option_order([OptionOrderTrial("q0", ("a", "a", "b"), 0)] * 2)


def test_option_set_differs_between_trials():
    trials = [OptionOrderTrial("q0", ("a", "b", "c"), 0), OptionOrderTrial("q0", ("a", "b", "d"), 0)]
    with pytest.raises(InputError, match="option set differs"):
        ConsistencyDetector().analyze_option_order(trials)


def test_items_below_min_trials_are_skipped_and_counted():
    trials = knower(5) + [OptionOrderTrial("lonely", LABELS, 0)]
    para = paraphrases([[True, False, True]] * 4) + [ParaphraseTrial("single", 0, True)]
    res = ConsistencyDetector().detect_inconsistency(option_trials=trials, paraphrase_trials=para)
    assert res.option_order.n_items == 5
    assert res.evidence["option_order_items_skipped"] == 1
    assert res.evidence["paraphrase_items_skipped"] == 1
    assert any("skipped" in n for n in res.evidence["notes"])
    with pytest.raises(InputError, match="fewer than min_trials_per_item"):
        ConsistencyDetector(min_trials_per_item=5).analyze_option_order(knower(3))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"min_trials_per_item": 1}, "at least 2"),
        ({"detection_threshold": 0.0}, "detection_threshold"),
        ({"detection_threshold": 1.5}, "detection_threshold"),
        ({"significance_level": 1.0}, "significance_level"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(InputError, match=match):
        ConsistencyDetector(**kwargs)


def test_non_boolean_correctness():
    with pytest.raises(InputError, match="must be True or False"):
        ConsistencyDetector().analyze_paraphrase_invariance([ParaphraseTrial("a", 0, 1), ParaphraseTrial("a", 1, 0)])


# ----------------------------------------------------------------------------- output


def test_result_to_dict_is_strict_json():
    rng = np.random.default_rng(0)
    para = paraphrases((rng.random((10, 4)) < 0.5).tolist())
    res = ConsistencyDetector().detect_inconsistency(option_trials=_mixed_trials(), paraphrase_trials=para)
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert d["threshold_rule"] == "detected when confidence >= threshold"
    lo, hi = d["answer_consistency"]["lo"], d["answer_consistency"]["hi"]
    assert lo <= d["answer_consistency"]["value"] <= hi
    assert d["paraphrase_agreement"]["lo"] <= d["paraphrase_agreement"]["value"] <= d["paraphrase_agreement"]["hi"]
    json.dumps(OptionOrderTrial("a", LABELS, 1).to_dict())


def test_importable_without_torch():
    code = (
        "import sys; import behavioral.consistency, behavioral.consistency.sim, behavioral.consistency.runner;"
        "bad=[m for m in ('torch','transformers','llama_cpp','models','probes') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.permutations(range(4)))
def test_result_invariant_to_trial_order_and_label_renaming(seed, renaming):
    from liedar.behavioral.consistency.sim import (
        OptionOrderPopulation,
        ParaphrasePopulation,
        simulate_option_order,
        simulate_paraphrase,
    )

    trials = simulate_option_order(OptionOrderPopulation("p", 0.4, 0.5, n_items=8, n_shuffles=3), seed)
    para = simulate_paraphrase(ParaphrasePopulation("p", 0.4, n_items=8, n_variants=3), seed)
    rename = {f"opt{j}": f"label{renaming[j]}" for j in range(4)}
    renamed = [
        OptionOrderTrial(t.item_id, tuple(rename[x] for x in t.presented_options), t.chosen_position) for t in trials
    ]
    order = np.random.default_rng(seed).permutation(len(trials))
    det = ConsistencyDetector(intervals=False)
    a = det.detect_inconsistency(option_trials=trials, paraphrase_trials=para)
    b = det.detect_inconsistency(option_trials=[renamed[i] for i in order], paraphrase_trials=para[::-1])
    assert a.confidence == pytest.approx(b.confidence)
    assert a.answer_consistency.value == pytest.approx(b.answer_consistency.value)
    assert a.paraphrase_agreement is None or a.paraphrase_agreement.value == pytest.approx(b.paraphrase_agreement.value)
