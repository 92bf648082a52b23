"""The one way liedar trains a lie probe: `train_lie_probe`.

Why one function: `liedar probe train` and the demo used to train differently (the demo
bypassed the activation cache and chose its threshold another way), so the same data gave
two probes. Both now call this. Following repeng's design, where the activations come
from is injected (``activations``): by default the on-disk activation cache over the
backend, so a second run on the same statements costs no forward pass; a test or a
distributed run passes its own source.

The estimate that comes back is always measured on data the probe was not fit on: a
group-disjoint held-out split (``held_out``) or, without one, pooled out-of-fold group
cross-validation; the probe returned is then fit on all the data. The threshold is chosen
on training scores only: the (1 - ``target_fpr``) quantile of honest training scores, or,
without a target, the accuracy-maximising cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from liedar.errors import InputError
from liedar.models.backend import Backend
from liedar.probes.datasets import StatementSet
from liedar.probes.evaluation import (
    ProbeFactory,
    auroc,
    build_probe,
    choose_threshold,
    cross_validated,
    fit_probe,
    recall_at_fpr,
)
from liedar.probes.io import ProbeMetadata
from liedar.probes.splits import group_split
from liedar.stats import Estimate

Activations = Callable[[Sequence[Any], Sequence[int], str], np.ndarray]


@dataclass
class TrainedProbe:
    """A fitted probe, the metadata to save with it, and its honestly measured quality."""

    probe: Any
    metadata: ProbeMetadata
    auroc: Estimate  # on held-out groups, or pooled out-of-fold
    recall: Optional[Estimate]  # at ``target_fpr`` on the held-out split, when both are given
    evaluation: str  # how the estimates were measured


def cached_activations(backend: Backend, *, progress: bool = True) -> Activations:
    """The default activation source: `liedar.models.cache.cached_hidden_states`."""
    from liedar.models.cache import cached_hidden_states

    def source(inputs: Sequence[Any], layers: Sequence[int], position: str) -> np.ndarray:
        return cached_hidden_states(backend, list(inputs), list(layers), position, progress=progress)

    return source


def train_lie_probe(
    backend: Backend,
    data: StatementSet,
    layer: int,
    *,
    probe: ProbeFactory = "logistic",
    position: str = "last",
    seed: int = 0,
    held_out: Optional[float] = None,
    target_fpr: Optional[float] = None,
    n_splits: int = 5,
    activations: Optional[Activations] = None,
    model_name: Optional[str] = None,
    training_sets: Sequence[str] = (),
    mix: Optional[StatementSet] = None,
) -> TrainedProbe:
    """Fit a linear lie probe (higher score = false / deceptive) at ``layer``.

    ``held_out``: share of *groups* kept out of fitting to measure AUROC (and recall at
    ``target_fpr``) on; None: ``n_splits``-fold group CV measures, and the probe is fit on
    everything. ``target_fpr``: the threshold is the (1 - target_fpr) quantile of the honest
    training scores (as the monitor uses it); None: the accuracy-maximising training cut.
    ``mix``: statements added to every fit and never scored (a recipe's training mix, e.g.
    `recipes.builtin_mix`), so the measured AUROC is on ``data`` alone.
    """
    if held_out is not None and not 0.0 < held_out < 1.0:
        raise InputError(f"held_out={held_out}: give a share of groups strictly between 0 and 1")
    if target_fpr is not None and not 0.0 < target_fpr < 1.0:
        raise InputError(f"target_fpr={target_fpr}: give a rate strictly between 0 and 1")
    layer = backend.check_layers([layer])[0]
    source = activations or cached_activations(backend)
    X = np.asarray(source(data.inputs, [layer], position))[:, 0]
    labels = data.lie_labels
    extra = None if mix is None else (np.asarray(source(mix.inputs, [layer], position))[:, 0], mix)

    def with_mix(X_fit: np.ndarray, S_fit: StatementSet) -> tuple[np.ndarray, StatementSet]:
        if extra is None:
            return X_fit, S_fit
        return np.concatenate([extra[0], X_fit]), StatementSet.concat([extra[1], S_fit])

    if held_out is None:
        cv = cross_validated(probe, X, data, n_splits=n_splits, seed=seed, always_train=extra)
        fitted = fit_probe(build_probe(probe), *with_mix(X, data))
        train_scores, train_labels = fitted.decision_function(X), labels
        measured, recall, how = cv.auroc, None, f"{n_splits}-fold group CV (pooled out-of-fold scores)"
        metrics = {"cv_auroc": cv.auroc.to_dict(), "cv_accuracy": cv.accuracy.to_dict(), "n_train": len(data)}
        if mix is not None:
            metrics["n_mix"] = len(mix)
    else:
        train, test = group_split(data.group, (1.0 - held_out, held_out), seed)
        fitted = fit_probe(build_probe(probe), *with_mix(X[train], data.subset(train)))
        train_scores, train_labels = fitted.decision_function(X[train]), labels[train]
        test_scores, y_test = fitted.decision_function(X[test]), labels[test]
        measured = auroc(test_scores, y_test, groups=data.group[test], seed=seed)
        recall = None
        if target_fpr is not None:
            recall = recall_at_fpr(test_scores[y_test == 0], test_scores[y_test == 1], target_fpr)
        how = f"held-out groups ({held_out:.0%} of groups, never fit on)"
        metrics = {"auroc_heldout": measured.to_dict(), "n_train": int(len(train)), "n_test": int(len(test))}
        if recall is not None:
            metrics[f"recall_at_{target_fpr:g}_fpr"] = recall.to_dict()
    if target_fpr is None:
        threshold = choose_threshold(train_scores, train_labels)
    else:
        honest = train_scores[np.asarray(train_labels) == 0]
        if honest.size == 0:
            raise InputError("no honest (true) training statements: a false-positive threshold needs some")
        threshold = float(np.quantile(honest, 1.0 - target_fpr))
    meta = ProbeMetadata(
        model_name=model_name or getattr(backend, "name", "model"),
        model_fingerprint=backend.fingerprint,
        layer=int(layer),
        position=position,
        d_model=int(backend.d_model),
        training_sets=list(training_sets) or [data.name],
        metrics=metrics,
        threshold=float(threshold),
        extra={
            "backend": getattr(backend, "kind", ""),
            "seed": seed,
            "labels": "fit on lie labels (1 = false / deceptive)",
            "evaluation": how,
            "threshold_rule": "accuracy-maximising training cut"
            if target_fpr is None
            else f"{1 - target_fpr:g} quantile of honest training scores",
        },
    )
    return TrainedProbe(fitted, meta, measured, recall, how)
