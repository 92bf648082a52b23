"""Threshold calibration on synthetic scores: the held-out FPR lands on target."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liedar.core.errors import InputError
from liedar.probes.monitor_calibration import (
    calibrate_threshold,
    conformal_threshold,
    load_control_file,
)


@pytest.mark.parametrize("target", [0.01, 0.05, 0.2])
def test_achieved_fpr_matches_target_within_interval(target: float) -> None:
    rng = np.random.default_rng(1)
    honest = rng.normal(size=20_000)
    cal = calibrate_threshold(honest, target, seed=3)
    est = cal.achieved_fpr
    assert est.n == 10_000 and cal.n_calibration == 10_000
    assert est.lo <= target <= est.hi, (target, est)
    assert abs(est.value - target) < 0.3 * target + 0.005
    # the threshold is (near) the normal quantile it should be
    from scipy.stats import norm

    assert abs(cal.threshold - norm.ppf(1 - target)) < 0.1


def test_calibration_fpr_is_not_what_is_reported() -> None:
    """The reported FPR is measured on the held-out half, not the calibration half."""
    honest = np.r_[np.zeros(50), np.full(50, 10.0)]  # shuffled split sees both halves
    cal = calibrate_threshold(honest, 0.3, seed=0)
    assert cal.n_held_out + cal.n_calibration == 100
    assert 0.0 <= cal.achieved_fpr.value <= 1.0
    assert cal.achieved_fpr.method == "clopper-pearson"
    json.dumps(cal.to_dict())


@settings(max_examples=60, deadline=None)
@given(
    scores=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=300),
    fpr=st.floats(0.001, 0.5),
)
def test_conformal_threshold_flags_at_most_target_on_calibration(scores: list[float], fpr: float) -> None:
    t, guaranteed = conformal_threshold(scores, fpr)
    arr = np.asarray(scores)
    if guaranteed:
        # rank ceil((1-a)(n+1)) leaves at most floor(a(n+1)) - 1 < a(n+1) scores above
        assert np.sum(arr > t) <= fpr * (len(arr) + 1)
    else:
        assert t == arr.max() and np.sum(arr > t) == 0


def test_too_few_controls_carries_note() -> None:
    cal = calibrate_threshold(np.arange(20.0), 0.01, seed=0)
    assert "needed" in cal.note
    assert cal.calibration_fpr == 0.0 and float(cal.threshold).is_integer()  # the largest calibration score


@pytest.mark.parametrize("bad", [[], [1.0], [1.0, float("nan"), 2.0]])
def test_bad_scores_raise(bad: list[float]) -> None:
    with pytest.raises(InputError):
        calibrate_threshold(bad, 0.01)


@pytest.mark.parametrize("fpr", [0.0, 1.0, -0.1])
def test_bad_fpr_raises(fpr: float) -> None:
    with pytest.raises(InputError, match="FPR"):
        calibrate_threshold([0.0, 1.0, 2.0, 3.0], fpr)


def test_control_file_with_no_honest_items_raises(tmp_path) -> None:
    path = tmp_path / "control.jsonl"
    path.write_text(json.dumps({"prompt": "Q?", "response": "A.", "label": "deceptive"}) + "\n")
    with pytest.raises(InputError, match="no honest items"):
        load_control_file(path)
    path.write_text("")
    with pytest.raises(InputError, match="no honest items"):
        load_control_file(path)


def test_control_file_parses_both_forms_and_skips_deceptive(tmp_path) -> None:
    path = tmp_path / "control.jsonl"
    rows = [
        {"prompt": "Is it safe?", "response": "Yes."},
        {"prompt": "Is it safe?", "response": "No.", "label": "deceptive"},
        {
            "dialogue": [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello.", "detect": True},
            ],
            "label": "honest",
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    items = load_control_file(path)
    assert len(items) == 2 and items[0].response == "Yes." and items[1].response is None


@pytest.mark.parametrize(
    "line,match",
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"prompt": "", "response": "x"}), "non-empty"),
        (json.dumps({"prompt": "q", "response": "x", "label": "maybe"}), "label"),
        (json.dumps({"dialogue": [{"role": "user", "content": "hi"}]}), "detect"),
    ],
)
def test_control_file_bad_lines(tmp_path, line: str, match: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputError, match=match):
        load_control_file(path)


def test_missing_control_file(tmp_path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_control_file(tmp_path / "nope.jsonl")
