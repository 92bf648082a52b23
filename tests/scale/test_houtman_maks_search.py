"""The pieces of the fast exact Houtman-Maks path, each against brute force on random
instances (hypothesis): the vectorised move scores, the cycle-packing lower bound, the
greedy-plus-bound answer itself (compared with full enumeration of orderings, and with the
integer program on 20-action logs), and the wide-component fallbacks (more than 56/62
actions: Python integers instead of int64 bit rows)."""

from __future__ import annotations

import importlib
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from liedar.behavioral.revealed import MenuChoiceLog
from liedar.behavioral.revealed.houtman_maks import houtman_maks, restores_sarp

hm = importlib.import_module("liedar.behavioral.revealed.houtman_maks")  # the package re-exports the function

SOME = settings(max_examples=60, deadline=None)


@st.composite
def groups(draw, s_min: int = 3, s_max: int = 8):
    """A component sub-problem: (s, choice, others, weight); every group offers another item."""
    s = draw(st.integers(s_min, s_max))
    n_g = draw(st.integers(1, 14))
    choice = np.array(draw(st.lists(st.integers(0, s - 1), min_size=n_g, max_size=n_g)), dtype=np.int64)
    others = np.zeros((n_g, s), dtype=bool)
    for g in range(n_g):
        menu = draw(st.lists(st.integers(0, s - 1), min_size=1, max_size=min(4, s - 1), unique=True))
        menu = [b for b in menu if b != choice[g]] or [(int(choice[g]) + 1) % s]
        others[g, menu] = True
    weight = np.array(draw(st.lists(st.integers(1, 3), min_size=n_g, max_size=n_g)), dtype=np.int64)
    return s, choice, others, weight


def _best_kept(s, choice, others, weight) -> float:
    return float(hm._solve_by_enumeration(s, choice, others, weight) @ weight)


@SOME
@given(data=groups(), seed=st.integers(0, 10_000))
def test_local_search_ends_where_no_single_move_helps(data, seed):
    """The interval/difference-array move scores are right: at the local search's answer no
    item moved to any position (scored the slow way) keeps more weight, and the reported
    kept weight is the ranking's."""
    s, choice, others, weight = data
    w = weight.astype(float)
    og, oi = np.nonzero(others)
    start = np.random.default_rng(seed).permutation(s)
    ranks, kept, sat, _, _ = hm._local_search(start, (s, choice, others, w, og, oi), np.inf)
    assert sorted(ranks.tolist()) == list(range(s))
    slow = hm._kept_by_ranks(ranks[None], choice, others, s)[0]
    assert np.array_equal(sat, slow) and np.isclose(kept, slow @ w)
    for item, pos in itertools.product(range(s), range(s)):
        moved = hm._moved(ranks, item, pos)
        assert hm._kept_by_ranks(moved[None], choice, others, s)[0] @ w <= kept + 1e-9


@SOME
@given(data=groups())
def test_cycle_packing_bound_is_a_lower_bound_and_greedy_is_feasible(data):
    s, choice, others, weight = data
    best = _best_kept(s, choice, others, weight)
    assert weight.sum() - hm._conflict_bound(choice, others, weight) >= best - 1e-9
    ranks, kept = hm._greedy_ranking(s, choice, others, weight)
    assert sorted(ranks.tolist()) == list(range(s)) and kept <= best + 1e-9
    assert np.isclose(kept, hm._kept_by_ranks(ranks[None], choice, others, s)[0] @ weight)


def test_cycle_packing_finds_a_long_cycle_the_pairs_miss():
    """a > b > c > d > a from four pair menus: no two observations conflict directly, yet
    one must go; the bound must say so (a pairs-only bound says 0)."""
    choice = np.array([0, 1, 2, 3])
    others = np.zeros((4, 4), dtype=bool)
    others[[0, 1, 2, 3], [1, 2, 3, 0]] = True
    assert hm._conflict_bound(choice, others, np.ones(4, dtype=np.int64)) == 1.0


def _noisy_log(rng, n_actions: int, n_menus: int, noise: float) -> MenuChoiceLog:
    labels = [f"a{i:02d}" for i in range(n_actions)]
    rank = rng.permutation(n_actions)
    menus = [sorted(rng.choice(n_actions, size=rng.integers(2, 5), replace=False).tolist()) for _ in range(n_menus)]
    choices = []
    for m in menus:
        best = min(m, key=lambda i: rank[i])
        if rng.random() < noise:
            best = int(rng.choice([i for i in m if i != best]))
        choices.append(best)
    return MenuChoiceLog([[labels[i] for i in m] for m in menus], [labels[c] for c in choices])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(7, 8), noise=st.sampled_from([0.05, 0.15, 0.3]))
def test_greedy_path_equals_enumeration_of_all_orderings(seed, n, noise):
    """7-8 actions: the fast path (greedy + bound, solver if they do not meet) against all
    n! orderings (enumeration forced by raising its threshold)."""
    log = _noisy_log(np.random.default_rng(seed), n, 40, noise)
    fast = houtman_maks(log)
    old = hm.ENUMERATE_UP_TO
    hm.ENUMERATE_UP_TO = 8
    try:
        ref = houtman_maks(log)
    finally:
        hm.ENUMERATE_UP_TO = old
    assert "enumeration" in ref.method or ref.method == "acyclic"
    assert fast.exact and fast.n_drop == ref.n_drop == fast.lower_bound
    assert restores_sarp(log, fast.dropped)


def test_greedy_path_equals_the_integer_program_on_20_actions(monkeypatch):
    rng = np.random.default_rng(11)
    logs = [_noisy_log(rng, 20, 300, float(rng.choice([0.01, 0.03, 0.06]))) for _ in range(10)]
    fast = [houtman_maks(log) for log in logs]
    assert sum("milp" not in r.method for r in fast) >= 5, "the fast path hardly ran: the test would prove little"
    monkeypatch.setattr(hm, "_conflict_bound", lambda choice, others, weight: 0.0)
    monkeypatch.setattr(hm, "_greedy_ranking", lambda s, c, o, w, stop_at=np.inf: (np.arange(s), 0.0))
    slow = [houtman_maks(log) for log in logs]
    assert all("greedy" not in r.method for r in slow)
    assert [r.n_drop for r in fast] == [r.n_drop for r in slow]
    assert all(r.exact and restores_sarp(log, r.dropped) for r, log in zip(fast, logs))


def test_components_wider_than_int64_bit_rows():
    """A 70-action cycle (pair menus a_i over a_i+1, and a_69 over a_0): one drop, found and
    proven by greedy + cycle packing, through the Python-integer paths."""
    n = 70
    labels = [f"x{i:02d}" for i in range(n)]
    menus = [[labels[i], labels[(i + 1) % n]] for i in range(n)]
    log = MenuChoiceLog(menus, [labels[i] for i in range(n)])
    res = houtman_maks(log)
    assert res.exact and res.n_drop == 1 and res.largest_component == n
    assert res.method == "greedy+bound" and restores_sarp(log, res.dropped)
    groups_wide = hm._component_groups((1 << n) - 1, n, np.arange(n), hm._menu_matrix(list(log.menu_masks), n))
    choice, others, weight, members, inverse = groups_wide
    assert others.shape == (n, n) and weight.tolist() == [1] * n
    assert all(others[inverse[k], (choice[inverse[k]] + 1) % n] for k in range(n))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 9), n_menus=st.integers(2, 60))
def test_short_and_long_log_sub_problems_agree(seed, n, n_menus):
    """The Python-integer grouping (short logs) and the array one give the same groups."""
    rng = np.random.default_rng(seed)
    labels = [f"x{i}" for i in range(n)]
    menus = [list(rng.choice(labels, size=int(rng.integers(2, min(4, n) + 1)), replace=False)) for _ in range(n_menus)]
    log = MenuChoiceLog(menus, [str(rng.choice(m)) for m in menus])
    obs = log.revealed_observations(False)
    from liedar.behavioral.revealed.sarp import revealed_relation

    oc = np.array([c for _, c, _ in obs], dtype=np.int64)
    menu = hm._menu_matrix([m for _, _, m in obs], n)
    for comp in hm.cyclic_components(revealed_relation(n, obs)):
        a = hm._component_groups_small(comp, n, obs)
        b = hm._component_groups(comp, n, oc, menu)

        def canon(out):
            choice, others, weight, members, inverse = out
            rows = {int(m): (int(choice[g]), tuple(others[g].tolist())) for m, g in zip(members, inverse)}
            groups = sorted((int(c), tuple(o.tolist()), int(w)) for c, o, w in zip(choice, others, weight))
            return rows, groups

        assert canon(a) == canon(b)
