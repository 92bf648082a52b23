"""Probes as scikit-learn estimators: planted directions, sklearn conformance, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from liedar.core.errors import InputError
from liedar.probes.estimators import PROBE_NAMES, TTPD, LATProbe, LogisticProbe, MassMeanProbe, make_probe
from liedar.probes.evaluation import auroc

D = 24


def planted(n: int, separation: float, seed: int, d: int = D) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian blobs whose classes differ by ``separation`` along one unit direction u.
    The best linear score has AUROC Phi(separation / sqrt(2))."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + np.outer(y * separation, u) + 3.0  # offset: probes must handle it
    return X, y, u


@pytest.mark.parametrize("name", PROBE_NAMES)
def test_planted_direction_is_recovered_with_known_auroc(name: str) -> None:
    X, y, u = planted(600, 1.5, seed=1)
    rng = np.random.default_rng(2)  # a fresh test sample along the same direction u
    y_test = rng.integers(0, 2, 3000)
    X_test = rng.normal(size=(3000, D)) + np.outer(y_test * 1.5, u) + 3.0
    probe = make_probe(name).fit(X, y)
    expected = norm.cdf(1.5 / np.sqrt(2))  # 0.856: the best any linear score can do
    oracle = auroc(X_test @ u, y_test)  # the same with this test sample's noise
    assert abs(oracle.value - expected) < 0.02
    got = auroc(probe.decision_function(X_test), y_test)
    tolerance = 0.06 if name == "lat" else 0.03  # LAT ignores labels when finding its axis
    assert oracle.value - tolerance < got.value <= oracle.value + 0.01, (name, got, oracle)
    cosine = float(probe.direction_ @ u)
    assert cosine > (0.7 if name == "lat" else 0.85), (name, cosine)  # points to the lie class


def test_no_signal_gives_chance_auroc() -> None:
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(400, D)), rng.integers(0, 2, 400)
    X_test, y_test = rng.normal(size=(2000, D)), rng.integers(0, 2, 2000)
    est = auroc(LogisticProbe().fit(X, y).decision_function(X_test), y_test)
    assert est.lo < 0.5 < est.hi


@pytest.mark.parametrize(
    "probe",
    [LogisticProbe(Cs=(0.1, 1.0), cv=2), MassMeanProbe(), MassMeanProbe(covariance="within"), TTPD(), LATProbe()],
    ids=["logistic", "mass-mean", "mass-mean-cov", "ttpd", "lat"],
)
def test_check_estimator_passes(probe) -> None:
    results = check_estimator(probe, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert not failed


@pytest.mark.parametrize("name", PROBE_NAMES)
def test_sklearn_plumbing(name: str) -> None:
    X, y, _ = planted(200, 2.0, seed=4)
    probe = make_probe(name)
    assert probe.fit(X, y) is probe
    fresh = clone(probe)
    assert not hasattr(fresh, "coef_")
    proba = probe.predict_proba(X)
    assert proba.shape == (200, 2) and np.allclose(proba.sum(axis=1), 1)
    # decision_function and predict agree, higher = classes_[1]
    assert np.array_equal(probe.predict(X), probe.classes_[(probe.decision_function(X) > 0).astype(int)])
    pipe = make_pipeline(StandardScaler(), make_probe(name)).fit(X, y)
    assert pipe.decision_function(X).shape == (200,)
    assert np.isclose(np.linalg.norm(probe.direction_), 1.0)


def test_logistic_choses_C_on_training_folds_with_groups() -> None:
    X, y, _ = planted(120, 2.0, seed=5)
    groups = np.repeat(np.arange(30), 4)
    probe = LogisticProbe(Cs=(0.001, 1.0)).fit(X, y, groups=groups)
    assert float(probe.C_) in (0.001, 1.0)


def test_ttpd_uses_polarity_to_separate_negated_statements() -> None:
    """Truth flips sign along a polarity-sensitive direction for negated statements; the
    general truth direction tau_G is shared. TTPD must classify both polarities."""
    rng = np.random.default_rng(6)
    n, d = 800, D
    tau_g, tau_p, pol_dir = np.linalg.qr(rng.normal(size=(d, 3)))[0].T
    t = rng.choice([-1.0, 1.0], n)
    p = rng.choice([-1.0, 1.0], n)
    X = np.outer(t, tau_g) + 2.0 * np.outer(t * p, tau_p) + 2.0 * np.outer(p, pol_dir) + 0.5 * rng.normal(size=(n, d))
    y = (t > 0).astype(int)
    probe = TTPD().fit(X, y, polarity=(p > 0).astype(int))
    assert abs(probe.direction_ @ tau_g) > 0.9
    assert auroc(probe.decision_function(X), y).value > 0.9


@pytest.mark.parametrize("name", PROBE_NAMES)
def test_bad_training_input_raises_input_error(name: str) -> None:
    X, y, _ = planted(40, 2.0, seed=7)
    with pytest.raises(InputError, match="only one class"):
        make_probe(name).fit(X, np.zeros(40, int))
    with pytest.raises(InputError, match="inconsistent numbers of samples"):
        make_probe(name).fit(X, y[:-1])
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match="NaN"):
        make_probe(name).fit(bad, y)
    bad[3, 2] = np.inf
    with pytest.raises(InputError, match="infinity"):
        make_probe(name).fit(bad, y)
    fitted = make_probe(name).fit(X, y)
    with pytest.raises(InputError, match="NaN"):
        fitted.decision_function(np.full((1, D), np.nan))


def test_unknown_probe_name() -> None:
    with pytest.raises(InputError, match="unknown probe type"):
        make_probe("svm")


def test_lat_with_explicit_pairs() -> None:
    X, y, u = planted(300, 2.0, seed=8)
    pairs = np.column_stack([np.flatnonzero(y == 1)[:100], np.flatnonzero(y == 0)[:100]])
    probe = LATProbe().fit(X, y, pairs=pairs)
    assert probe.direction_ @ u > 0.7
    with pytest.raises(InputError, match="pairs"):
        LATProbe().fit(X, y, pairs=np.array([[0, 999]]))
