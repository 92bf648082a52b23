"""Revealed-preference checks: properties against definitions and brute force."""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liedar.behavioral.revealed import (
    PARSE_FAIL,
    MenuChoiceLog,
    StochasticChoiceLog,
    check_sarp,
    check_warp,
    houtman_maks,
    iia_reversals,
    mixed_menu_share,
    regularity_violations,
    restores_sarp,
    rum_exact,
    rum_test,
)
from liedar.core.errors import InputError

# the package re-exports functions named like their modules, so fetch the modules themselves
hm_module = importlib.import_module("liedar.behavioral.revealed.houtman_maks")
rum_module = importlib.import_module("liedar.behavioral.revealed.rum")

FAST = settings(max_examples=40, deadline=None)


def labels(n: int) -> list[str]:
    return [f"x{i}" for i in range(n)]


@st.composite
def menus_over(draw, n_actions: int, max_menus: int, min_menus: int = 1):
    acts = labels(n_actions)
    k = draw(st.integers(min_menus, max_menus))
    return [
        draw(st.lists(st.sampled_from(acts), min_size=2, max_size=min(4, n_actions), unique=True)) for _ in range(k)
    ]


def choose_by_ranking(menus, ranking):
    pos = {a: i for i, a in enumerate(ranking)}
    return [min(m, key=pos.__getitem__) for m in menus]


@FAST
@given(data=st.data(), n=st.integers(2, 9))
def test_choices_from_one_ranking_pass_sarp_with_zero_houtman_maks(data, n):
    menus = data.draw(menus_over(n, 30))
    ranking = data.draw(st.permutations(labels(n)))
    log = MenuChoiceLog(menus, choose_by_ranking(menus, ranking))
    sarp = check_sarp(log)
    assert sarp.consistent and sarp.cycles == []
    assert check_warp(log).consistent
    assert iia_reversals(log) == []
    assert regularity_violations(log) == []
    hm = houtman_maks(log)
    assert hm.n_drop == 0 and hm.exact and hm.dropped == []


@FAST
@given(ranking=st.permutations(labels(5)), triple=st.sampled_from(list(itertools.combinations(range(5), 3))))
def test_planted_iia_reversal_is_found(ranking, triple):
    acts = labels(5)
    pairs = [list(p) for p in itertools.combinations(acts, 2)]
    t = [acts[i] for i in triple]
    choices = choose_by_ranking(pairs, ranking)
    pos = {a: i for i, a in enumerate(ranking)}
    best, second = sorted(t, key=pos.__getitem__)[:2]
    log = MenuChoiceLog(pairs + [t], choices + [second])  # the pair loser wins once a third is added
    rev = iia_reversals(log)
    assert any(r.pair_choice == best and r.larger_choice == second and set(r.larger_menu) == set(t) for r in rev)
    sarp = check_sarp(log)
    assert not sarp.consistent
    assert any(set(c) >= {best, second} for c in sarp.cycles)
    assert not check_warp(log).consistent
    assert houtman_maks(log).n_drop == 1


def brute_force_hm(log: MenuChoiceLog) -> int:
    obs = log.on_menu()
    for k in range(len(obs) + 1):
        for drop in itertools.combinations(obs, k):
            if restores_sarp(log, list(drop)):
                return k
    raise AssertionError("unreachable: dropping everything always restores SARP")


@pytest.mark.parametrize("force_milp", [False, True])
@FAST
@given(data=st.data(), n=st.integers(3, 7))
def test_houtman_maks_equals_brute_force(force_milp, data, n):
    menus = data.draw(menus_over(n, 9, min_menus=2))
    choices = [data.draw(st.sampled_from(m)) for m in menus]
    log = MenuChoiceLog(menus, choices)
    old = hm_module.ENUMERATE_UP_TO
    hm_module.ENUMERATE_UP_TO = 1 if force_milp else old
    try:
        hm = houtman_maks(log)
    finally:
        hm_module.ENUMERATE_UP_TO = old
    assert hm.exact and hm.lower_bound == hm.n_drop
    assert hm.n_drop == brute_force_hm(log)
    assert restores_sarp(log, hm.dropped)
    assert check_sarp(log).consistent == (hm.n_drop == 0)


def exact_mixture_log(rankings, weights, menus) -> StochasticChoiceLog:
    counts = []
    for m in menus:
        c = {a: 0 for a in m}
        for r, w in zip(rankings, weights):
            c[choose_by_ranking([m], r)[0]] += w
        counts.append(c)
    return StochasticChoiceLog.from_counts(menus, counts)


@pytest.mark.parametrize("force_column_generation", [False, True])
@FAST
@given(data=st.data())
def test_exact_mixtures_of_rankings_pass_the_exact_rum_test(force_column_generation, data):
    acts = labels(5)
    menus = [list(p) for p in itertools.combinations(acts, 2)] + [list(t) for t in itertools.combinations(acts, 3)][:5]
    k = data.draw(st.integers(1, 3))
    rankings = [data.draw(st.permutations(acts)) for _ in range(k)]
    weights = [data.draw(st.integers(1, 7)) for _ in range(k)]
    log = exact_mixture_log(rankings, weights, menus)
    old = rum_module.ENUMERATE_UP_TO
    rum_module.ENUMERATE_UP_TO = 2 if force_column_generation else old
    try:
        res = rum_exact(log)
    finally:
        rum_module.ENUMERATE_UP_TO = old
    assert res.consistent, res.l1_gap
    assert res.method == ("column-generation" if force_column_generation else "enumeration")
    assert abs(sum(w for _, w in res.mixture) - 1) < 1e-6


def test_mixture_of_two_rankings_over_eight_actions_is_exact_rum():
    acts = labels(8)
    rng = np.random.default_rng(3)
    menus = [list(rng.choice(acts, size=rng.integers(2, 5), replace=False)) for _ in range(40)]
    log = exact_mixture_log([acts, acts[::-1]], [3, 2], menus)
    res = rum_exact(log)
    assert res.method == "column-generation" and res.consistent


def test_regularity_violation_is_not_rum():
    # b wins 2/10 against a alone but 8/10 once c is added: regularity fails, so no mixture fits
    log = StochasticChoiceLog(
        [["a", "b"], ["a", "b", "c"], ["a", "c"], ["b", "c"]],
        [[0.8, 0.2], [0.1, 0.8, 0.1], [0.5, 0.5], [0.5, 0.5]],
        n_samples=10,
    )
    assert not rum_exact(log).consistent
    found = {(v.item, v.small_menu) for v in regularity_violations(log, tolerance=0.1)}
    assert found == {("b", ("a", "b")), ("b", ("b", "c"))}  # b's share rises above both of its pair shares
    assert rum_test(log, n_bootstrap=99, seed=1).reject


def test_rum_test_accepts_an_exact_mixture_and_is_seeded():
    acts = labels(5)
    menus = [list(p) for p in itertools.combinations(acts, 2)]
    log = exact_mixture_log([acts, acts[::-1]], [12, 8], menus)
    a = rum_test(log, n_bootstrap=49, seed=7)
    assert a.exact.consistent and not a.reject and a.p_value == 1.0
    assert a.to_dict() == rum_test(log, n_bootstrap=49, seed=7).to_dict()


def test_off_menu_choice_is_a_recorded_parse_fail_and_sarp_is_computed_both_ways():
    menus = [["a", "b"], ["b", "c"], ["a", "c"], ["a", "b"]]
    log = MenuChoiceLog(menus, ["a", "b", "a", "c"])  # c was not offered in the last menu
    assert [(p.observation, p.named) for p in log.parse_fails] == [(3, "c")]
    res = check_sarp(log)
    assert res.consistent and res.n_parse_fail == 1
    assert not res.consistent_with_parse_fail  # c over a and b contradicts b over c
    assert res.cycles_with_parse_fail
    unparsed = MenuChoiceLog(menus, ["a", "b", "a", PARSE_FAIL])
    assert unparsed.parse_fails[0].named is None and check_sarp(unparsed).consistent_with_parse_fail


def test_stochastic_parse_fails_are_counted_not_dropped():
    log = StochasticChoiceLog.from_counts([["a", "b"], ["a", "b", "c"]], [{"a": 3, "b": 1, "z": 2}, {"c": 4}])
    assert log.n_parse_fail() == 2 and log.parse_fail_counts[0] == {"z": 2}
    assert list(log.counts[0]) == [3, 1]
    assert mixed_menu_share(log).successes == 1 and mixed_menu_share(log).n == 2


@pytest.mark.parametrize(
    "menus, choices, match",
    [
        ([[]], ["a"], "empty"),
        ([["a"]], ["a"], "one action"),
        ([["a", "b", "a"]], ["a"], "more than once"),
        ([["a", "b"]], ["a", "b"], "one choice per menu"),
        ([], [], "empty"),
        (["ab"], ["a"], "list of action labels"),
    ],
)
def test_bad_menu_choice_logs_raise_input_error(menus, choices, match):
    with pytest.raises(InputError, match=match):
        MenuChoiceLog(menus, choices)


@pytest.mark.parametrize(
    "freqs, k, match",
    [
        ([[0.5, 0.5]], 3, "not a whole count"),
        ([[0.5, 0.4]], 10, "sum to"),
        ([[1.0]], 10, "one per action"),
        ([[0.5, 0.5]], 0, "at least 1"),
        ([[0.5, 0.5]], [10, 10], "one K per menu"),
    ],
)
def test_frequencies_that_do_not_match_k_raise_input_error(freqs, k, match):
    with pytest.raises(InputError, match=match):
        StochasticChoiceLog([["a", "b"]], freqs, n_samples=k)


def test_rum_test_rejects_bad_arguments():
    log = StochasticChoiceLog([["a", "b"]], [[0.5, 0.5]], n_samples=2)
    with pytest.raises(InputError, match="alpha"):
        rum_test(log, alpha=1.5)
    with pytest.raises(InputError, match="n_bootstrap"):
        rum_test(log, n_bootstrap=5)
    all_failed = StochasticChoiceLog.from_counts([["a", "b"]], [{PARSE_FAIL: 4}])
    with pytest.raises(InputError, match="parse-fail"):
        rum_exact(all_failed)


def test_houtman_maks_result_is_always_feasible_under_a_tiny_budget():
    rng = np.random.default_rng(0)
    acts = labels(12)
    menus = [list(rng.choice(acts, size=rng.integers(2, 6), replace=False)) for _ in range(200)]
    log = MenuChoiceLog(menus, [str(rng.choice(m)) for m in menus])
    hm = houtman_maks(log, time_budget=0.05)
    assert restores_sarp(log, hm.dropped)
    assert hm.lower_bound <= hm.n_drop
    if hm.exact:
        assert hm.lower_bound == hm.n_drop
    else:
        assert "component of 12 actions" in hm.note


def test_column_generation_finds_the_same_distance_as_enumeration():
    rng = np.random.default_rng(11)
    acts = labels(5)
    menus = [list(p) for p in itertools.combinations(acts, 2)] + [["x0", "x1", "x2"], ["x2", "x3", "x4"]]
    counts = []
    for m in menus:
        c = rng.multinomial(10, rng.dirichlet(np.ones(len(m))))
        counts.append(dict(zip(m, c.tolist())))
    log = StochasticChoiceLog.from_counts(menus, counts)
    full = rum_test(log, n_bootstrap=19, seed=0)
    old = rum_module.ENUMERATE_UP_TO
    rum_module.ENUMERATE_UP_TO = 2
    try:
        generated = rum_test(log, n_bootstrap=19, seed=0)
    finally:
        rum_module.ENUMERATE_UP_TO = old
    assert generated.exact.method == "column-generation" and full.exact.method == "enumeration"
    assert generated.exact.consistent == full.exact.consistent
    assert abs(generated.exact.l1_gap - full.exact.l1_gap) < 1e-6
    assert abs(generated.distance - full.distance) < 1e-4 * max(1.0, full.distance)
