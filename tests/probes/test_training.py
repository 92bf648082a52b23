"""`train_lie_probe`, the one probe-training function: measured on data it was not fit on,
threshold from training scores only, activations from the injected source."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.core.errors import InputError
from liedar.probes.datasets import StatementSet
from liedar.probes.training import train_lie_probe


class _Backend:
    name, kind, fingerprint, d_model, n_layers = "fake", "fake", "f" * 64, 6, 4

    def check_layers(self, layers):
        return list(layers)


def _data(n_groups: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=6)
    X, labels, groups = [], [], []
    for g in range(n_groups):
        for lab in (1, 0):  # a true statement and its false twin share a group
            X.append(rng.normal(size=6) + (1.5 if lab == 0 else -1.5) * w)
            labels.append(lab)
            groups.append(f"g{g}")
    s = StatementSet(
        "syn",
        [f"s{i}" for i in range(len(labels))],
        np.array(labels),
        np.array(["t"] * len(labels)),
        np.array(["affirmative"] * len(labels)),
        np.array(["plain"] * len(labels)),
        np.array(groups),
    )
    return np.array(X), s


def test_held_out_groups_are_never_fit_and_the_source_is_injected() -> None:
    X, data = _data()
    asked = []

    def source(inputs, layers, position):
        asked.append((len(inputs), tuple(layers), position))
        return X[:, None, :]

    t = train_lie_probe(_Backend(), data, 2, probe="mass-mean", position="mean", held_out=0.4, target_fpr=0.05,
                        activations=source)  # fmt: skip
    assert asked == [(len(data), (2,), "mean")]
    assert t.auroc.value > 0.9 and t.recall is not None and "held-out groups" in t.evaluation
    n_train, n_test = t.metadata.metrics["n_train"], t.metadata.metrics["n_test"]
    assert n_train + n_test == len(data) and n_test > 0
    assert t.metadata.layer == 2 and t.metadata.position == "mean" and t.metadata.threshold is not None


def test_without_held_out_the_estimate_is_out_of_fold() -> None:
    X, data = _data(seed=1)
    t = train_lie_probe(_Backend(), data, 1, probe="mass-mean", activations=lambda i, la, p: X[:, None, :])
    assert "group CV" in t.evaluation and t.metadata.metrics["n_train"] == len(data)


def test_a_probe_on_noise_is_not_reported_as_good() -> None:
    """Labels unrelated to the activations: the held-out AUROC interval must include 0.5."""
    X, data = _data(seed=2)
    rng = np.random.default_rng(3)
    noise = rng.normal(size=X.shape)
    t = train_lie_probe(
        _Backend(), data, 1, probe="mass-mean", held_out=0.5, activations=lambda i, la, p: noise[:, None]
    )
    assert t.auroc.lo < 0.5 < t.auroc.hi


@pytest.mark.parametrize("kw", [{"held_out": 1.0}, {"held_out": 0.0}, {"target_fpr": 1.5}])
def test_bad_shares_are_refused(kw) -> None:
    X, data = _data()
    with pytest.raises(InputError):
        train_lie_probe(_Backend(), data, 1, activations=lambda i, la, p: X[:, None, :], **kw)
