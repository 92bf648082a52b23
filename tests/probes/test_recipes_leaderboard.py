"""The leaderboard's split: a recipe's choices see built-in train + validation rows only."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from liedar.probes.datasets import StatementSet
from liedar.probes.recipes import get_recipe

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "probe_leaderboard.py"


@pytest.fixture(scope="module")
def lb():
    spec = importlib.util.spec_from_file_location("probe_leaderboard", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _synthetic(topics, n_pairs_per_topic: int, seed: int, signal_layer: int, d: int = 10, n_layers: int = 4):
    """Twinned statements per topic; truth readable along u at ``signal_layer`` only."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    X, lie, pol, top, grp = [], [], [], [], []
    for t in topics:
        for i in range(n_pairs_per_topic):
            ta = int(rng.integers(0, 2))
            base = rng.normal(size=(n_layers + 2, d))
            for p, tr in ((1, ta), (0, 1 - ta)):
                x = base + 0.3 * rng.normal(size=base.shape)
                x[signal_layer] += 1.5 * (2 * tr - 1) * u
                X.append(x)
                lie.append(1 - tr)
                pol.append("affirmative" if p else "negated")
                top.append(t)
                grp.append(f"{t}:{i}")
    n = len(lie)
    S = StatementSet(
        "syn",
        [f"s{k}" for k in range(n)],
        1 - np.array(lie),
        np.array(top),
        np.array(pol),
        np.full(n, "plain"),
        np.array(grp),
    )
    return np.array(X), S, list(range(n_layers + 2))


@pytest.mark.parametrize("recipe", ["default", "ttpd", "contrast-pair", "mix-builtin"])
def test_choices_never_see_test_rows_or_the_evaluation_topics(lb, monkeypatch, recipe) -> None:
    Xb, builtin, layers = _synthetic(lb.SELECTION_SETS, 30, seed=0, signal_layer=2)
    Xt, tiu, _ = _synthetic(("a", "b", "c"), 30, seed=1, signal_layer=2)
    seen = []
    original = lb.choose_layers

    def spy(recipe_, X, layers_, n_layers, train, train_rows, val, val_rows, **kw):
        seen.append((X, np.asarray(train_rows), np.asarray(val_rows)))
        return original(recipe_, X, layers_, n_layers, train, train_rows, val, val_rows, **kw)

    trained_on = []
    original_fit = lb.fit_recipe

    def fit_spy(recipe_, choice, X, layers_, S, **kw):
        trained_on.append(set(S.group.tolist()))
        return original_fit(recipe_, choice, X, layers_, S, **kw)

    monkeypatch.setattr(lb, "choose_layers", spy)
    monkeypatch.setattr(lb, "fit_recipe", fit_spy)
    out = lb.evaluate_recipe(get_recipe(recipe), Xt, tiu, Xb, builtin, layers, 4, seed=0)
    tr, va, te = lb.selection_split(builtin, 0)
    test_groups = set(builtin.group[te].tolist())
    assert trained_on and not any(g & test_groups for g in trained_on)  # no fit ever sees a test group
    assert any(g & set(builtin.group[tr].tolist()) for g in trained_on) == (recipe == "mix-builtin")
    assert len(seen) == 1
    X_seen, tr_seen, va_seen = seen[0]
    assert X_seen is Xb  # never the Truth-is-Universal activations
    assert set(tr_seen) == set(tr) and set(va_seen) == set(va)
    assert not set(builtin.group[te]) & set(builtin.group[np.concatenate([tr, va])])
    assert out["choice"]["layers"] == [2]
    # the evaluation data cannot move the choice: scramble TiU, same choice
    scrambled = Xt[np.random.default_rng(5).permutation(len(Xt))]
    again = lb.evaluate_recipe(get_recipe(recipe), scrambled, tiu, Xb, builtin, layers, 4, seed=0)
    assert again["choice"] == out["choice"] and again["selection"] == out["selection"]
    assert out["loto_mean"]["value"] > 0.8 and again["loto_mean"]["value"] < 0.7


def test_mean_auroc_interval_brackets_the_value(lb) -> None:
    rng = np.random.default_rng(0)
    parts = []
    for _ in range(3):
        y = rng.integers(0, 2, 80)
        parts.append((y + rng.normal(size=80), y, np.arange(80) // 2))
    est = lb.mean_auroc(parts, seed=0)
    assert est.lo < est.value < est.hi
    assert 0.6 < est.value < 0.9
