"""The one way liedar trains a lie probe: `train_lie_probe`.

Why one function: two training paths (one bypassing the activation cache and choosing its
threshold another way) give two different probes from the same data; `liedar probe train`
and the demo both call this one. Following repeng's design, where the activations come
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

from liedar.core.errors import InputError
from liedar.core.stats import Estimate
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

Activations = Callable[[Sequence[Any], Sequence[int], str], np.ndarray]
_Mix = Optional[tuple[np.ndarray, StatementSet]]  # a training mix's activations and statements


@dataclass
class TrainedProbe:
    """A fitted probe, the metadata to save with it, and its honestly measured quality.

    What `train_lie_probe` returns: pass ``probe`` and ``metadata`` to `save_probe`, and
    read ``auroc`` for how well it separates statements it was not fit on.

    Parameters
    ----------
    probe : estimator
        The fitted liedar probe (fit on all the data, or on the training groups).
    metadata : ProbeMetadata
        Model, layer, position, width, threshold and metrics, saved with the probe.
    auroc : Estimate
        AUROC on held-out groups, or of pooled out-of-fold scores.
    recall : Estimate or None
        Recall at ``target_fpr`` on the held-out split, when both were given.
    evaluation : str
        How the estimates were measured, in words.
    """

    probe: Any
    metadata: ProbeMetadata
    auroc: Estimate  # on held-out groups, or pooled out-of-fold
    recall: Optional[Estimate]  # at ``target_fpr`` on the held-out split, when both are given
    evaluation: str  # how the estimates were measured


def cached_activations(backend: Backend, *, progress: bool = True) -> Activations:
    """The default activation source: `liedar.models.cache.cached_hidden_states`.

    Parameters
    ----------
    backend : Backend
        The model whose hidden states are read (and cached on disk).
    progress : bool, default True
        Show a progress bar while extracting.

    Returns
    -------
    callable
        ``(inputs, layers, position) -> numpy.ndarray`` of shape (n, len(layers), d_model).
    """
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

    The one training path of `liedar probe train` and the demo: the number it reports is
    always measured on groups the probe never saw, so a probe that memorised its training
    statements cannot look good.

    Parameters
    ----------
    backend : Backend
        The loaded model (`liedar.models.load`); its layers, fingerprint and width go into
        the metadata.
    data : StatementSet
        Statements with truth labels and groups.
    layer : int
        The hidden-state layer to read.
    probe : str or callable, default "logistic"
        A `make_probe` name or a zero-argument callable returning an unfitted probe.
    position : {"last", "mean"}, default "last"
        Which token's state is read (the last, or the mean over the detect region).
    seed : int, default 0
        Seed of the split, folds and bootstraps.
    held_out : float, optional
        Share of groups kept out of fitting to measure on; None = group CV.
    target_fpr : float, optional
        False-positive rate the threshold is set for on honest training scores; also
        measures recall at that rate on the held-out split.
    n_splits : int, default 5
        Folds of the group CV (when ``held_out`` is None).
    activations : callable, optional
        ``(inputs, layers, position) -> array (n, len(layers), d)``; the on-disk activation
        cache over ``backend`` when omitted.
    model_name : str, optional
        Name saved in the metadata; the backend's name by default.
    training_sets : sequence of str, optional
        Names saved in the metadata; ``[data.name]`` by default.
    mix : StatementSet, optional
        Statements added to every fit and never scored.

    Returns
    -------
    TrainedProbe
        The probe, its metadata (with the threshold) and the measured AUROC (and recall).

    Raises
    ------
    InputError
        When ``held_out`` or ``target_fpr`` is not in (0, 1), the layer does not exist, or
        the data cannot be folded or has no honest statements for the threshold.

    Examples
    --------
    With a model (downloads and runs it):

    >>> import liedar.models
    >>> from liedar.probes import resolve_data
    >>> backend = liedar.models.load("smollm2-135m")  # doctest: +SKIP
    >>> trained = train_lie_probe(backend, resolve_data("mine.csv"), layer=12)  # doctest: +SKIP

    Without one, by injecting the activations (here stand-ins where feature 0 carries the lie):

    >>> import numpy as np
    >>> from liedar.probes import builtin_set
    >>> class Stub:  # what training reads from a backend
    ...     name, kind, fingerprint, d_model = "stub", "stub", "0" * 16, 8
    ...     def check_layers(self, layers):
    ...         return list(layers)
    >>> data = builtin_set("numbers")
    >>> def activations(inputs, layers, position):
    ...     X = np.random.default_rng(0).normal(size=(len(inputs), len(layers), 8))
    ...     X[:, :, 0] += 2 * data.lie_labels[:, None]
    ...     return X
    >>> trained = train_lie_probe(Stub(), data, layer=6, probe="mass-mean", activations=activations)
    >>> trained.evaluation
    '5-fold group CV (pooled out-of-fold scores)'
    >>> trained.auroc.value > 0.8, trained.metadata.layer
    (True, 6)
    """
    _check_shares(held_out, target_fpr)
    layer = backend.check_layers([layer])[0]
    source = activations or cached_activations(backend)
    X = np.asarray(source(data.inputs, [layer], position))[:, 0]
    extra = None if mix is None else (np.asarray(source(mix.inputs, [layer], position))[:, 0], mix)
    if held_out is None:
        fit = _fit_cross_validated(probe, X, data, extra, n_splits=n_splits, seed=seed)
    else:
        fit = _fit_held_out(probe, X, data, extra, held_out=held_out, target_fpr=target_fpr, seed=seed)
    threshold = _threshold(fit.train_scores, fit.train_labels, target_fpr)
    meta = _metadata(backend, data, layer, position, fit, threshold, model_name, training_sets, seed, target_fpr)
    return TrainedProbe(fit.probe, meta, fit.auroc, fit.recall, fit.how)


@dataclass
class _Fit:
    """A fitted probe with its training scores (for the threshold) and its measured quality."""

    probe: Any
    train_scores: np.ndarray
    train_labels: np.ndarray
    auroc: Estimate
    recall: Optional[Estimate]
    how: str
    metrics: dict[str, Any]


def _check_shares(held_out: Optional[float], target_fpr: Optional[float]) -> None:
    """Refuse a held-out share or target rate outside (0, 1) before any activation is read."""
    if held_out is not None and not 0.0 < held_out < 1.0:
        raise InputError(f"held_out={held_out}: give a share of groups strictly between 0 and 1")
    if target_fpr is not None and not 0.0 < target_fpr < 1.0:
        raise InputError(f"target_fpr={target_fpr}: give a rate strictly between 0 and 1")


def _with_mix(extra: _Mix, X_fit: np.ndarray, S_fit: StatementSet) -> tuple[np.ndarray, StatementSet]:
    """The fitting data with the training mix in front of it (the mix is fit on, never scored)."""
    if extra is None:
        return X_fit, S_fit
    return np.concatenate([extra[0], X_fit]), StatementSet.concat([extra[1], S_fit])


def _fit_cross_validated(
    probe: ProbeFactory, X: np.ndarray, data: StatementSet, extra: _Mix, *, n_splits, seed
) -> _Fit:
    """Without a held-out share: measured by pooled out-of-fold group CV, then fit on everything."""
    cv = cross_validated(probe, X, data, n_splits=n_splits, seed=seed, always_train=extra)
    fitted = fit_probe(build_probe(probe), *_with_mix(extra, X, data))
    metrics = {"cv_auroc": cv.auroc.to_dict(), "cv_accuracy": cv.accuracy.to_dict(), "n_train": len(data)}
    if extra is not None:
        metrics["n_mix"] = len(extra[1])
    how = f"{n_splits}-fold group CV (pooled out-of-fold scores)"
    return _Fit(fitted, fitted.decision_function(X), data.lie_labels, cv.auroc, None, how, metrics)


def _fit_held_out(
    probe: ProbeFactory, X: np.ndarray, data: StatementSet, extra: _Mix, *, held_out: float, target_fpr, seed
) -> _Fit:
    """With a held-out share: fit on the training groups, measured (AUROC, recall) on groups never fit on."""
    labels = data.lie_labels
    train, test = group_split(data.group, (1.0 - held_out, held_out), seed)
    fitted = fit_probe(build_probe(probe), *_with_mix(extra, X[train], data.subset(train)))
    test_scores, y_test = fitted.decision_function(X[test]), labels[test]
    measured = auroc(test_scores, y_test, groups=data.group[test], seed=seed)
    recall = None
    if target_fpr is not None:
        recall = recall_at_fpr(test_scores[y_test == 0], test_scores[y_test == 1], target_fpr)
    how = f"held-out groups ({held_out:.0%} of groups, never fit on)"
    metrics = {"auroc_heldout": measured.to_dict(), "n_train": int(len(train)), "n_test": int(len(test))}
    if recall is not None:
        metrics[f"recall_at_{target_fpr:g}_fpr"] = recall.to_dict()
    return _Fit(fitted, fitted.decision_function(X[train]), labels[train], measured, recall, how, metrics)


def _threshold(train_scores: np.ndarray, train_labels: np.ndarray, target_fpr: Optional[float]) -> float:
    """The decision threshold, from training scores only: an honest quantile, or the best-accuracy cut."""
    if target_fpr is None:
        return choose_threshold(train_scores, train_labels)
    honest = train_scores[np.asarray(train_labels) == 0]
    if honest.size == 0:
        raise InputError("no honest (true) training statements: a false-positive threshold needs some")
    return float(np.quantile(honest, 1.0 - target_fpr))


def _metadata(
    backend: Backend,
    data: StatementSet,
    layer: int,
    position: str,
    fit: _Fit,
    threshold: float,
    model_name: Optional[str],
    training_sets: Sequence[str],
    seed: int,
    target_fpr: Optional[float],
) -> ProbeMetadata:
    """What is saved with the probe: the model it reads, where, its threshold, and how it was measured."""
    return ProbeMetadata(
        model_name=model_name or getattr(backend, "name", "model"),
        model_fingerprint=backend.fingerprint,
        layer=int(layer),
        position=position,
        d_model=int(backend.d_model),
        training_sets=list(training_sets) or [data.name],
        metrics=fit.metrics,
        threshold=float(threshold),
        extra={
            "backend": getattr(backend, "kind", ""),
            "seed": seed,
            "labels": "fit on lie labels (1 = false / deceptive)",
            "evaluation": fit.how,
            "threshold_rule": "accuracy-maximising training cut"
            if target_fpr is None
            else f"{1 - target_fpr:g} quantile of honest training scores",
        },
    )
