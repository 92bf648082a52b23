"""Evaluation: AUROC intervals, thresholds from training data, recall at FPR, transfer, sweep."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.metrics import roc_auc_score

from liedar.core.errors import InputError
from liedar.probes.datasets import StatementSet
from liedar.probes.estimators import LogisticProbe
from liedar.probes.evaluation import (
    accuracy_at,
    auroc,
    choose_threshold,
    cross_validated,
    layer_sweep,
    leave_one_topic_out,
    loglik_scores,
    polarity_transfer,
    recall_at_fpr,
    train_test,
    transfer_matrix,
)


def test_auroc_matches_sklearn_and_delong_covers_truth() -> None:
    rng = np.random.default_rng(0)
    expected = norm.cdf(1.0 / np.sqrt(2))
    covered = 0
    for _ in range(200):
        y = rng.integers(0, 2, 200)
        s = rng.normal(size=200) + y
        est = auroc(s, y)
        assert np.isclose(est.value, roc_auc_score(y, s))
        covered += est.lo <= expected <= est.hi
        assert est.kind == "quality" and est.method == "delong"
    assert 0.90 <= covered / 200 <= 0.99  # nominal 95%


def test_cluster_bootstrap_is_seeded_and_wider_for_duplicated_items() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 100)
    s = rng.normal(size=100) + y
    y2, s2, g = np.repeat(y, 2), np.repeat(s, 2), np.repeat(np.arange(100), 2)  # exact twins
    naive, clustered = auroc(s2, y2), auroc(s2, y2, groups=g, seed=3)
    assert clustered.method == "cluster-bootstrap" and clustered == auroc(s2, y2, groups=g, seed=3)
    assert (clustered.hi - clustered.lo) > 1.2 * (naive.hi - naive.lo)


def test_auroc_bad_input() -> None:
    with pytest.raises(InputError, match="only one class"):
        auroc([0.1, 0.2], [1, 1])
    with pytest.raises(InputError, match="one label per score"):
        auroc([0.1, 0.2], [1])
    with pytest.raises(InputError, match="NaN"):
        auroc([np.nan, 0.2], [0, 1])


def test_threshold_comes_from_training_scores() -> None:
    train_s, train_y = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1])
    t = choose_threshold(train_s, train_y)
    assert 1.0 < t < 2.0
    acc = accuracy_at(np.array([0.5, 2.5, 1.6, 1.4]), np.array([0, 1, 0, 1]), t)
    assert acc.successes == 2 and acc.extra["threshold"] == t


def test_recall_at_fpr_uses_control_percentile() -> None:
    control = np.arange(1000.0)  # 99th percentile = 989.01
    deceptive = np.array([995.0, 999.5, 10.0, 500.0])
    est = recall_at_fpr(control, deceptive, fpr=0.01)
    assert est.successes == 2 and est.n == 4
    assert np.isclose(est.extra["threshold"], np.quantile(control, 0.99))
    assert est.extra["control_fpr_observed"] <= 0.011


def small_logistic() -> LogisticProbe:
    """Few Cs and inner folds: the same code path, fast enough for a unit test."""
    return LogisticProbe(Cs=(0.1, 1.0), cv=2)


def synthetic_topics(seed: int = 0, n_per_topic: int = 160) -> tuple[np.ndarray, StatementSet]:
    """Two topics sharing a truth direction, a third ('odd') with its own direction."""
    rng = np.random.default_rng(seed)
    d = 16
    shared, odd = np.linalg.qr(rng.normal(size=(d, 2)))[0].T
    X, labels, topics, groups = [], [], [], []
    for t in ("a", "b", "odd"):
        y = np.tile([0, 1], n_per_topic // 2)
        direction = odd if t == "odd" else shared
        X.append(rng.normal(size=(n_per_topic, d)) + 2.5 * np.outer(y, direction))
        labels.append(1 - y)  # truth labels: 1 = true
        topics += [t] * n_per_topic
        groups += [f"{t}:{i // 2}" for i in range(n_per_topic)]
    n = len(topics)
    s = StatementSet(
        "syn",
        [f"s{i}" for i in range(n)],
        np.concatenate(labels),
        np.array(topics),
        np.array(["affirmative"] * n),
        np.array(["plain"] * n),
        np.array(groups),
    )
    return np.vstack(X), s


def test_transfer_matrix_finds_what_transfers(tmp_path: Path) -> None:
    X, s = synthetic_topics()
    tm = transfer_matrix(small_logistic, X, s, n_splits=4, probe_name="logistic")
    a = tm.auroc_array()
    assert tm.train == tm.test == ["a", "b", "odd"]
    assert a[0, 0] > 0.9 and a[0, 1] > 0.9  # in-distribution and a -> b transfer
    assert 0.3 < a[0, 2] < 0.7 and 0.3 < a[2, 0] < 0.7  # unrelated direction: chance
    assert "train \\ test" in tm.to_markdown()
    assert tm.to_dict()["cells"][0][1]["kind"] == "quality" and tm.accuracy[0][1].kind == "quality"


def test_cross_validation_is_leakage_safe_on_memorisable_groups() -> None:
    """Each group holds a statement and its twin with opposite labels and near-identical
    activations: a leak across folds would be exploited; with group folds AUROC ~ 0.5."""
    rng = np.random.default_rng(4)
    n_groups, d = 80, 10
    base = rng.normal(size=(n_groups, d)) * 5
    X = np.repeat(base, 2, axis=0) + 0.01 * rng.normal(size=(2 * n_groups, d))
    labels = np.tile([1, 0], n_groups)
    s = StatementSet(
        "twins",
        [str(i) for i in range(2 * n_groups)],
        labels,
        np.array(["t"] * 2 * n_groups),
        np.array(["affirmative"] * 2 * n_groups),
        np.array(["plain"] * 2 * n_groups),
        np.repeat(np.arange(n_groups), 2).astype(str),
    )
    score = cross_validated("mass-mean", X, s, n_splits=5)
    assert score.auroc.lo < 0.5 < score.auroc.hi


def test_leave_one_topic_out() -> None:
    X, s = synthetic_topics(seed=1)
    out = leave_one_topic_out("mass-mean", X, s)
    assert set(out) == {"a", "b", "odd"}
    assert out["a"].auroc.value > 0.9 and out["odd"].auroc.value < 0.75


def test_layer_sweep_chooses_on_validation(tmp_path: Path) -> None:
    X, s = synthetic_topics(seed=2)
    rng = np.random.default_rng(5)
    noise = rng.normal(size=X.shape)
    layers = [0, 3, 6]
    X_layers = np.stack([noise, X, 0.5 * (X + noise)], axis=1)
    sweep = layer_sweep(small_logistic, X_layers[s.topic != "odd"], layers, s.subset(s.topic != "odd"), seed=0)
    assert sweep.chosen_layer == 3
    assert sweep.test_at_chosen.value > 0.9
    assert sweep.validation[0].lo < 0.5 + 0.15
    with pytest.raises(InputError, match="do not match"):
        layer_sweep("logistic", X_layers[:, :2], layers, s, seed=0)


def test_polarity_transfer_shows_a_probe_that_does_not_generalise_to_negation() -> None:
    """Affirmative truth along u; negated statements carry truth along an orthogonal v.
    A probe trained on affirmative items works on affirmative and fails on negated ones."""
    rng = np.random.default_rng(7)
    d, n_groups = 12, 120
    u, v = np.linalg.qr(rng.normal(size=(d, 2)))[0].T
    X, labels, pol, groups = [], [], [], []
    for gi in range(n_groups):
        truth = gi % 2
        for polarity, direction, lab in (("affirmative", u, truth), ("negated", v, 1 - truth)):
            X.append(rng.normal(size=d) + 3.0 * lab * direction)
            labels.append(lab)
            pol.append(polarity)
            groups.append(str(gi))
    n = len(labels)
    s = StatementSet(
        "pol",
        [str(i) for i in range(n)],
        np.array(labels),
        np.array(["t"] * n),
        np.array(pol),
        np.array(["plain"] * n),
        np.array(groups),
    )
    out = polarity_transfer("mass-mean", np.array(X), s, seed=0)
    assert out["affirmative->affirmative"].auroc.value > 0.9
    assert out["affirmative->negated"].auroc.lo < 0.5 < out["affirmative->negated"].auroc.hi
    assert out["affirmative->negated"].note == ""  # halves are group-disjoint: nothing dropped


class _FakeScorer:
    """score_options stand-in: log-probability = minus the number of 'x' in the option."""

    def score_options(self, prompt, options):
        assert prompt == "\n"
        return np.array([-float(o.count("x")) for o in options])


def test_loglik_scores_are_negated_log_probabilities() -> None:
    s = StatementSet(
        "ll",
        ["a", "xx", "x"],
        np.array([1, 0, 0]),
        np.array(["t"] * 3),
        np.array(["affirmative"] * 3),
        np.array(["plain"] * 3),
        np.array(["1", "2", "3"]),
    )
    assert loglik_scores(_FakeScorer(), s, batch=2).tolist() == [0.0, 2.0, 1.0]
    from liedar.models.chat import Dialogue, Message

    s.inputs[0] = Dialogue.of(Message("user", "hi", detect=True))
    with pytest.raises(InputError, match="plain-text"):
        loglik_scores(_FakeScorer(), s)


def test_transfer_refuses_when_every_test_item_leaks() -> None:
    X, s = synthetic_topics(seed=3)
    a = s.subset(s.topic == "a")
    with pytest.raises(InputError, match="shares a group with the training set"):
        train_test("mass-mean", X[s.topic == "a"], a, X[s.topic == "a"], a)
