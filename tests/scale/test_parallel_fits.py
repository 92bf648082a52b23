"""Layer sweeps and transfer matrices in parallel (joblib processes, Ray tasks) give the
serial run's numbers exactly: every fit is seeded by its own arguments."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.core.errors import InputError
from liedar.probes.datasets import StatementSet
from liedar.probes.evaluation import layer_sweep, transfer_matrix
from liedar.probes.parallel import run_tasks


def _data(n_per_topic: int = 60, d: int = 12, n_layers: int = 4, seed: int = 0):
    """Three topics; truth along a direction whose strength grows with the layer."""
    rng = np.random.default_rng(seed)
    topics = np.repeat(["a", "b", "c"], n_per_topic)
    n = len(topics)
    y = rng.integers(0, 2, n)
    u = rng.normal(size=d)
    X = np.stack([rng.normal(size=(n, d)) + 0.6 * k * np.outer(2 * y - 1, u) for k in range(n_layers)], axis=1)
    s = StatementSet(
        "syn",
        [f"s{i}" for i in range(n)],
        y,
        topics,
        np.array(["affirmative"] * n),
        np.array(["plain"] * n),
        (np.arange(n) // 2).astype(str),
    )
    return X, s


def test_parallel_sweep_and_matrix_equal_serial():
    X, s = _data()
    layers = [0, 2, 4, 6]
    serial = layer_sweep("logistic", X, layers, s, seed=3).to_dict()
    assert (
        serial != layer_sweep("logistic", X, layers, s, seed=4).to_dict()
    )  # the seed matters: equality means something
    assert layer_sweep("logistic", X, layers, s, seed=3, n_jobs=2).to_dict() == serial
    tm = transfer_matrix("mass-mean", X[:, 3], s, n_splits=3, seed=1).to_dict()
    assert transfer_matrix("mass-mean", X[:, 3], s, n_splits=3, seed=1, n_jobs=2).to_dict() == tm


def test_ray_tasks_equal_serial(cluster):
    X, s = _data(seed=1)
    layers = [0, 2, 4, 6]
    serial = layer_sweep("ttpd", X, layers, s, seed=0).to_dict()
    assert layer_sweep("ttpd", X, layers, s, seed=0, use_ray=True).to_dict() == serial
    tm = transfer_matrix("logistic", X[:, 2], s, n_splits=3, seed=2).to_dict()
    assert transfer_matrix("logistic", X[:, 2], s, n_splits=3, seed=2, use_ray=True).to_dict() == tm


def test_run_tasks_keeps_order_and_refuses_bad_n_jobs():
    args = [(i,) for i in range(7)]
    assert run_tasks(abs, [(-i,) for i in range(7)], n_jobs=2) == [i for (i,) in args]
    with pytest.raises(InputError, match="n_jobs"):
        run_tasks(abs, args, n_jobs=0)
