"""The greedy + conflict-bound path of Houtman-Maks: exact answers equal to the integer
program's on noisy 20-action logs (forced through the solver for comparison), every drop
set restores SARP, and many logs on joblib / Ray give the serial results in order."""

from __future__ import annotations

import importlib

import numpy as np

from liedar.behavioral.revealed import MenuChoiceLog
from liedar.behavioral.revealed.houtman_maks import houtman_maks, houtman_maks_many, restores_sarp

hm_mod = importlib.import_module("liedar.behavioral.revealed.houtman_maks")  # the package re-exports the function
LABELS = [f"a{i:02d}" for i in range(20)]


def _logs(n: int, seed: int = 0, n_menus: int = 200) -> list[MenuChoiceLog]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        rank = rng.permutation(20)
        menus = [sorted(rng.choice(20, size=rng.integers(2, 6), replace=False).tolist()) for _ in range(n_menus)]
        noise = float(rng.choice([0.01, 0.03, 0.08]))
        choices = []
        for m in menus:
            best = min(m, key=lambda i: rank[i])
            if rng.random() < noise:
                best = int(rng.choice([i for i in m if i != best]))
            choices.append(best)
        out.append(MenuChoiceLog([[LABELS[i] for i in m] for m in menus], [LABELS[c] for c in choices]))
    return out


def test_greedy_bound_equals_the_integer_program(monkeypatch):
    logs = _logs(12, seed=3)
    fast = [houtman_maks(log) for log in logs]
    assert any("greedy+bound" in r.method for r in fast), "the fast path never ran: the test would prove nothing"
    assert all(r.exact and restores_sarp(log, r.dropped) for r, log in zip(fast, logs))
    # the same logs with the fast path disabled: the solver alone
    monkeypatch.setattr(hm_mod, "_conflict_bound", lambda choice, others, weight: 0.0)
    monkeypatch.setattr(hm_mod, "_greedy_ranking", lambda s, c, o, w, stop_at=np.inf: (np.arange(s), 0.0))
    slow = [houtman_maks(log) for log in logs]
    assert all("greedy" not in r.method for r in slow)
    assert [r.n_drop for r in fast] == [r.n_drop for r in slow]


def test_conflict_bound_is_a_lower_bound_and_greedy_is_feasible():
    rng = np.random.default_rng(1)
    for _ in range(30):
        s, g = 7, 25
        choice = rng.integers(0, s, g)
        others = rng.random((g, s)) < 0.35
        others[np.arange(g), choice] = False
        others[np.arange(g), (choice + 1) % s] = True
        weight = rng.integers(1, 4, g)
        best = float((hm_mod._solve_by_enumeration(s, choice, others, weight) * weight).sum())
        assert weight.sum() - hm_mod._conflict_bound(choice, others, weight) >= best - 1e-9
        ranks, kept = hm_mod._greedy_ranking(s, choice, others, weight)
        assert sorted(ranks.tolist()) == list(range(s)) and kept <= best + 1e-9
        assert np.isclose(kept, hm_mod._kept_by_ranks(ranks[None], choice, others, s)[0] @ weight)


def test_many_logs_in_parallel_equal_serial(cluster):
    logs = _logs(6, seed=5, n_menus=120)
    serial = [r.dropped for r in houtman_maks_many(logs)]
    assert [r.dropped for r in houtman_maks_many(logs, n_jobs=2)] == serial
    assert [r.dropped for r in houtman_maks_many(logs, use_ray=True)] == serial
