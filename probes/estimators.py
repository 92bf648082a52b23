"""Linear probes on hidden states, as scikit-learn estimators.

Every probe here is a *binary linear* classifier: after fitting, ``decision_function(X) =
X @ coef_ + intercept_`` in the raw activation space and ``predict_proba`` is the logistic
sigmoid of that score. Keeping the learned state as a handful of plain arrays is what lets
`probes.io` save probes without pickle and lets the inline monitor score one token with
one dot product.

Sign convention (project-wide): fit on *lie labels* (1 = the statement is false / the
speaker is deceptive, e.g. ``StatementSet.lie_labels``); then ``classes_[1]`` is "false"
and a higher ``decision_function`` means "false / deceptive". ``direction_`` is a unit
vector pointing the same way.

Probes:

* `LogisticProbe` — standardise, then L2 logistic regression with C chosen by
  cross-validation on the training data only (group-aware when ``groups`` is given).
* `MassMeanProbe` — difference of class means (Marks & Tegmark 2023); with
  ``covariance="within"`` the direction is corrected by the (Ledoit-Wolf shrunk)
  within-class covariance, i.e. Fisher's LDA direction.
* `TTPD` — Bürger et al. 2024 "Truth is Universal": a general truth direction t_G learned
  jointly with a polarity-sensitive direction by least squares on topic-centred
  activations, plus a polarity direction; a logistic regression on the two projections.
* `LATProbe` — RepE's linear artificial tomography (Zou et al. 2023): the first principal
  component of differences between (deceptive, honest) pairs.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.covariance import LedoitWolf
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold, StratifiedKFold
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from liedar.core.errors import InputError

_STATE_ATTRS = ("coef_", "intercept_", "classes_", "direction_")


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


class _LinearProbe(ClassifierMixin, BaseEstimator):
    """Shared machinery: validation, linear scoring, probabilities, plain-array state."""

    _extra_state: tuple[str, ...] = ()

    # ---- validation -------------------------------------------------------------------
    def _validate_training(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        try:
            X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=True)
        except ValueError as exc:
            raise InputError(f"bad probe training data: {exc}") from None
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise InputError(
                f"training labels contain only one class ({classes.tolist()[0]!r}): a probe needs both true and "
                "false (or honest and deceptive) examples"
            )
        if classes.size > 2:
            raise InputError(
                f"Only binary classification is supported: the labels have {classes.size} classes; "
                "give 0/1 labels (1 = false / deceptive)"
            )
        self.classes_ = classes
        return X, (y == classes[1]).astype(np.float64)

    def _validate_scoring(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        try:
            return validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=True)
        except ValueError as exc:
            raise InputError(f"bad activations to score: {exc}") from None

    @staticmethod
    def _check_side_info(name: str, values: Optional[Sequence], n: int) -> Optional[np.ndarray]:
        if values is None:
            return None
        arr = np.asarray(values)
        if arr.shape[0] != n:
            raise InputError(f"{name} has {arr.shape[0]} entries but X has {n} rows: give one per row")
        return arr

    # ---- scoring ----------------------------------------------------------------------
    def decision_function(self, X: Any) -> np.ndarray:
        """Score per row; higher = more likely ``classes_[1]`` (false / deceptive).

        The score is ``X @ coef_ + intercept_`` in the raw activation space, so it can be
        computed anywhere one dot product fits (the inline monitor scores one token so).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Hidden states, the same width as at fit time.

        Returns
        -------
        numpy.ndarray of shape (n_rows,)
            Log-odds of false / deceptive.

        Raises
        ------
        InputError
            When X has the wrong width or non-finite values.
        """
        X = self._validate_scoring(X)
        return X @ self.coef_ + self.intercept_[0]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probability of each class per row: the sigmoid of `decision_function`.

        Column 1 is ``classes_[1]`` (false / deceptive when fitted on lie labels), as in any
        scikit-learn classifier, so ``predict_proba(X)[:, 1]`` is what to threshold or feed
        to an AUROC.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Hidden states.

        Returns
        -------
        numpy.ndarray of shape (n_rows, 2)
            ``[P(classes_[0]), P(classes_[1])]`` per row.

        Raises
        ------
        InputError
            When X has the wrong width or non-finite values.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> y = np.repeat([0, 1], 20)  # lie labels: 1 = false / deceptive
        >>> X = rng.normal(size=(40, 8))
        >>> X[:, 0] += 3 * y  # hidden states where feature 0 carries the lie
        >>> probe = MassMeanProbe().fit(X, y)
        >>> probe.predict_proba(X[[0, -1]]).round(2).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        """
        p = _sigmoid(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """The class per row: ``classes_[1]`` where `decision_function` is above 0.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Hidden states.

        Returns
        -------
        numpy.ndarray of shape (n_rows,)
            Labels from ``classes_``.
        """
        flagged = (self.decision_function(X) > 0).astype(int)
        return self.classes_[flagged]

    # ---- helpers for subclasses -------------------------------------------------------
    def _finish(self, weights: np.ndarray, intercept: float) -> "_LinearProbe":
        self.coef_ = np.asarray(weights, dtype=np.float64)
        self.intercept_ = np.array([float(intercept)])
        norm = float(np.linalg.norm(self.coef_))
        self.direction_ = self.coef_ / norm if norm > 0 else self.coef_.copy()
        return self

    def _platt(self, X: np.ndarray, y01: np.ndarray, w: np.ndarray) -> "_LinearProbe":
        """Scale and shift a fixed direction into calibrated log-odds on the training data."""
        s = X @ w
        spread = float(np.std(s)) or 1.0
        lr = LogisticRegression(C=1e4).fit((s / spread)[:, None], y01)
        a = float(lr.coef_[0, 0]) / spread
        return self._finish(a * w, float(lr.intercept_[0]))

    # ---- plain-array state for probes.io ---------------------------------------------
    def learned_state(self) -> Optional[dict[str, np.ndarray]]:
        """The fitted arrays (None when unfitted); what `probes.io.save_probe` stores.

        Plain arrays instead of a pickle: a saved probe can be loaded without running code
        from the file.

        Returns
        -------
        dict of str to numpy.ndarray or None
            ``coef_``, ``intercept_``, ``classes_``, ``direction_`` and the probe's own
            fitted arrays.
        """
        if not hasattr(self, "coef_"):
            return None
        return {k: np.asarray(getattr(self, k)) for k in _STATE_ATTRS + self._extra_state}

    def restore_state(self, arrays: dict[str, np.ndarray]) -> "_LinearProbe":
        """Make this probe fitted from arrays saved by `learned_state`.

        Parameters
        ----------
        arrays : dict of str to numpy.ndarray
            The saved arrays (what `learned_state` returned).

        Returns
        -------
        probe
            This probe, ready to score.

        Raises
        ------
        InputError
            When an array the probe needs is missing.
        """
        for k in _STATE_ATTRS + self._extra_state:
            if k not in arrays:
                raise InputError(f"saved probe lacks the array {k!r}: the file is damaged or from another tool")
            setattr(self, k, np.asarray(arrays[k]))
        self.n_features_in_ = int(self.coef_.shape[0])
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class LogisticProbe(_LinearProbe):
    """Standardise + L2 logistic regression; C picked by CV on the training data only.

    ``fit(X, y, groups=None)``: with ``groups`` the inner folds are group-aware so that a
    statement's twin never helps choose C for itself.

    The default choice when unsure: standardising keeps a few high-variance activation
    dimensions from dominating, and choosing C inside the training data keeps the held-out
    score honest. The fitted probe is still linear in the raw activations (``coef_``).

    Parameters
    ----------
    Cs : sequence of float, default (1e-3, 1e-2, 1e-1, 1.0, 10.0)
        Inverse regularisation strengths to choose from (one value: no inner CV).
    cv : int, default 5
        Number of inner folds used to choose C.
    max_iter : int, default 2000
        Iterations of the logistic regression solver.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)  # lie labels: 1 = false / deceptive
    >>> X = rng.normal(size=(40, 8))
    >>> X[:, 0] += 3 * y  # hidden states where feature 0 carries the lie
    >>> probe = LogisticProbe().fit(X, y)
    >>> probe.predict(X[[0, -1]]).tolist()
    [0, 1]
    >>> probe.score(X, y) > 0.9  # accuracy, as for any scikit-learn classifier
    True
    >>> probe.coef_.shape, float(probe.C_) in probe.Cs
    ((8,), True)
    """

    _extra_state = ("mean_", "scale_", "C_")

    def __init__(self, Cs: Sequence[float] = (1e-3, 1e-2, 1e-1, 1.0, 10.0), cv: int = 5, max_iter: int = 2000):
        self.Cs = Cs
        self.cv = cv
        self.max_iter = max_iter

    def fit(self, X: Any, y: Any, groups: Optional[Sequence] = None) -> "LogisticProbe":
        """Fit on hidden states and lie labels, choosing C by inner CV on this data only.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Hidden states.
        y : array-like of shape (n_rows,)
            Binary labels; use lie labels (1 = false / deceptive) so higher scores mean lies.
        groups : array-like of shape (n_rows,), optional
            Group per row; the inner folds then keep each group together.

        Returns
        -------
        LogisticProbe
            This probe, fitted (``coef_``, ``intercept_``, ``direction_``, ``C_``).

        Raises
        ------
        InputError
            When X or y are malformed, y has one class or more than two, or ``groups`` has
            a different length.
        """
        X, y01 = self._validate_training(X, y)
        groups = self._check_side_info("groups", groups, X.shape[0])
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        self.scale_ = np.where(scale > 1e-12, scale, 1.0)
        Z = (X - self.mean_) / self.scale_
        C = self._choose_C(Z, y01, groups)
        lr = LogisticRegression(C=C, max_iter=self.max_iter).fit(Z, y01)
        self.C_ = np.array(C)
        self.n_iter_ = np.asarray(lr.n_iter_)
        w = lr.coef_[0] / self.scale_
        return self._finish(w, float(lr.intercept_[0]) - float(w @ self.mean_))

    def _choose_C(self, Z: np.ndarray, y01: np.ndarray, groups: Optional[np.ndarray]) -> float:
        """Mean held-out log-loss per C over inner folds of the *training* data only."""
        Cs = [float(c) for c in np.atleast_1d(self.Cs)]
        if len(Cs) == 1:
            return Cs[0]
        if groups is not None:
            k = min(self.cv, len(np.unique(groups)))
            folds = list(GroupKFold(n_splits=k).split(Z, y01, groups)) if k >= 2 else []
        else:
            k = min(self.cv, int(min(y01.sum(), (1 - y01).sum())))
            folds = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=0).split(Z, y01)) if k >= 2 else []
        folds = [(tr, te) for tr, te in folds if 0 < y01[tr].sum() < len(tr)]
        if not folds:
            return float(np.median(Cs))
        losses = np.zeros(len(Cs))
        for tr, te in folds:
            for i, C in enumerate(Cs):
                lr = LogisticRegression(C=C, max_iter=self.max_iter).fit(Z[tr], y01[tr])
                p = np.clip(lr.predict_proba(Z[te])[:, 1], 1e-12, 1 - 1e-12)
                losses[i] -= np.mean(y01[te] * np.log(p) + (1 - y01[te]) * np.log(1 - p))
        return Cs[int(np.argmin(losses))]


class MassMeanProbe(_LinearProbe):
    """Difference of class means, optionally covariance-corrected (Fisher LDA direction).

    ``covariance="none"``: direction = mean(false) - mean(true) (Marks & Tegmark's MM probe).
    ``covariance="within"``: direction = Σ⁻¹ (mean(false) - mean(true)) with Σ the
    Ledoit-Wolf shrunk within-class covariance — corrects for directions of large
    label-irrelevant variance. The offset and scale come from a 1-D logistic fit on the
    training projections, so ``predict_proba`` is calibrated on training data.

    No hyper-parameter to tune and no solver: a strong baseline that generalises well
    across topics, where a logistic probe can latch onto topic-specific dimensions.

    Parameters
    ----------
    covariance : {"none", "within"}, default "none"
        ``"within"`` corrects the direction by the shrunk within-class covariance.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)  # lie labels: 1 = false / deceptive
    >>> X = rng.normal(size=(40, 8))
    >>> X[:, 0] += 3 * y  # hidden states where feature 0 carries the lie
    >>> probe = MassMeanProbe(covariance="within").fit(X, y)
    >>> probe.predict(X[[0, -1]]).tolist(), probe.score(X, y)
    ([0, 1], 1.0)
    """

    def __init__(self, covariance: str = "none"):
        self.covariance = covariance

    def fit(self, X: Any, y: Any) -> "MassMeanProbe":
        """Fit the mean-difference direction, then its scale and offset on the training data.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Hidden states.
        y : array-like of shape (n_rows,)
            Binary labels (lie labels: 1 = false / deceptive).

        Returns
        -------
        MassMeanProbe
            This probe, fitted.

        Raises
        ------
        InputError
            When ``covariance`` is not ``"none"`` or ``"within"``, or X / y are malformed.
        """
        if self.covariance not in ("none", "within"):
            raise InputError(f"covariance={self.covariance!r}: use 'none' or 'within'")
        X, y01 = self._validate_training(X, y)
        pos, neg = X[y01 == 1], X[y01 == 0]
        delta = pos.mean(axis=0) - neg.mean(axis=0)
        if self.covariance == "within":
            centred = np.vstack([pos - pos.mean(axis=0), neg - neg.mean(axis=0)])
            cov = LedoitWolf(assume_centered=True).fit(centred).covariance_
            delta = np.linalg.solve(cov + 1e-9 * np.eye(cov.shape[0]), delta)
        return self._platt(X, y01, delta)


class TTPD(_LinearProbe):
    """Training of Truth and Polarity Direction (Bürger et al., NeurIPS 2024).

    ``fit(X, y, polarity=None, topic=None)``: ``polarity`` is 1 for affirmative and 0 (or
    -1) for negated statements; ``topic`` names each row's topic. Activations are centred
    per topic; least squares ``X_c ≈ t·τ_G + (t·p)·τ_P`` (t = ±1 label, p = ±1 polarity)
    gives the general truth direction τ_G (``direction_``, pointing to "false") and the
    polarity-sensitive τ_P; a logistic regression on the polarity labels gives the polarity
    direction. The classifier is a logistic regression on the two projections
    (X·τ_G, X·polarity direction). Without both polarities it reduces to the projection on τ_G.

    Why: a plain probe trained on affirmative statements often flips on negated ones
    ("X is not Y"); separating the polarity-sensitive part is what lets the truth direction
    transfer across polarity.

    Parameters
    ----------
    C : float, default 1.0
        Inverse regularisation of the polarity regression and of the final classifier.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)  # lie labels: 1 = false / deceptive
    >>> X = rng.normal(size=(40, 8))
    >>> X[:, 0] += 3 * y  # hidden states where feature 0 carries the lie
    >>> polarity = np.tile([1, 0], 20)  # 1 affirmative, 0 negated
    >>> probe = TTPD().fit(X, y, polarity=polarity)
    >>> probe.truth_direction_.shape
    (8,)
    """

    _extra_state = ("truth_direction_", "polarity_direction_")

    def __init__(self, C: float = 1.0):
        self.C = C

    def fit(self, X: Any, y: Any, polarity: Optional[Sequence] = None, topic: Optional[Sequence] = None) -> "TTPD":
        """Fit the truth and polarity directions, then the classifier on their projections.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Hidden states.
        y : array-like of shape (n_rows,)
            Binary labels (lie labels: 1 = false / deceptive).
        polarity : array-like of shape (n_rows,), optional
            1 for affirmative, 0 or -1 for negated rows; without both polarities only the
            truth direction is learned.
        topic : array-like of shape (n_rows,), optional
            Topic per row; activations are centred per topic.

        Returns
        -------
        TTPD
            This probe, fitted (``direction_`` is the truth direction).

        Raises
        ------
        InputError
            When X / y are malformed or a side array has a different length.
        """
        X, y01 = self._validate_training(X, y)
        n = X.shape[0]
        pol = self._check_side_info("polarity", polarity, n)
        top = self._check_side_info("topic", topic, n)
        Xc = X.copy()
        for t in np.unique(top) if top is not None else [None]:
            mask = np.ones(n, bool) if t is None else (top == t)
            Xc[mask] -= Xc[mask].mean(axis=0)
        t = 2.0 * y01 - 1.0
        p = None if pol is None else np.where(np.asarray(pol, dtype=float) > 0, 1.0, -1.0)
        both = p is not None and len(np.unique(p)) == 2
        design = np.column_stack([t, t * p]) if both else t[:, None]
        coefs, *_ = np.linalg.lstsq(design, Xc, rcond=None)
        return self._two_directions(X, y01, p if both else None, coefs[0], self.C, self.C, 2000)

    def _two_directions(
        self, X: np.ndarray, y01: np.ndarray, p: Optional[np.ndarray], tau_g: np.ndarray, polarity_C, final_C, iters
    ) -> "TTPD":
        """The classifier on the projections onto τ_G and the polarity direction (a logistic
        regression on the polarity labels ``p``, None when one polarity only). The two
        features are standardised for the fit (it only helps lbfgs converge) and the weights
        mapped back, so the probe stays linear in X."""
        self.truth_direction_ = tau_g / (np.linalg.norm(tau_g) or 1.0)
        if p is not None:
            plr = LogisticRegression(C=polarity_C, max_iter=2000).fit(X, (p > 0).astype(int))
            self.polarity_direction_ = plr.coef_[0] / (np.linalg.norm(plr.coef_[0]) or 1.0)
            feats = np.column_stack([X @ self.truth_direction_, X @ self.polarity_direction_])
        else:
            self.polarity_direction_ = np.zeros_like(self.truth_direction_)
            feats = (X @ self.truth_direction_)[:, None]
        mu, sd = feats.mean(axis=0), feats.std(axis=0)
        sd = np.where(sd > 1e-12, sd, 1.0)
        lr = LogisticRegression(C=final_C, max_iter=iters).fit((feats - mu) / sd, y01)
        a = lr.coef_[0] / sd
        w = a[0] * self.truth_direction_ + (a[1] * self.polarity_direction_ if p is not None else 0.0)
        self._finish(w, float(lr.intercept_[0]) - float(a @ mu))
        self.direction_ = self.truth_direction_.copy()
        return self


class LATProbe(_LinearProbe):
    """RepE linear artificial tomography: first principal component of pair differences.

    ``fit(X, y, pairs=None)``: ``pairs`` is an [m, 2] array of row indices (deceptive row,
    honest row), e.g. the two personas of one instructed pair. Without pairs, each false
    row is paired with a random true row (seeded by ``random_state``). Differences get
    random signs (as in RepE) so the component is found without using its sign; the sign is
    then set so that false/deceptive rows score higher, and the offset/scale are fitted on
    the training projections.

    Made for paired data (`instructed_pairs`): the difference within a pair cancels what
    both rows share (the fact asserted), leaving the speaker's intent.

    Parameters
    ----------
    random_state : int, default 0
        Seed of the random pairing (when no pairs are given) and of the difference signs.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)  # lie labels: 1 = false / deceptive
    >>> X = rng.normal(size=(40, 8))
    >>> X[:, 0] += 3 * y  # hidden states where feature 0 carries the lie
    >>> probe = LATProbe().fit(X, y)
    >>> probe.predict(X[[0, -1]]).tolist()
    [0, 1]
    """

    def __init__(self, random_state: int = 0):
        self.random_state = random_state

    def fit(self, X: Any, y: Any, pairs: Optional[np.ndarray] = None) -> "LATProbe":
        """Fit the first principal component of pair differences, signed so lies score higher.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Hidden states.
        y : array-like of shape (n_rows,)
            Binary labels (lie labels: 1 = false / deceptive).
        pairs : numpy.ndarray of shape (m, 2), optional
            Row indices (deceptive row, honest row); random pairs of a false and a true row
            when omitted.

        Returns
        -------
        LATProbe
            This probe, fitted.

        Raises
        ------
        InputError
            When ``pairs`` is not an [m, 2] array of valid row indices or X / y are malformed.
        """
        X, y01 = self._validate_training(X, y)
        rng = np.random.default_rng(self.random_state)
        if pairs is None:
            pos, neg = np.flatnonzero(y01 == 1), np.flatnonzero(y01 == 0)
            m = max(len(pos), len(neg))
            pairs = np.column_stack(
                [rng.choice(pos, m, replace=len(pos) < m), rng.choice(neg, m, replace=len(neg) < m)]
            )
        pairs = np.asarray(pairs, dtype=int)
        if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.min() < 0 or pairs.max() >= X.shape[0]:
            raise InputError("pairs must be an [m, 2] array of row indices into X: (deceptive row, honest row)")
        diffs = (X[pairs[:, 0]] - X[pairs[:, 1]]) * rng.choice([-1.0, 1.0], size=len(pairs))[:, None]
        diffs -= diffs.mean(axis=0)
        _, _, vt = np.linalg.svd(diffs, full_matrices=False)
        w = vt[0]
        if (X[y01 == 1] @ w).mean() < (X[y01 == 0] @ w).mean():
            w = -w
        return self._platt(X, y01, w)


class BuergerTTPD(TTPD):
    """TTPD exactly as Bürger et al. publish it (sciai-lab/Truth_is_Universal, ``probes.py``).

    Why a second class: `TTPD` above is liedar's earlier reading (centred per topic,
    penalised final regression). The authors' code differs in three places, and this class
    follows it: activations are centred per *dataset file*, i.e. per (topic, polarity)
    (``collect_training_data``: ``acts - mean(acts)`` for ``cities`` and ``neg_cities``
    separately); the polarity direction is an L2 logistic regression with C=0.1 on the raw
    activations; the classifier is an *unpenalised* logistic regression on the two raw
    projections (X·t_G, X·polarity direction). t_G and t_P come from the OLS fit
    ``X_c ≈ t·t_G + (t·p)·t_P`` with t, p = ±1. Without both polarities only t_G is learned
    (as in their code when every polarity is 0). A `TTPD` subclass so that
    `probes.evaluation.fit_probe` hands it polarity and topic.

    Parameters
    ----------
    polarity_C : float, default 0.1
        Inverse regularisation of the polarity-direction regression.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)  # lie labels: 1 = false / deceptive
    >>> X = rng.normal(size=(40, 8))
    >>> X[:, 0] += 3 * y  # hidden states where feature 0 carries the lie
    >>> polarity = np.tile([1, 0], 20)
    >>> topic = np.repeat(["cities", "animals"], 20)
    >>> probe = BuergerTTPD().fit(X, y, polarity=polarity, topic=topic)
    >>> probe.predict(X[[0, -1]]).tolist()
    [0, 1]
    """

    def __init__(self, polarity_C: float = 0.1):
        self.polarity_C = polarity_C

    def fit(
        self, X: Any, y: Any, polarity: Optional[Sequence] = None, topic: Optional[Sequence] = None
    ) -> "BuergerTTPD":
        """Fit as the authors' code does: centre per (topic, polarity), OLS, unpenalised classifier.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Hidden states.
        y : array-like of shape (n_rows,)
            Binary labels (lie labels: 1 = false / deceptive).
        polarity : array-like of shape (n_rows,), optional
            1 for affirmative, 0 or -1 for negated rows; all affirmative when omitted.
        topic : array-like of shape (n_rows,), optional
            Topic (dataset file) per row.

        Returns
        -------
        BuergerTTPD
            This probe, fitted.

        Raises
        ------
        InputError
            When X / y are malformed or a side array has a different length.
        """
        X, y01 = self._validate_training(X, y)
        n = X.shape[0]
        pol = self._check_side_info("polarity", polarity, n)
        top = self._check_side_info("topic", topic, n)
        p = np.ones(n) if pol is None else np.where(np.asarray(pol, dtype=float) > 0, 1.0, -1.0)
        keys = np.char.add(np.asarray(top if top is not None else np.zeros(n)).astype(str), p.astype(str))
        Xc = X.copy()
        for k in np.unique(keys):
            mask = keys == k
            Xc[mask] -= Xc[mask].mean(axis=0)
        t = 2.0 * y01 - 1.0
        both = len(np.unique(p)) == 2
        design = np.column_stack([t, t * p]) if both else t[:, None]
        coefs, *_ = np.linalg.lstsq(design, Xc, rcond=None)
        # the final regression unpenalised, as published
        return self._two_directions(X, y01, p if both else None, coefs[0], self.polarity_C, np.inf, 5000)


PROBE_TYPES: tuple[type, ...] = (LogisticProbe, MassMeanProbe, TTPD, LATProbe, BuergerTTPD)
"""Every probe class `probes.io` may load (a fixed registry: nothing is imported by name)."""


def make_probe(name: str) -> _LinearProbe:
    """Build a probe from a short CLI name: logistic, mass-mean, mass-mean-cov, ttpd, lat.

    The names are the CLI's ``--probe`` values, so a script can pick the same estimator a
    command line did.

    Parameters
    ----------
    name : str
        One of ``PROBE_NAMES``.

    Returns
    -------
    probe
        An unfitted estimator with default settings.

    Raises
    ------
    InputError
        When ``name`` is unknown.

    Examples
    --------
    >>> make_probe("mass-mean-cov")
    MassMeanProbe(covariance='within')
    """
    table = {
        "logistic": LogisticProbe,
        "mass-mean": MassMeanProbe,
        "mass-mean-cov": lambda: MassMeanProbe(covariance="within"),
        "ttpd": TTPD,
        "lat": LATProbe,
    }
    if name not in table:
        raise InputError(f"unknown probe type {name!r}: choose one of {', '.join(table)}")
    return table[name]()


PROBE_NAMES = ("logistic", "mass-mean", "mass-mean-cov", "ttpd", "lat")
