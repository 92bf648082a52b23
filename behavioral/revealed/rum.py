"""Random utility: can choice frequencies come from a probability distribution over rankings?

Two questions, answered separately:

* **Exact** (``rum_exact``): are the observed frequencies *exactly* a mixture of strict
  rankings? A linear program over the mixture weights (minimise the L1 gap between
  observed and mixture-implied frequencies; zero means consistent). Up to 6 actions all
  rankings are listed (120 for 5 actions); beyond that, column generation adds rankings
  one at a time, each found by an *exact* pricing step (an integer program over
  orderings), so the verdict is exact at any size, not a heuristic.
* **Statistical** (``rum_test``): with K samples per menu, observed frequencies of a true
  random-utility model fall outside the polytope by chance. The statistic is the
  sample-size-weighted squared distance to the polytope,
  ``T = min over mixtures  sum_menus K_m * sum_items (p_hat - p_mixture)^2``,
  and its null distribution is simulated by a parametric bootstrap from the *projected*
  frequencies (the closest RUM-consistent point): resample K choices per menu, recompute
  T. This is a simplified Kitamura–Stoye test (no tightening); its size and power are
  measured, not assumed — see ``scripts/calibrate_rum.py`` and docs/revealed.md.

Parse-fails are left out (frequencies are over on-menu samples); the log reports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from liedar.behavioral.revealed.logs import ChoiceLog, MenuChoiceLog
from liedar.behavioral.revealed.orderings import (
    above_matrix,
    pair_index,
    rank_table,
    ranking_from_above,
    transitivity_rows,
)
from liedar.core._util.serial import Serial
from liedar.core.errors import InputError

ENUMERATE_UP_TO = 6
_TOL = 1e-9


@dataclass
class _Design:
    """The pooled menus as rows (menu, item) over the actions that appear in some menu."""

    items: list[str]  # local action labels
    menus: list[np.ndarray]  # local item indices per menu
    counts: list[np.ndarray]  # on-menu counts per menu
    row_menu: np.ndarray  # menu of each row
    row_item: np.ndarray  # local item of each row

    @property
    def sizes(self) -> np.ndarray:
        return np.array([c.sum() for c in self.counts], dtype=float)

    def frequencies(self, counts: Optional[Sequence[np.ndarray]] = None) -> np.ndarray:
        return np.concatenate([c / c.sum() for c in (counts or self.counts)])

    def row_weights(self) -> np.ndarray:
        return self.sizes[self.row_menu]

    def columns_for(self, ranks: np.ndarray) -> np.ndarray:
        """0/1 matrix [rows, rankings]: is the row's item the top of its menu in each ranking?"""
        out = np.zeros((len(self.row_menu), len(ranks)))
        r = 0
        for menu in self.menus:
            sub = ranks[:, menu]
            top = np.argmin(sub, axis=1)
            out[r + top, np.arange(len(ranks))] = 1.0
            r += len(menu)
        return out


def _design(log: ChoiceLog) -> _Design:
    stoch = log.to_stochastic() if isinstance(log, MenuChoiceLog) else log
    pooled = [(m, c) for m, c in stoch.pooled() if c.sum() > 0]
    if not pooled:
        raise InputError("no menu has an on-menu choice: nothing to test (every answer was a parse-fail)")
    items = sorted({a for m, _ in pooled for a in m})
    index = {a: i for i, a in enumerate(items)}
    menus = [np.array([index[a] for a in m]) for m, _ in pooled]
    counts = [c.astype(float) for _, c in pooled]
    row_menu = np.concatenate([np.full(len(m), k) for k, m in enumerate(menus)])
    row_item = np.concatenate(menus)
    return _Design(items, menus, counts, row_menu, row_item)


def _price(design: _Design, row_value: np.ndarray, time_limit: float = 60.0) -> np.ndarray:
    """Exact ``argmax over rankings of sum_rows row_value * [row item is top of its menu]``.

    Returns the ranking as a rank vector (rank[item], 0 = best). An integer program over
    pair orders: t_row = 1 iff the row's item is the top of its menu (one per menu).
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    s = len(design.items)
    pairs = pair_index(s)
    n_x, n_t = len(pairs), len(row_value)
    rows, cols, vals, r = transitivity_rows(s, pairs)
    lo, hi = [0.0] * r, [1.0] * r
    row = 0
    for menu in design.menus:
        for a in menu:  # t_(menu, a) <= [a above b] for every other b
            for b in menu:
                if a == b:
                    continue
                a_, b_ = int(a), int(b)
                rows += [r, r]
                cols += [n_x + row, pairs[min(a_, b_), max(a_, b_)]]
                if a_ < b_:
                    vals += [1.0, -1.0]
                    hi.append(0.0)
                else:
                    vals += [1.0, 1.0]
                    hi.append(1.0)
                lo.append(-np.inf)
                r += 1
            row += 1
        first = row - len(menu)  # exactly one top per menu
        rows += [r] * len(menu)
        cols += [n_x + first + k for k in range(len(menu))]
        vals += [1.0] * len(menu)
        lo.append(1.0)
        hi.append(1.0)
        r += 1
    a = coo_matrix((vals, (rows, cols)), shape=(r, n_x + n_t)).tocsr()
    res = milp(
        np.concatenate([np.zeros(n_x), -np.asarray(row_value, dtype=float)]),
        constraints=LinearConstraint(a, lo, hi),
        integrality=np.concatenate([np.ones(n_x), np.zeros(n_t)]),
        bounds=Bounds(0, 1),
        options={"time_limit": time_limit, "disp": False, "mip_rel_gap": 0.0},
    )
    if res.status != 0 or res.x is None:
        raise InputError(
            f"the exact ranking search stopped ({res.message}): the random-utility verdict would "
            "not be exact; reduce the number of actions or raise the time budget"
        )
    order = ranking_from_above(above_matrix(s, res.x[:n_x], pairs))
    rank = np.empty(s, dtype=np.int64)
    rank[order] = np.arange(s)
    return rank


def _initial_ranks(design: _Design) -> np.ndarray:
    """One ranking per action order by overall choice share (a cheap, sensible start)."""
    score = np.zeros(len(design.items))
    for menu, c in zip(design.menus, design.counts):
        score[menu] += c / c.sum()
    order = np.argsort(-score, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[None, :]


def _all_ranks(design: _Design) -> Optional[np.ndarray]:
    s = len(design.items)
    return rank_table(s).astype(np.int64) if s <= ENUMERATE_UP_TO else None


@dataclass
class RumExactResult:
    """``consistent`` iff the frequencies are exactly a mixture of rankings.

    ``l1_gap`` is the smallest total absolute gap between observed and mixture-implied
    frequencies; ``mixture`` lists the rankings (best first) with positive weight.

    Parameters
    ----------
    consistent : bool
        The frequencies are exactly a mixture of rankings.
    l1_gap : float
        Smallest total absolute gap to a mixture of rankings (0 when consistent).
    mixture : list of tuple of (list of str, float)
        Rankings (best first) and their weights in the closest mixture.
    method : str
        How the rankings were searched (enumeration or column generation).
    n_rankings_considered : int
        Rankings the search looked at.
    """

    consistent: bool
    l1_gap: float
    mixture: list[tuple[list[str], float]]
    method: str
    n_rankings_considered: int

    # stays hand-written: writes the mixture as ranking/weight objects, not pairs
    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dictionary (mixture as ranking/weight objects).

        Returns
        -------
        dict
            One key per field.
        """
        d = dict(self.__dict__)
        d["mixture"] = [{"ranking": r, "weight": w} for r, w in self.mixture]
        return d


def _l1_lp(m: np.ndarray, p: np.ndarray):
    """min sum|M pi - p| over the simplex; returns the scipy result (HiGHS, with duals)."""
    from scipy.optimize import linprog

    n_r, n_c = m.shape
    eye = np.eye(n_r)
    a_eq = np.block([[m, eye, -eye], [np.ones((1, n_c)), np.zeros((1, 2 * n_r))]])
    b_eq = np.concatenate([p, [1.0]])
    cost = np.concatenate([np.zeros(n_c), np.ones(2 * n_r)])
    return linprog(cost, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")


def rum_exact(log: ChoiceLog, max_rounds: int = 500) -> RumExactResult:
    """Are the observed choice frequencies exactly a mixture of strict rankings (RUM)?

    The noise-free check: with K sampled choices per menu it rejects almost any real log,
    so use `rum_test` on samples and this on exact laws (`rum_exact_law`) or to read the
    closest mixture.

    Parameters
    ----------
    log : MenuChoiceLog or StochasticChoiceLog
        Choices; repeated menus are pooled.
    max_rounds : int, default 500
        Column-generation rounds before giving up (larger action sets).

    Returns
    -------
    RumExactResult
        ``consistent``, the L1 gap and the closest mixture of rankings.

    Raises
    ------
    InputError
        When the column generation does not converge in ``max_rounds``.

    Examples
    --------
    >>> from liedar.behavioral.revealed import StochasticChoiceLog
    >>> log = StochasticChoiceLog.from_counts([["a", "b"], ["a", "b", "c"]],
    ...                                       [{"a": 3, "b": 1}, {"a": 1, "b": 2, "c": 1}])
    >>> result = rum_exact(log)
    >>> result.consistent, round(result.l1_gap, 3)
    (False, 0.5)
    """
    return _rum_exact_design(_design(log), max_rounds)


def rum_exact_law(
    menus: Sequence[Sequence[str]], probabilities: Sequence[Sequence[float]], max_rounds: int = 500
) -> RumExactResult:
    """RUM on exact choice probabilities (a model's choice law, no sampling noise).

    Why a separate entry: a `ChoiceLog` holds whole counts out of K, while an exact law
    (`liedar.models.sampling.choice_law`) is real-valued; with no sampling noise the
    noise-free L1 test *is* the right test (distance 0 <=> a mixture of rankings),
    whereas for K sampled choices it rejects nearly everything (see docs/revealed.md).
    Repeated menus (as sets) are averaged.

    Parameters
    ----------
    menus : sequence of sequence of str
        The menus.
    probabilities : sequence of sequence of float
        Per menu, the probability of each action in menu order (summing to 1).
    max_rounds : int, default 500
        Column-generation rounds before giving up.

    Returns
    -------
    RumExactResult
        ``consistent``, the L1 gap and the closest mixture of rankings.

    Raises
    ------
    InputError
        When menus and rows differ in number, a menu has fewer than two distinct actions,
        a row does not match its menu, or probabilities are negative or do not sum to 1.

    Examples
    --------
    >>> rum_exact_law([["a", "b"], ["a", "b", "c"]], [[0.5, 0.5], [0.4, 0.4, 0.2]]).consistent
    True
    >>> rum_exact_law([["a", "b"], ["a", "b", "c"]], [[0.75, 0.25], [0.25, 0.5, 0.25]]).consistent
    False
    """
    if len(menus) == 0 or len(menus) != len(probabilities):
        raise InputError(f"{len(menus)} menus and {len(probabilities)} probability rows: give one row per menu")
    by_set: dict[frozenset[str], tuple[tuple[str, ...], np.ndarray]] = {}
    for i, (menu_given, row_given) in enumerate(zip(menus, probabilities)):
        menu, row = tuple(menu_given), np.asarray(row_given, dtype=float)
        if len(menu) < 2 or len(set(menu)) != len(menu) or row.shape != (len(menu),):
            raise InputError(f"menu {i}: give at least two distinct actions and one probability per action")
        if (row < 0).any() or not np.isclose(row.sum(), 1.0, atol=1e-6):
            raise InputError(f"menu {i}: probabilities must be non-negative and sum to 1 (got sum {row.sum():.6f})")
        key = frozenset(menu)
        if key in by_set:
            ref, acc = by_set[key]
            by_set[key] = (ref, acc + row[[menu.index(a) for a in ref]])
        else:
            by_set[key] = (menu, row.copy())
    items = sorted({a for m, _ in by_set.values() for a in m})
    index = {a: i for i, a in enumerate(items)}
    local = [np.array([index[a] for a in m]) for m, _ in by_set.values()]
    design = _Design(
        items,
        local,
        [c for _, c in by_set.values()],
        np.concatenate([np.full(len(m), k) for k, m in enumerate(local)]),
        np.concatenate(local),
    )
    return _rum_exact_design(design, max_rounds)


def _rum_exact_design(design: _Design, max_rounds: int) -> RumExactResult:
    p = design.frequencies()
    ranks = _all_ranks(design)
    method = "enumeration"
    if ranks is None:
        method, ranks = "column-generation", _initial_ranks(design)
    for _ in range(max_rounds):
        m = design.columns_for(ranks)
        res = _l1_lp(m, p)
        if method == "enumeration" or res.fun <= _TOL:
            break
        duals = res.eqlin.marginals
        new = _price(design, duals[:-1])
        if design.columns_for(new[None, :])[:, 0] @ duals[:-1] + duals[-1] <= 1e-9:
            break  # no ranking has negative reduced cost: the LP optimum is global
        ranks = np.vstack([ranks, new])
    else:
        raise InputError(f"column generation did not converge in {max_rounds} rounds: raise max_rounds")
    weights = res.x[: len(ranks)]
    mixture = [
        ([design.items[i] for i in np.argsort(ranks[k])], float(weights[k]))
        for k in np.argsort(-weights)
        if weights[k] > 1e-9
    ]
    return RumExactResult(bool(res.fun <= 1e-7), float(res.fun), mixture, method, len(ranks))


def _distance(m: np.ndarray, p: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """T = min over the simplex of sum w (M pi - p)^2, and the minimiser pi.

    Non-negative least squares with the simplex's sum-to-one as a heavily weighted extra
    row; pi is then renormalised so T is evaluated at a genuinely feasible mixture.
    """
    from scipy.optimize import nnls

    sw = np.sqrt(w)
    big = 1e3 * max(1.0, float(sw.max()))
    a = np.vstack([sw[:, None] * m, np.full((1, m.shape[1]), big)])
    b = np.concatenate([sw * p, [big]])
    pi, _ = nnls(a, b, maxiter=50 * m.shape[1])
    pi = pi / pi.sum()
    return float(np.sum(w * (m @ pi - p) ** 2)), pi


def _project(
    design: _Design, p: np.ndarray, ranks: np.ndarray, m: np.ndarray, max_rounds: int
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Distance to the RUM polytope, the mixture, and the rankings used with their columns.

    With all rankings listed this is one least-squares solve; otherwise column generation
    adds the exactly priced ranking that most decreases the distance until none does.
    """
    w = design.row_weights()
    enumerated = len(design.items) <= ENUMERATE_UP_TO
    for _ in range(max_rounds):
        t, pi = _distance(m, p, w)
        if enumerated:
            return t, pi, ranks, m
        grad = 2 * w * (m @ pi - p)  # d T / d (mixture frequencies)
        new = _price(design, -grad)
        column = design.columns_for(new[None, :])
        gap = grad @ (m @ pi) - column[:, 0] @ grad  # how much the best new ranking improves
        if gap <= 1e-7 * max(1.0, t) or (ranks == new).all(axis=1).any():
            return t, pi, ranks, m  # optimal up to the least-squares solver's accuracy
        ranks, m = np.vstack([ranks, new]), np.hstack([m, column])
    raise InputError(f"column generation did not converge in {max_rounds} rounds: raise max_rounds")


@dataclass
class RumTestResult(Serial):
    """Exact verdict plus a bootstrap test that allows for sampling noise.

    ``reject`` is True when ``p_value < alpha``: the frequencies are further from every
    random-utility model than K samples per menu would plausibly explain.

    Parameters
    ----------
    exact : RumExactResult
        The noise-free verdict on the observed frequencies.
    distance : float
        Weighted distance of the frequencies to the closest random-utility model.
    p_value : float
        Bootstrap p-value of that distance.
    alpha : float
        The test's level.
    reject : bool
        ``p_value < alpha``.
    n_bootstrap : int
        Bootstrap samples.
    seed : int
        Seed of the bootstrap.
    n_menus : int
        Distinct menus.
    n_actions : int
        Actions.
    samples_per_menu : list of int
        On-menu samples of each distinct menu.
    n_parse_fail : int
        Samples not on their menu (left out).
    method : str, optional
        The test's name.
    note : str, optional
        Caveats.
    """

    exact: RumExactResult
    distance: float
    p_value: float
    alpha: float
    reject: bool
    n_bootstrap: int
    seed: int
    n_menus: int
    n_actions: int
    samples_per_menu: list[int]
    n_parse_fail: int
    method: str = "min-distance, parametric bootstrap from the projection (simplified Kitamura-Stoye)"
    note: str = field(default="")


def rum_test(
    log: ChoiceLog,
    alpha: float = 0.05,
    n_bootstrap: int = 199,
    seed: int = 0,
    max_rounds: int = 500,
) -> RumTestResult:
    """Test "these choice frequencies come from a random-utility model", allowing for noise.

    Sampled frequencies are almost never exactly a mixture of rankings; this asks whether
    they are further from one than K samples per menu would explain (a parametric
    bootstrap from the closest mixture, after Kitamura and Stoye).

    Parameters
    ----------
    log : MenuChoiceLog or StochasticChoiceLog
        Choices; repeated menus are pooled.
    alpha : float, default 0.05
        Level of the test.
    n_bootstrap : int, default 199
        Bootstrap samples (at least 19).
    seed : int, default 0
        Seed of the bootstrap.
    max_rounds : int, default 500
        Column-generation rounds before giving up.

    Returns
    -------
    RumTestResult
        ``reject``, the p-value, the distance and the exact verdict.

    Raises
    ------
    InputError
        When ``alpha`` is outside (0, 1), ``n_bootstrap`` is below 19, or the column
        generation does not converge.

    Examples
    --------
    >>> from liedar.behavioral.revealed import StochasticChoiceLog
    >>> log = StochasticChoiceLog.from_counts(
    ...     [["a", "b"], ["a", "b", "c"], ["b", "c"], ["a", "c"]],
    ...     [{"a": 15, "b": 5}, {"a": 6, "b": 10, "c": 4}, {"b": 12, "c": 8}, {"a": 14, "c": 6}])
    >>> result = rum_test(log, n_bootstrap=99)
    >>> result.exact.consistent, result.reject
    (False, False)
    """
    if not 0 < alpha < 1:
        raise InputError(f"alpha={alpha} must lie strictly between 0 and 1")
    if n_bootstrap < 19:
        raise InputError(f"n_bootstrap={n_bootstrap} is too few for a p-value: use at least 19 (199 is the default)")
    design = _design(log)
    exact = rum_exact(log, max_rounds)
    p = design.frequencies()
    ranks = _all_ranks(design)
    if ranks is None:
        ranks = _initial_ranks(design)
    t, pi, ranks, m = _project(design, p, ranks, design.columns_for(ranks), max_rounds)
    projected = m @ pi
    rng = np.random.default_rng(seed)
    sizes = design.sizes.astype(int)
    bounds = np.cumsum([0] + [len(m) for m in design.menus])
    exceed = 0
    for _ in range(n_bootstrap):
        counts = []
        for k in range(len(design.menus)):
            q = np.clip(projected[bounds[k] : bounds[k + 1]], 0, None)
            counts.append(rng.multinomial(sizes[k], q / q.sum()).astype(float))
        t_star, _, ranks, m = _project(design, design.frequencies(counts), ranks, m, max_rounds)
        exceed += t_star >= t - 1e-9
    p_value = (1 + exceed) / (1 + n_bootstrap)
    stoch = log.to_stochastic() if isinstance(log, MenuChoiceLog) else log
    return RumTestResult(
        exact=exact,
        distance=t,
        p_value=float(p_value),
        alpha=alpha,
        reject=bool(p_value < alpha),
        n_bootstrap=n_bootstrap,
        seed=seed,
        n_menus=len(design.menus),
        n_actions=len(design.items),
        samples_per_menu=[int(s) for s in sizes],
        n_parse_fail=stoch.n_parse_fail(),
    )
