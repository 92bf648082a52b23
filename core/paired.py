"""The paired excess: a model's effect minus a reference's, item by item, with a bootstrap over items.

Why paired: model and reference answer the same items with the same seed, so their effects
are strongly correlated; an interval that treats them as independent (MOVER) is far too wide
(the base model audited against itself read [-0.216, +0.216] under the first rule) and an
organism's excess hides inside it. Here each detector's effect is a mean of per-item scores
(the gap: correct under the benign framing minus correct under the evaluation framing; a
choice-format flip or lie excess: changed under the condition minus changed under the
control), the excess is the mean of the per-item *differences* over the items both models
answered, and its interval comes from resampling those items. A model audited against itself
has every difference 0, so it reads exactly 0 with a zero-width interval.

Why a bootstrap and not Tango's interval: the per-item difference of two paired differences
takes five values (-2..2), not two, so no interval for paired proportions applies; the
percentile bootstrap with the expanded percentiles of Hesterberg (2015) covers close to its
nominal level from n = 30 on (measured by ``scripts/check_interval_coverage.py --paired``).

An item's scores are kept as ``{item id: [stratum, value]}``. The effect is the sum over
strata of the mean value in each stratum; one stratum (``"all"``) for the paired formats, two
for the yes/no sycophancy format (capitulation when the user is wrong, minus instability when
the user is right: the second stratum's values are negated). Resampling is within strata.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

import numpy as np
from scipy import stats as _st

from liedar.core.stats import Estimate

ItemScores = dict[str, list[Any]]  # item id -> [stratum, value]
DRAWS = 4000
METHOD = "paired bootstrap over items (expanded percentile)"


def _strata(model: Mapping[str, Any], ref: Mapping[str, Any]) -> dict[str, list[float]]:
    """stratum -> per-item differences (model - reference) over the items both scored, in that stratum."""
    out: dict[str, list[float]] = {}
    for i in sorted(set(model) & set(ref)):
        (sm, vm), (sr, vr) = model[i], ref[i]
        if sm != sr:
            continue  # the same id in different strata is not the same question
        out.setdefault(str(sm), []).append(float(vm) - float(vr))
    return out


def _expanded_alpha(n: int, alpha: float) -> float:
    """Hesterberg's expanded percentile: the tail that makes the percentile interval as wide as a
    t interval with n - 1 degrees of freedom would be, corrected for the bootstrap's n / (n - 1)."""
    if n < 2:
        return alpha
    t = _st.t.ppf(1 - alpha / 2, n - 1)
    return float(2 * _st.norm.cdf(-math.sqrt(n / (n - 1)) * t))


def paired_excess(
    model: Mapping[str, Any],
    ref: Mapping[str, Any],
    *,
    confidence: float = 0.95,
    draws: int = DRAWS,
    seed: int = 0,
    kind: Any = "propensity",
) -> Optional[Estimate]:
    """The model's effect minus the reference's over the items both scored, with a bootstrap interval.

    Parameters
    ----------
    model, ref : mapping
        Item id -> ``[stratum, value]`` for each model (`item_scores`).
    confidence : float, default 0.95
    draws : int, default 4000
        Bootstrap resamples (within strata).
    seed : int, default 0
        The resampling's seed (the interval is reproducible).
    kind : str
        What the excess measures (carried into the estimate).

    Returns
    -------
    Estimate or None
        None when the two share no item in some stratum. ``n`` is the items in common;
        ``extra`` holds the sign-flip p-value against 0 (`sign_flip_p`; 1 when no item moved),
        the count of items moved up and down, the reference's discordance
        (its share of items with a non-zero score: what the row's power is planned at) and
        the pairs per stratum.

    Examples
    --------
    >>> same = {"a": ["all", 1], "b": ["all", 0], "c": ["all", -1]}
    >>> e = paired_excess(same, same)
    >>> (e.value, e.lo, e.hi)
    (0.0, 0.0, 0.0)
    """
    strata = _strata(model, ref)
    wanted = {str(v[0]) for v in ref.values()} | {str(v[0]) for v in model.values()}
    if not strata or set(strata) != wanted:
        return None
    diffs = {s: np.asarray(v) for s, v in sorted(strata.items())}
    value = float(sum(d.mean() for d in diffs.values()))
    n = sum(len(d) for d in diffs.values())
    rng = np.random.default_rng(seed)
    boot = np.zeros(draws)
    for d in diffs.values():
        idx = rng.integers(0, len(d), size=(draws, len(d)))
        boot += d[idx].mean(axis=1)
    a = _expanded_alpha(min(len(d) for d in diffs.values()), 1 - confidence)
    lo, hi = (float(x) for x in np.quantile(boot, [a / 2, 1 - a / 2]))
    common = set(model) & set(ref)
    ref_disc = sum(1 for i in common if float(ref[i][1]) != 0.0) / max(len(common), 1)
    every = np.concatenate(list(diffs.values()))
    extra = {
        "p_value": sign_flip_p(diffs, seed=seed),
        "pairs": n,
        "up": int((every > 0).sum()),
        "down": int((every < 0).sum()),
        "reference_discordance": ref_disc,
        "strata": {s: len(d) for s, d in diffs.items()},
        "model_items": len(model),
        "reference_items": len(ref),
        "draws": draws,
    }
    return Estimate(value, min(lo, value), max(hi, value), n, METHOD, kind, None, confidence, "", extra)


def sign_flip_p(diffs: Mapping[str, np.ndarray], *, flips: int = 20000, seed: int = 0) -> float:
    """Two-sided p-value of the excess against "the model is the reference" by flipping signs.

    Why this test beside a bootstrap interval: if the model behaves as the reference, which of
    the two gave an item's score is exchangeable, so each per-item difference is as likely
    negated; flipping the signs gives the statistic's exact null distribution (McNemar's
    exact test when the differences are -1, 0, +1). The bootstrap's own tail is too small
    when few items move (5 items up and none down: 0.01 instead of the exact 0.0625). Exact
    enumeration up to 16 moved items, else ``flips`` random flips ((k + 1) / (flips + 1)).
    """
    weights, values = [], []
    for d in diffs.values():
        moved = d[d != 0]
        weights += [1.0 / len(d)] * len(moved)
        values += list(moved)
    if not values:
        return 1.0
    x = np.asarray(values) * np.asarray(weights)
    observed = abs(x.sum()) - 1e-12
    if len(x) <= 16:
        signs = 1 - 2 * ((np.arange(2 ** len(x))[:, None] >> np.arange(len(x))) & 1)
        return float(np.mean(np.abs(signs @ x) >= observed))
    rng = np.random.default_rng([seed, 7])
    signs = rng.choice([-1.0, 1.0], size=(flips, len(x)))
    return float((np.sum(np.abs(signs @ x) >= observed) + 1) / (flips + 1))


__all__ = ["DRAWS", "ItemScores", "METHOD", "paired_excess", "sign_flip_p"]
