"""Judging probes honestly: AUROC with intervals, thresholds fixed before testing, transfer.

Rules this module enforces:

* every number is an `Estimate` (kind="quality") with a 95% interval and its count;
* a decision threshold is chosen on training/calibration scores only, never on test scores;
* folds never split a group (statement + negated twin + shared entities, `probes.splits`);
* in a transfer cell, test items whose group also occurs in the training set are dropped;
* a layer is chosen on validation data; test AUROC at that layer is reported separately.

AUROC intervals: DeLong's variance when items are independent; when ``groups`` are given
(twins and shared entities are correlated) a cluster bootstrap over groups with a seed,
which is wider and more honest for such data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
from scipy.stats import norm, rankdata

from liedar.core._util.serial import Serial
from liedar.core.errors import InputError
from liedar.core.results import LayerSweep, TransferMatrix
from liedar.core.rows import usable
from liedar.core.stats import Estimate, wilson
from liedar.models.backend import Backend
from liedar.probes.datasets import StatementSet
from liedar.probes.estimators import TTPD, LATProbe, LogisticProbe, make_probe
from liedar.probes.splits import group_folds, group_split, leave_one_out

ProbeFactory = Union[str, Callable[[], Any]]


# ---- metrics ----------------------------------------------------------------------------


def auc_value(pos: np.ndarray, neg: np.ndarray) -> float:
    """AUROC of lie scores ``pos`` against truth scores ``neg``, the number alone (ties count half).

    Why next to `auroc`: choosing a layer on validation data and bootstrapping an interval
    need the value many times and no interval for each; `auroc` reports it with one.

    Parameters
    ----------
    pos : numpy.ndarray
        Scores of the lies (positives).
    neg : numpy.ndarray
        Scores of the true statements (negatives); both non-empty.

    Returns
    -------
    float
        The Mann-Whitney estimate, P(lie score > truth score) + P(tie) / 2.

    Examples
    --------
    >>> auc_value(np.array([0.35, 0.8]), np.array([0.1, 0.4]))
    0.75
    """
    m, n = len(pos), len(neg)
    ranks = rankdata(np.concatenate([pos, neg]))
    return float((ranks[:m].sum() - m * (m + 1) / 2) / (m * n))


def _delong_var(pos: np.ndarray, neg: np.ndarray) -> float:
    m, n = len(pos), len(neg)
    tz = rankdata(np.concatenate([pos, neg]))
    v01 = (tz[:m] - rankdata(pos)) / n  # per-positive placement
    v10 = 1.0 - (tz[m:] - rankdata(neg)) / m  # per-negative placement
    return float(np.var(v01, ddof=1) / m + np.var(v10, ddof=1) / n) if m > 1 and n > 1 else 0.0


def _split_scores(scores: Any, lie_labels: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(lie_labels).ravel()
    if s.shape != y.shape:
        raise InputError(f"{s.size} scores but {y.size} labels: give one label per score")
    if not np.isfinite(s).all():
        raise InputError("scores contain NaN or inf: check the activations and the probe")
    if not np.isin(y, (0, 1)).all():
        raise InputError("labels must be 0/1 (1 = false / deceptive, the positive class)")
    pos, neg = s[y == 1], s[y == 0]
    if len(pos) == 0 or len(neg) == 0:
        raise InputError("AUROC needs both false and true items in the test set; this one has only one class")
    return s, y, pos, neg


def auroc(
    scores: Any,
    lie_labels: Any,
    *,
    groups: Optional[Sequence] = None,
    seed: Union[int, np.random.Generator] = 0,
    n_boot: int = 1000,
    confidence: float = 0.95,
) -> Estimate:
    """AUROC of ``scores`` for the positive class (1 = false / deceptive) with an interval.

    Without ``groups``: DeLong. With ``groups``: percentile cluster bootstrap over groups.

    A point AUROC on a few dozen statements can be off by 0.1 or more; the interval says
    by how much. Pass ``groups`` whenever items are correlated (a statement and its negated
    twin): DeLong assumes independent items and would report an interval too narrow.

    Parameters
    ----------
    scores : array-like of float
        One score per item; higher = more likely false / deceptive.
    lie_labels : array-like of {0, 1}
        1 = false / deceptive (the positive class), 0 = true / honest.
    groups : array-like, optional
        Group per item; switches to a cluster bootstrap over groups.
    seed : int or numpy.random.Generator, default 0
        Seed of the bootstrap.
    n_boot : int, default 1000
        Bootstrap resamples.
    confidence : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    Estimate
        ``kind="quality"``, method ``"delong"`` or ``"cluster-bootstrap"``; ``extra`` holds
        ``n_pos``, ``n_neg`` (and ``n_groups``, ``n_boot``).

    Raises
    ------
    InputError
        When lengths differ, a score is not finite, a label is not 0/1, or one class is
        missing.

    Examples
    --------
    >>> est = auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    >>> print(est)
    0.750 [0.057, 1.000] (n=4, delong)
    >>> f"{est:.2f}", est.method
    ('0.75', 'delong')
    """
    s, y, pos, neg = _split_scores(scores, lie_labels)
    value = auc_value(pos, neg)
    z = float(norm.ppf(0.5 + confidence / 2))
    extra = {"n_pos": int(len(pos)), "n_neg": int(len(neg))}
    if groups is None:
        se = _delong_var(pos, neg) ** 0.5
        note = "DeLong variance is 0 at perfect separation: the interval is degenerate" if se == 0 else ""
        return Estimate(
            value,
            max(0.0, value - z * se),
            min(1.0, value + z * se),
            len(s),
            "delong",
            "quality",
            None,
            confidence,
            note,
            extra,
        )
    g = np.asarray(groups)
    if g.shape != s.shape:
        raise InputError(f"{g.size} groups but {s.size} scores: give one group per score")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    uniq, inverse = np.unique(g, return_inverse=True)
    members = [np.flatnonzero(inverse == k) for k in range(len(uniq))]
    boots = []
    for _ in range(n_boot):
        idx = np.concatenate([members[k] for k in rng.integers(0, len(uniq), len(uniq))])
        yb = y[idx]
        if 0 < yb.sum() < len(yb):
            boots.append(auc_value(s[idx][yb == 1], s[idx][yb == 0]))
    alpha = 1 - confidence
    lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    extra.update(n_groups=int(len(uniq)), n_boot=len(boots))
    return Estimate(value, float(lo), float(hi), len(s), "cluster-bootstrap", "quality", None, confidence, "", extra)


def choose_threshold(scores: Any, lie_labels: Any) -> float:
    """The threshold maximising accuracy on *these* (training / calibration) scores."""
    s, y, _, _ = _split_scores(scores, lie_labels)
    order = np.argsort(s)
    s_sorted, y_sorted = s[order], y[order]
    # flagging everything above a cut: correct = negatives below + positives above
    neg_below = np.concatenate([[0], np.cumsum(y_sorted == 0)])
    pos_above = y_sorted.sum() - np.concatenate([[0], np.cumsum(y_sorted == 1)])
    correct = neg_below + pos_above
    candidates = np.concatenate([[s_sorted[0] - 1.0], (s_sorted[:-1] + s_sorted[1:]) / 2, [s_sorted[-1] + 1.0]])
    valid = np.concatenate([[True], s_sorted[:-1] < s_sorted[1:], [True]])
    best = int(np.argmax(np.where(valid, correct, -1)))
    return float(candidates[best])


def accuracy_at(scores: Any, lie_labels: Any, threshold: float) -> Estimate:
    """Accuracy of "flag if score > threshold" (threshold fixed beforehand), Wilson interval."""
    s, y, _, _ = _split_scores(scores, lie_labels)
    correct = int(((s > threshold).astype(int) == y).sum())
    est = wilson(correct, len(s), kind="quality")
    return Estimate(
        est.value,
        est.lo,
        est.hi,
        est.n,
        "wilson",
        "quality",
        correct,
        est.confidence,
        est.note,
        {"threshold": float(threshold)},
    )


def recall_at_fpr(control_scores: Any, positive_scores: Any, fpr: float = 0.01) -> Estimate:
    """Apollo's metric: threshold = the (1 - fpr) quantile of control (honest) scores;
    recall = share of deceptive items scoring above it (Wilson interval).

    What a monitor deployed at a fixed false-alarm rate would catch. AUROC averages over
    every threshold; this reads the one that matters in use. With fewer than ``1 / fpr``
    control items the threshold is noisy, and the note says so.

    Parameters
    ----------
    control_scores : array-like of float
        Scores of honest (control) items; they fix the threshold.
    positive_scores : array-like of float
        Scores of deceptive items.
    fpr : float, default 0.01
        False-positive rate allowed on the control items, in (0, 1).

    Returns
    -------
    Estimate
        The recall with a Wilson interval; ``extra`` holds ``threshold``, ``fpr``,
        ``n_control`` and ``control_fpr_observed``.

    Raises
    ------
    InputError
        When either set is empty, ``fpr`` is outside (0, 1), or a score is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> est = recall_at_fpr(rng.normal(size=200), rng.normal(size=50) + 3, fpr=0.05)
    >>> print(est)
    0.900 [0.786, 0.957] (n=50, wilson) — threshold = 95th percentile of 200 control scores
    """
    c = np.asarray(control_scores, dtype=float).ravel()
    p = np.asarray(positive_scores, dtype=float).ravel()
    if c.size == 0 or p.size == 0:
        raise InputError("recall at FPR needs both control (honest) and deceptive scores")
    if not (0 < fpr < 1):
        raise InputError(f"fpr={fpr} must be in (0, 1), e.g. 0.01")
    if not (np.isfinite(c).all() and np.isfinite(p).all()):
        raise InputError("scores contain NaN or inf: check the activations and the probe")
    threshold = float(np.quantile(c, 1 - fpr))
    hits = int((p > threshold).sum())
    est = wilson(hits, p.size, kind="quality")
    note = f"threshold = {100 * (1 - fpr):g}th percentile of {c.size} control scores"
    if c.size < 1 / fpr:
        note += f"; only {c.size} control items, so the threshold is the control maximum region and noisy"
    return Estimate(
        est.value,
        est.lo,
        est.hi,
        est.n,
        "wilson",
        "quality",
        hits,
        est.confidence,
        note,
        {
            "threshold": threshold,
            "fpr": fpr,
            "n_control": int(c.size),
            "control_fpr_observed": float((c > threshold).mean()),
        },
    )


# ---- fitting with the side information each probe can use --------------------------------


def build_probe(factory: ProbeFactory) -> Any:
    return make_probe(factory) if isinstance(factory, str) else factory()


def fit_probe(probe: Any, X: np.ndarray, statements: StatementSet) -> Any:
    """Fit on lie labels, passing groups (LogisticProbe inner CV), polarity and topic (TTPD),
    or honest/deceptive pairs by group (LAT) when the probe accepts them."""
    if len(statements) != X.shape[0]:
        raise InputError(f"{X.shape[0]} activation rows but {len(statements)} statements")
    y = statements.lie_labels
    if isinstance(probe, LogisticProbe):
        return probe.fit(X, y, groups=statements.group)
    if isinstance(probe, TTPD):
        return probe.fit(X, y, polarity=(~statements.is_negated).astype(int), topic=statements.topic)
    if isinstance(probe, LATProbe):
        return probe.fit(X, y, pairs=_pairs_by_group(statements))
    return probe.fit(X, y)


def _pairs_by_group(statements: StatementSet) -> Optional[np.ndarray]:
    """(false row, true row) pairs within each (group, polarity); None when there are none.

    Same polarity matters: inside a group a true statement's partner of opposite label is
    often its own negation, and that difference is mostly the word "not", not falsehood."""
    pairs = []
    y = statements.lie_labels
    keys = np.char.add(np.char.add(statements.group.astype(str), "|"), statements.polarity.astype(str))
    for key in np.unique(keys):
        idx = np.flatnonzero(keys == key)
        pos, neg = idx[y[idx] == 1], idx[y[idx] == 0]
        pairs.extend(zip(pos, neg))
    return np.array(pairs, dtype=int) if pairs else None


@dataclass
class ProbeScore(Serial):
    """How one probe did on one test set: AUROC and accuracy at a training-chosen threshold."""

    auroc: Estimate
    accuracy: Estimate
    n_train: int
    n_test: int
    note: str = ""


def train_test(
    factory: ProbeFactory,
    X_train: np.ndarray,
    S_train: StatementSet,
    X_test: np.ndarray,
    S_test: StatementSet,
    *,
    seed: int = 0,
) -> ProbeScore:
    """Fit on one set, score another; threshold from training scores; overlapping groups dropped."""
    keep = ~np.isin(S_test.group, S_train.group)
    note = ""
    if not keep.any():
        raise InputError(
            f"every test item of {S_test.name!r} shares a group with the training set {S_train.name!r}: "
            "transfer between them cannot be measured without leakage; use disjoint data"
        )
    if not keep.all():
        note = f"dropped {int((~keep).sum())} test items whose group occurs in training"
        X_test, S_test = X_test[keep], S_test.subset(keep)
    probe = fit_probe(build_probe(factory), X_train, S_train)
    threshold = choose_threshold(probe.decision_function(X_train), S_train.lie_labels)
    scores = probe.decision_function(X_test)
    return ProbeScore(
        auroc(scores, S_test.lie_labels, groups=S_test.group, seed=seed),
        accuracy_at(scores, S_test.lie_labels, threshold),
        len(S_train),
        len(S_test),
        note,
    )


def cross_validated(
    factory: ProbeFactory,
    X: np.ndarray,
    statements: StatementSet,
    *,
    n_splits: int = 5,
    seed: int = 0,
    always_train: Optional[tuple[np.ndarray, StatementSet]] = None,
) -> ProbeScore:
    """In-distribution score: pooled out-of-fold scores over group-aware folds; each fold's
    threshold comes from its own training scores. ``always_train`` (activations, set) joins
    every fold's training data and is never scored (a training mix scored on one part).

    Folds never split a group, so a statement's negated twin or minimal-pair partner is
    never in the training part when it is scored; splitting them is what makes a probe
    score *below* chance on data it should separate.

    Parameters
    ----------
    factory : str or callable
        A probe name for `make_probe` (``"logistic"``, ``"mass-mean"``, ...) or a
        zero-argument callable returning an unfitted probe.
    X : numpy.ndarray of shape (n_items, n_features)
        Hidden states, one row per statement.
    statements : StatementSet
        The statements (labels and groups).
    n_splits : int, default 5
        Number of group folds.
    seed : int, default 0
        Seed of the fold assignment and of the AUROC bootstrap.
    always_train : tuple of (numpy.ndarray, StatementSet), optional
        Extra training data added to every fold and never scored.

    Returns
    -------
    ProbeScore
        AUROC (cluster bootstrap over groups) and accuracy of the pooled out-of-fold scores.

    Raises
    ------
    InputError
        When X and ``statements`` differ in length, or there are too few groups to fold.

    Examples
    --------
    >>> import numpy as np
    >>> from liedar.probes import StatementSet, builtin_set
    >>> s = StatementSet.concat([builtin_set("numbers"), builtin_set("capitals")])
    >>> X = np.random.default_rng(0).normal(size=(len(s), 8))
    >>> X[:, 0] += 2 * s.lie_labels  # stand-in hidden states: feature 0 carries the lie
    >>> score = cross_validated("mass-mean", X, s)
    >>> print(score.auroc)
    0.932 [0.911, 0.953] (n=400, cluster-bootstrap)
    >>> score.note
    '5-fold group CV, pooled out-of-fold scores'
    """
    if X.shape[0] != len(statements):
        raise InputError(f"{X.shape[0]} activation rows but {len(statements)} statements")
    oof = np.empty(len(statements))
    flagged = np.empty(len(statements), dtype=int)
    for train, test in group_folds(statements.group, n_splits, seed):
        X_tr, S_tr = X[train], statements.subset(train)
        if always_train is not None:
            X_tr, S_tr = np.concatenate([always_train[0], X_tr]), StatementSet.concat([always_train[1], S_tr])
        probe = fit_probe(build_probe(factory), X_tr, S_tr)
        thr = choose_threshold(probe.decision_function(X_tr), S_tr.lie_labels)
        oof[test] = probe.decision_function(X[test])
        flagged[test] = (oof[test] > thr).astype(int)
    y = statements.lie_labels
    correct = int((flagged == y).sum())
    acc = wilson(correct, len(y), kind="quality")
    acc = Estimate(
        acc.value,
        acc.lo,
        acc.hi,
        acc.n,
        "wilson",
        "quality",
        correct,
        acc.confidence,
        "threshold chosen on each fold's training scores",
    )
    n_train = int(round(len(y) * (n_splits - 1) / n_splits))
    note = f"{n_splits}-fold group CV, pooled out-of-fold scores"
    if always_train is not None:
        n_train += len(always_train[1])
        note += f"; {always_train[1].name} always in training"
    return ProbeScore(auroc(oof, y, groups=statements.group, seed=seed), acc, n_train, len(y), note)


# ---- transfer ---------------------------------------------------------------------------


def transfer_matrix(
    factory: ProbeFactory,
    X: np.ndarray,
    statements: StatementSet,
    *,
    by: str = "topic",
    n_splits: int = 5,
    seed: int = 0,
    probe_name: Optional[str] = None,
    n_jobs: int = 1,
    use_ray: bool = False,
) -> TransferMatrix:
    """Train on each value of ``by`` (topic, polarity, style), test on every value.

    The cells are independent seeded fits: ``n_jobs`` runs them in joblib processes and
    ``use_ray`` as Ray tasks (probes.parallel), with the serial run's numbers.

    A probe that only works on the topic it was trained on has learned the topic, not
    truth; the off-diagonal cells show it. Diagonal cells are group CV; off-diagonal cells
    train on one value and test on another, dropping test items whose group was trained on.

    Parameters
    ----------
    factory : str or callable
        A probe name for `make_probe` (``"logistic"``, ``"mass-mean"``, ...) or a
        zero-argument callable returning an unfitted probe.
    X : numpy.ndarray of shape (n_items, n_features)
        Hidden states, one row per statement.
    statements : StatementSet
        The statements.
    by : {"topic", "polarity", "style"}, default "topic"
        The metadata field whose values are the rows and columns.
    n_splits : int, default 5
        Folds of the diagonal cells.
    seed : int, default 0
        Seed of folds and bootstraps.
    probe_name : str, optional
        Name shown for the probe; defaults to ``str(factory)``.
    n_jobs : int, default 1
        Processes to run the cells in.
    use_ray : bool, default False
        Run the cells as Ray tasks.

    Returns
    -------
    TransferMatrix
        AUROC (and accuracy) per (train, test) cell; None where a cell cannot be measured.

    Raises
    ------
    InputError
        When ``by`` has fewer than two values.

    Examples
    --------
    >>> import numpy as np
    >>> from liedar.probes import StatementSet, builtin_set
    >>> s = StatementSet.concat([builtin_set("numbers"), builtin_set("capitals")])
    >>> X = np.random.default_rng(0).normal(size=(len(s), 8))
    >>> X[:, 0] += 2 * s.lie_labels  # stand-in hidden states: feature 0 carries the lie
    >>> m = transfer_matrix("mass-mean", X, s, by="topic")
    >>> m.train
    ['capitals', 'numbers']
    """
    key = np.asarray(getattr(statements, by))
    names = sorted(set(key.tolist()))
    if len(names) < 2:
        raise InputError(f"a transfer matrix needs at least two distinct {by} values, found {names}")
    parts = {nm: np.flatnonzero(key == nm) for nm in names}
    from liedar.probes.parallel import run_tasks

    tasks = [
        (
            factory,
            X[parts[a]],
            statements.subset(parts[a]),
            X[parts[b]],
            statements.subset(parts[b]),
            a == b,
            n_splits,
            seed,
        )
        for a in names
        for b in names
    ]
    flat = run_tasks(_transfer_cell, tasks, n_jobs=n_jobs, use_ray=use_ray)
    cells = [flat[i * len(names) : (i + 1) * len(names)] for i in range(len(names))]
    return TransferMatrix(
        names,
        names,
        [[c.auroc if usable(c.auroc) else None for c in row] for row in cells],
        probe_name or str(factory),
        [[c.accuracy if usable(c.accuracy) else None for c in row] for row in cells],
        {"by": by, "n_splits": n_splits, "seed": seed},
    )


def _transfer_cell(factory, X_a, S_a, X_b, S_b, diagonal: bool, n_splits: int, seed: int) -> ProbeScore:
    """One cell: group CV on the diagonal, else train on a / test on b."""
    if diagonal:
        return cross_validated(factory, X_a, S_a, n_splits=n_splits, seed=seed)
    return train_test(factory, X_a, S_a, X_b, S_b, seed=seed)


def style_transfer(
    factory: ProbeFactory,
    parts: dict[str, tuple[np.ndarray, StatementSet]],
    train: Sequence[str],
    test: str,
    *,
    n_splits: int = 5,
    seed: int = 0,
) -> ProbeScore:
    """Train on the union of the ``train`` styles, score the ``test`` style.

    When ``test`` is one of the training styles (a training *mix* scored on one of its own
    parts), its items are scored out of fold: group folds over the test style, each fold's
    probe trained on the other styles whole plus the test style's other folds, so no test
    item (nor its group) is ever in the probe that scores it. Otherwise it is `train_test`."""
    unknown = [name for name in (*train, test) if name not in parts]
    if unknown:
        raise InputError(f"styles {unknown} have no data; give one of {sorted(parts)}")
    others = [name for name in train if name != test]
    X_o = np.concatenate([parts[name][0] for name in others]) if others else None
    S_o = StatementSet.concat([parts[name][1] for name in others]) if others else None
    X_t, S_t = parts[test]
    if test not in train:
        return train_test(factory, X_o, S_o, X_t, S_t, seed=seed)
    extra = (X_o, S_o) if others else None
    return cross_validated(factory, X_t, S_t, n_splits=n_splits, seed=seed, always_train=extra)


def leave_one_topic_out(
    factory: ProbeFactory, X: np.ndarray, statements: StatementSet, *, seed: int = 0
) -> dict[str, ProbeScore]:
    """Train on all other topics (affirmative + negated), test on the held-out topic.

    The question a user with a new topic asks: does the probe work on statements about
    something it never saw?

    Parameters
    ----------
    factory : str or callable
        A probe name for `make_probe` (``"logistic"``, ``"mass-mean"``, ...) or a
        zero-argument callable returning an unfitted probe.
    X : numpy.ndarray of shape (n_items, n_features)
        Hidden states, one row per statement.
    statements : StatementSet
        The statements; needs at least two topics.
    seed : int, default 0
        Seed of the AUROC bootstrap.

    Returns
    -------
    dict of str to ProbeScore
        One score per held-out topic.

    Examples
    --------
    >>> import numpy as np
    >>> from liedar.probes import StatementSet, builtin_set
    >>> s = StatementSet.concat([builtin_set("numbers"), builtin_set("capitals")])
    >>> X = np.random.default_rng(0).normal(size=(len(s), 8))
    >>> X[:, 0] += 2 * s.lie_labels  # stand-in hidden states: feature 0 carries the lie
    >>> scores = leave_one_topic_out("mass-mean", X, s)
    >>> {topic: round(sc.auroc.value, 2) for topic, sc in scores.items()}
    {'capitals': 0.93, 'numbers': 0.93}
    """
    out = {}
    for topic, train, test in leave_one_out(statements.topic):
        out[topic] = train_test(
            factory, X[train], statements.subset(train), X[test], statements.subset(test), seed=seed
        )
    return out


def polarity_transfer(
    factory: ProbeFactory, X: np.ndarray, statements: StatementSet, *, seed: int = 0
) -> dict[str, ProbeScore]:
    """Train on affirmative statements of half the groups; test on the other half's
    affirmative statements (reference) and negated statements (transfer to negation).
    Halves are group-disjoint, so a test statement's twin was never seen in training.

    Probes trained on affirmative statements often invert on negated ones; comparing the
    two cells shows whether this one does.

    Parameters
    ----------
    factory : str or callable
        A probe name for `make_probe` (``"logistic"``, ``"mass-mean"``, ...) or a
        zero-argument callable returning an unfitted probe.
    X : numpy.ndarray of shape (n_items, n_features)
        Hidden states, one row per statement.
    statements : StatementSet
        The statements, with both polarities.
    seed : int, default 0
        Seed of the group split and of the AUROC bootstrap.

    Returns
    -------
    dict of str to ProbeScore
        ``"affirmative->affirmative"`` and ``"affirmative->negated"``.

    Examples
    --------
    >>> import numpy as np
    >>> from liedar.probes import StatementSet, builtin_set
    >>> s = StatementSet.concat([builtin_set("numbers"), builtin_set("capitals")])
    >>> X = np.random.default_rng(0).normal(size=(len(s), 8))
    >>> X[:, 0] += 2 * s.lie_labels  # stand-in hidden states: feature 0 carries the lie
    >>> sorted(polarity_transfer("mass-mean", X, s))
    ['affirmative->affirmative', 'affirmative->negated']
    """
    first, second = group_split(statements.group, (0.5, 0.5), seed)
    S_a, S_b = statements.subset(first), statements.subset(second)
    X_a, X_b = X[first], X[second]
    train = ~S_a.is_negated
    out = {}
    for name, mask in (("affirmative->affirmative", ~S_b.is_negated), ("affirmative->negated", S_b.is_negated)):
        out[name] = train_test(factory, X_a[train], S_a.subset(train), X_b[mask], S_b.subset(mask), seed=seed)
    return out


# ---- layer sweep ------------------------------------------------------------------------


def layer_sweep(
    factory: ProbeFactory,
    X_layers: np.ndarray,
    layers: Sequence[int],
    statements: StatementSet,
    *,
    fractions: Sequence[float] = (0.6, 0.2, 0.2),
    seed: int = 0,
    probe_name: Optional[str] = None,
    n_jobs: int = 1,
    use_ray: bool = False,
) -> LayerSweep:
    """Fit per layer on a group-aware train part; choose the layer by validation AUROC.

    Layers are independent seeded fits: ``n_jobs`` / ``use_ray`` run them in parallel
    (probes.parallel) with the serial run's numbers.

    The layer is chosen on a validation part and the test AUROC is read on a third part,
    so the reported number is not the best of many tries on the same data.

    Parameters
    ----------
    factory : str or callable
        A probe name for `make_probe` (``"logistic"``, ``"mass-mean"``, ...) or a
        zero-argument callable returning an unfitted probe.
    X_layers : numpy.ndarray of shape (n_items, n_layers, n_features)
        Hidden states per statement and layer.
    layers : sequence of int
        The layer numbers of the second axis.
    statements : StatementSet
        The statements.
    fractions : sequence of float, default (0.6, 0.2, 0.2)
        Train / validation / test shares (by group).
    seed : int, default 0
        Seed of the split and of the AUROC bootstraps.
    probe_name : str, optional
        Name shown for the probe; defaults to ``str(factory)``.
    n_jobs : int, default 1
        Processes to run the layers in.
    use_ray : bool, default False
        Run the layers as Ray tasks.

    Returns
    -------
    LayerSweep
        Test AUROC per layer, validation AUROC per layer and the chosen layer.

    Raises
    ------
    InputError
        When ``X_layers`` does not match the statements and layers.

    Examples
    --------
    >>> import numpy as np
    >>> from liedar.probes import StatementSet, builtin_set
    >>> s = StatementSet.concat([builtin_set("numbers"), builtin_set("capitals")])
    >>> X = np.random.default_rng(0).normal(size=(len(s), 8))
    >>> X[:, 0] += 2 * s.lie_labels  # stand-in hidden states: feature 0 carries the lie
    >>> noise = np.random.default_rng(1).normal(size=X.shape)
    >>> sweep = layer_sweep("mass-mean", np.stack([X, noise], axis=1), [6, 12], s)
    >>> sweep.chosen_layer
    6
    """
    X_layers = np.asarray(X_layers)
    if X_layers.ndim != 3 or X_layers.shape[1] != len(layers) or X_layers.shape[0] != len(statements):
        raise InputError(
            f"activations of shape {X_layers.shape} do not match {len(statements)} statements x {len(layers)} layers"
        )
    train, val, test = group_split(statements.group, fractions, seed)
    S_tr, S_va, S_te = statements.subset(train), statements.subset(val), statements.subset(test)
    from liedar.probes.parallel import run_tasks

    tasks = [
        (factory, X_layers[train, k], S_tr, X_layers[val, k], S_va, X_layers[test, k], S_te, seed)
        for k in range(len(layers))
    ]
    results = run_tasks(_layer_fit, tasks, n_jobs=n_jobs, use_ray=use_ray)
    vals, tests = [r[0] for r in results], [r[1] for r in results]
    best = int(np.argmax([v.value for v in vals]))
    name = probe_name or str(factory)
    return LayerSweep(
        [int(v) for v in layers],
        tests,
        int(layers[best]),
        "validation split (test AUROC shown)",
        name,
        vals,
        name,
        len(train),
        {"fractions": list(fractions), "seed": seed, "n_validation": len(val), "n_test": len(test)},
    )


def _layer_fit(factory, X_tr, S_tr, X_va, S_va, X_te, S_te, seed: int) -> tuple[Estimate, Estimate]:
    """One layer of a sweep: fit on train, (validation AUROC, test AUROC)."""
    probe = fit_probe(build_probe(factory), X_tr, S_tr)
    return (
        auroc(probe.decision_function(X_va), S_va.lie_labels, groups=S_va.group, seed=seed),
        auroc(probe.decision_function(X_te), S_te.lie_labels, groups=S_te.group, seed=seed),
    )


# ---- zero-shot baseline -----------------------------------------------------------------


def loglik_scores(
    backend: Backend, statements: StatementSet, *, prefix: str = "\n", batch: int = 16, progress: bool = False
) -> np.ndarray:
    """The model's own summed log-probability of each statement after ``prefix``, negated so
    that, like a probe score, higher means "more likely false". Plain-text sets only.

    Statements go to ``backend.score_options`` as options of one prompt, ``batch`` at a
    time (each is scored independently; batching only shares the forward pass)."""
    if any(not isinstance(x, str) for x in statements.inputs):
        raise InputError("the log-likelihood baseline needs plain-text statements, not dialogues")
    from liedar.core._util.progress import progress as step_progress

    texts = list(statements.inputs)
    out = np.empty(len(texts))
    for lo in step_progress(range(0, len(texts), batch), desc="log-likelihood", unit="batch", disable=not progress):
        out[lo : lo + batch] = -np.asarray(backend.score_options(prefix, texts[lo : lo + batch]), dtype=float)
    return out


def reply_loglik_scores(backend: Backend, statements: StatementSet, *, progress: bool = False) -> np.ndarray:
    """The model's own summed log-probability of each dialogue's final reply given the turns
    before it, negated so that, like a lie probe's score, higher means "more likely deceptive".

    Why: a lie probe earns its keep only if it beats what the model's own next-token
    probabilities already say about the reply it reads (the dialogue counterpart of
    `loglik_scores`). Each dialogue must end with the assistant's detect message, the one a
    lie probe reads; it is scored with ``backend.score_options`` as the continuation of the
    earlier turns under the chat template."""
    from liedar.core._util.progress import progress as step_progress
    from liedar.models.chat import Dialogue

    out = np.empty(len(statements))
    for i, d in enumerate(step_progress(statements.inputs, desc="reply log-likelihood", disable=not progress)):
        if not isinstance(d, Dialogue) or len(d.messages) < 2:
            raise InputError("the reply log-likelihood needs dialogues of at least two messages, not plain text")
        last = d.messages[-1]
        if last.role != "assistant" or not last.detect:
            raise InputError(
                f"dialogue {i} ends with a {last.role} message{'' if last.detect else ' not marked detect'}: "
                "the reply log-likelihood scores the final assistant detect message"
            )
        out[i] = -float(backend.score_options(Dialogue(d.messages[:-1]), [last.content])[0])
    return out
