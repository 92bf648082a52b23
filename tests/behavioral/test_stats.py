"""Interval and test functions against scipy / statsmodels oracles and published values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from scipy import stats as sst
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from liedar.core.errors import InputError
from liedar.core.stats import (
    Estimate,
    clopper_pearson,
    cohen_kappa,
    excludes,
    mcnemar,
    mean_interval,
    newcombe_difference,
    paired_difference,
    proportion,
    rule_of_three,
    wilson,
)


def test_clopper_pearson_matches_the_issue_oracle():
    e = clopper_pearson(7, 50)
    assert (e.lo, e.hi) == pytest.approx((0.05819, 0.26740), abs=5e-6)
    ref = sst.binomtest(7, 50).proportion_ci()
    assert (e.lo, e.hi) == pytest.approx((ref.low, ref.high), abs=1e-10)


@pytest.mark.parametrize("k,n", [(0, 20), (1, 20), (7, 50), (25, 50), (50, 50), (3, 40), (199, 500)])
def test_wilson_and_cp_match_statsmodels(k, n):
    w, cp = wilson(k, n), clopper_pearson(k, n)
    assert (w.lo, w.hi) == pytest.approx(proportion_confint(k, n, method="wilson"), abs=1e-10)
    assert (cp.lo, cp.hi) == pytest.approx(proportion_confint(k, n, method="beta"), abs=1e-10)


def test_wilson_never_negative_where_wald_is():
    e = wilson(3, 40)  # Wald gives [-0.007, 0.157]
    assert e.lo > 0


def test_zero_events_state_the_rule_of_three():
    e = proportion(0, 30)
    assert rule_of_three(30) == pytest.approx(0.1)
    assert "rule of three" in e.note and "0.100" in e.note
    assert "rule of three" in str(e)


@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
@settings(max_examples=200, deadline=None)
def test_intervals_contain_the_estimate_and_stay_in_range(kn):
    k, n = kn
    for e in (wilson(k, n), clopper_pearson(k, n)):
        assert 0.0 <= e.lo <= e.value <= e.hi <= 1.0


def test_newcombe_matches_statsmodels_and_the_published_example():
    e = newcombe_difference(56, 70, 48, 80)  # Newcombe (1998) example: 0.0524 to 0.3339
    assert (e.lo, e.hi) == pytest.approx((0.0524, 0.3339), abs=5e-5)
    for counts in [(56, 70, 48, 80), (9, 10, 3, 10), (0, 20, 0, 25), (10, 10, 0, 20)]:
        e = newcombe_difference(*counts)
        ref = confint_proportions_2indep(*counts, method="newcomb", compare="diff")
        assert (e.lo, e.hi) == pytest.approx(ref, abs=1e-9)


def _tango_by_optimisation(delta: float, b: int, c: int, n: int) -> float:
    """Oracle: Tango's score statistic with the restricted MLE of p21 found numerically
    (maximising the multinomial likelihood under p12 - p21 = delta), not by formula."""
    a_d = n - b - c  # concordant pairs

    def negll(q21: float) -> float:
        q12 = q21 + delta
        qc = 1 - q12 - q21
        if min(q12, q21, qc) <= 0:
            return 1e100
        return -(b * math.log(q12) + c * math.log(q21) + a_d * math.log(qc))

    lo_q = max(0.0, -delta) + 1e-12
    hi_q = (1 - delta) / 2 - 1e-12
    q21 = optimize.minimize_scalar(negll, bounds=(lo_q, hi_q), method="bounded", options={"xatol": 1e-13}).x
    return (b - c - n * delta) / math.sqrt(n * (2 * q21 + delta * (1 - delta)))


@pytest.mark.parametrize("b,c,n", [(40, 20, 160), (5, 1, 30), (12, 3, 50), (2, 9, 40)])
def test_tango_limits_solve_the_score_equation(b, c, n):
    e = paired_difference(b, c, n)
    z = sst.norm.ppf(0.975)
    assert e.value == pytest.approx((b - c) / n)
    assert _tango_by_optimisation(e.lo, b, c, n) == pytest.approx(z, abs=1e-4)
    assert _tango_by_optimisation(e.hi, b, c, n) == pytest.approx(-z, abs=1e-4)


def test_tango_is_antisymmetric_and_bounded():
    a, b = paired_difference(7, 2, 40), paired_difference(2, 7, 40)
    assert (a.lo, a.hi) == pytest.approx((-b.hi, -b.lo), abs=1e-9)
    full = paired_difference(10, 0, 10)
    assert full.hi == 1.0 and 0 < full.lo < 1
    none = paired_difference(0, 0, 30)
    assert none.lo < 0 < none.hi


def test_tango_paired_is_narrower_than_independent_when_pairs_agree():
    # 50 items, 40 right in both conditions, 6 right only in condition 1, 1 only in 2.
    paired = paired_difference(6, 1, 50)
    indep = newcombe_difference(46, 50, 41, 50)
    assert paired.hi - paired.lo < indep.hi - indep.lo


@pytest.mark.parametrize("b,c", [(3, 12), (0, 6), (10, 10), (30, 12), (40, 25)])
def test_mcnemar_matches_statsmodels(b, c):
    table = [[20, b], [c, 20]]
    ours = mcnemar(b, c)
    ref = sm_mcnemar(table, exact=b + c < 25, correction=True)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert ("exact" in ours.method) == (b + c < 25)


def test_mcnemar_without_discordant_pairs():
    assert mcnemar(0, 0).p_value == 1.0


def test_kappa_matches_statsmodels_and_sklearn():
    from sklearn.metrics import cohen_kappa_score

    table = np.array([[20, 5, 1], [3, 15, 2], [1, 2, 11]])
    a = [i for i in range(3) for j in range(3) for _ in range(table[i, j])]
    b = [j for i in range(3) for j in range(3) for _ in range(table[i, j])]
    e = cohen_kappa(a, b)
    ref = cohens_kappa(table)
    assert e.value == pytest.approx(ref.kappa) == pytest.approx(cohen_kappa_score(a, b))
    assert (e.lo, e.hi) == pytest.approx((ref.kappa_low, ref.kappa_upp), abs=1e-10)
    assert e.kind == "quality"


def test_kappa_bad_input():
    with pytest.raises(InputError, match="zero"):
        cohen_kappa([], [])
    with pytest.raises(InputError, match="paired"):
        cohen_kappa(["a"], ["a", "b"])
    assert math.isnan(cohen_kappa(["a", "a"], ["a", "a"]).value)


def test_mean_interval_matches_scipy_t():
    vals = [1.0, 1.2, 0.9, 1.1]
    e = mean_interval(vals)
    lo, hi = sst.t.interval(0.95, 3, loc=np.mean(vals), scale=sst.sem(vals))
    assert (e.lo, e.hi) == pytest.approx((lo, hi))
    assert math.isinf(mean_interval([0.5]).hi)


def test_bad_counts_raise_input_error():
    for call in (
        lambda: wilson(0, 0),
        lambda: wilson(5, 3),
        lambda: paired_difference(5, 6, 10),
        lambda: proportion(1, 2, interval="wald"),
        lambda: mcnemar(-1, 2),
    ):
        with pytest.raises(InputError):
            call()


def test_estimate_roundtrip_and_excludes():
    e = proportion(40, 50, "capability")
    assert Estimate.from_dict(e.to_dict()) == e
    assert excludes(e, 0.25) and not excludes(e, 0.8)


def test_mean_interval_respects_bounds():
    e = mean_interval([0.05, 0.3], bounds=(0.0, 1.0))
    assert e.lo == 0.0 and e.hi <= 1.0
    assert mean_interval([0.5], bounds=(0.0, 1.0)).hi == 1.0


def test_the_shares_interval_takes_items_as_units_and_never_has_zero_width():
    from liedar.core.stats import clopper_pearson, clopper_pearson_shares

    # a model saying Yes to everything scores exactly 0.5 on each item: the interval stays wide
    half = clopper_pearson_shares([0.5] * 131)
    assert half.value == 0.5 and half.lo < 0.5 < half.hi and half.hi - half.lo > 0.1
    # whole shares: exactly Clopper-Pearson over the items
    cp = clopper_pearson(40, 66)
    whole = clopper_pearson_shares([1.0] * 40 + [0.0] * 26)
    assert (whole.lo, whole.hi) == pytest.approx((cp.lo, cp.hi))
    assert clopper_pearson_shares([1.0] * 5).hi == 1.0
    assert clopper_pearson_shares([0.0] * 5).lo == 0.0


@pytest.mark.parametrize("shares", [[], [1.2], [-0.1, 0.5]])
def test_the_shares_interval_refuses_no_items_or_a_share_outside_zero_one(shares):
    from liedar.core.errors import InputError
    from liedar.core.stats import clopper_pearson_shares

    with pytest.raises(InputError, match=r"in \[0, 1\]"):
        clopper_pearson_shares(shares)
