"""Houtman-Maks index: the fewest observations to drop so that the rest satisfy SARP.

Exact by construction, at hundreds of observations over 20 actions:

1. **Decompose.** Only observations whose chosen item and some other menu item lie in the
   same strongly connected component (SCC) of the revealed relation can ever need
   dropping: order the SCCs topologically and every edge between components is honoured
   whatever happens inside them. So the problem splits into one independent sub-problem
   per cyclic SCC, each over its own items and only the *intra-component* parts of menus.
2. **Merge** observations with the same (choice, intra-component menu) into one weighted
   constraint.
3. **Solve each component exactly**: enumerate the orderings of up to 6 items; beyond
   that, first a **greedy ranking with a matching bound**: a net-wins ranking improved by
   moving one item at a time to its best place (an upper bound on drops, always feasible)
   against a lower bound from pairwise conflicts (two observations revealing a > b and
   b > a cannot both be kept; a greedy packing of disjoint conflicting pairs is a lower
   bound). When they meet, the greedy ranking is proven optimal and no solver runs (most
   components of the 1000 x 500 benchmark, scripts/bench_revealed.py part b). Otherwise an
   integer program over item orderings (pair-order binaries with the 3-cycle
   transitivity inequalities; an observation is kept only if its choice is ordered above
   every other item of its menu), solved by HiGHS through ``scipy.optimize.milp``, with
   the greedy incumbent as a cut-off (kept weight at least the greedy's) and the matching
   bound as proof of optimality.

`houtman_maks_many` spreads many logs over joblib processes or Ray tasks.

Keeping a maximum set of observations that one strict ranking satisfies is the same as
dropping a minimum set that restores SARP (an acyclic relation extends to a ranking).
If the time budget runs out the result says so (``exact=False``) and reports the
incumbent (an upper bound, always a feasible drop set) and the solver's lower bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from liedar.behavioral.revealed.logs import MenuChoiceLog
from liedar.behavioral.revealed.orderings import above_matrix, pair_index, rank_table, transitivity_rows
from liedar.behavioral.revealed.sarp import is_acyclic, revealed_relation, shortest_cycle_through, transitive_closure
from liedar.core._util.serial import Serial

ENUMERATE_UP_TO = 6
SMALL_LOG = 64  # observations; shorter logs build their sub-problems on Python integers


@dataclass
class HoutmanMaksResult(Serial):
    """``n_drop`` observations (``dropped``: their indices in the log) restore SARP.

    ``exact`` is True when ``n_drop`` is proven minimal; otherwise the minimum lies in
    [``lower_bound``, ``n_drop``] and ``note`` says why the search stopped.

    Parameters
    ----------
    n_drop : int
        Observations dropped (the Houtman-Maks index, when ``exact``).
    dropped : list of int
        Their indices in the log.
    exact : bool
        ``n_drop`` is proven minimal.
    lower_bound : int
        A proven lower bound on the minimum.
    n_observations : int
        Observations in the log.
    largest_component : int
        Items in the largest cyclic component (what makes a log hard).
    method : str
        How the components were solved (enumeration, greedy, integer program).
    seconds : float
        Time taken.
    note : str, optional
        Why the search stopped early, when it did.
    """

    n_drop: int
    dropped: list[int]
    exact: bool
    lower_bound: int
    n_observations: int
    largest_component: int
    method: str
    seconds: float
    note: str = ""


def cyclic_components(adj: list[int]) -> list[int]:
    """Bitmasks of the strongly connected components that contain a cycle."""
    reach = transitive_closure(adj)
    n = len(adj)
    back = [0] * n
    for i in range(n):
        row = reach[i]
        while row:
            j = (row & -row).bit_length() - 1
            row &= row - 1
            back[j] |= 1 << i
    done, comps = 0, []
    for i in range(n):
        if reach[i] >> i & 1 and not done >> i & 1:
            comp = reach[i] & back[i]
            comps.append(comp)
            done |= comp
    return comps


def _solve_by_enumeration(s: int, choice: np.ndarray, others: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Kept-mask over groups for the best of all s! orderings."""
    ranks = rank_table(s)
    min_other = np.where(others[None, :, :], ranks[:, None, :], s).min(axis=2)
    sat = ranks[:, choice] < min_other
    best = int(np.argmax(sat @ weight))
    return sat[best]


def _kept_by_ranks(R: np.ndarray, choice: np.ndarray, others: np.ndarray, s: int) -> np.ndarray:
    """kept[k, g]: does ranking k (``R[k, item]`` = position, 0 = best) satisfy group g?"""
    R = R.astype(np.int8, copy=False)  # s <= 127 here (ENUMERATE_UP_TO < s <= n_actions); int8 halves the traffic
    min_other = np.where(others[None, :, :], R[:, None, :], np.int8(s)).min(axis=2)
    return R[:, choice] < min_other


def _greedy_ranking(
    s: int, choice: np.ndarray, others: np.ndarray, weight: np.ndarray, stop_at: float = np.inf, max_kicks: int = 40
) -> tuple[np.ndarray, float]:
    """(ranks, kept weight) of a local optimum, improved by kicks.

    Start from the net-wins order and take the best single-item move (one item taken out
    and put back at any position) while one helps, or until the kept weight reaches
    ``stop_at``. Then, while short of ``stop_at``, *kick*: for a group the ranking drops,
    force it kept (its choice moved just above its best other item, or that item moved
    just below the choice), search again from there, and keep the result if it is better
    (at most ``max_kicks`` kicks). A move that loses one observation and opens a move that
    gains two is invisible to single moves; the kicks find most of those.
    """
    w = weight.astype(float)
    og, oi = np.nonzero(others)  # one entry per (group, other item of its menu)
    win = np.zeros((s, s))
    np.add.at(win, (choice[og], oi), w[og])
    order = np.argsort(-(win.sum(1) - win.sum(0)), kind="stable")
    ranks = np.empty(s, dtype=np.int64)
    ranks[order] = np.arange(s)
    ctx = (s, choice, others, w, og, oi)
    ranks, kept, sat, first, arg = _local_search(ranks, ctx, stop_at)
    kicks, tried = 0, set()
    while kept < stop_at and kicks < max_kicks:
        todo = [g for g in np.flatnonzero(~sat)[np.argsort(-w[~sat], kind="stable")] if int(g) not in tried]
        if not todo:
            break
        g = int(todo[0])
        tried.add(g)
        improved = False
        for item, pos in ((int(choice[g]), int(first[g])), (int(arg[g]), int(ranks[choice[g]]))):
            kicks += 1
            cand = _moved(ranks, item, pos)
            r2, k2, s2, f2, a2 = _local_search(cand, ctx, stop_at)
            if k2 > kept + 1e-9:
                ranks, kept, sat, first, arg = r2, k2, s2, f2, a2
                improved = True
                break
        if improved:
            tried.clear()
    return ranks, kept


def _moved(ranks: np.ndarray, item: int, pos: int) -> np.ndarray:
    """``ranks`` with ``item`` taken out and put back at position ``pos`` (others keep their order)."""
    pos = min(max(pos, 0), len(ranks) - 1)
    rest = ranks - (ranks > ranks[item])
    out = rest + (rest >= pos)
    out[item] = pos
    return out


def _local_search(ranks: np.ndarray, ctx: tuple, stop_at: float) -> tuple:
    """Best single-item moves from ``ranks`` until none helps (or ``stop_at`` is reached).

    Returns (ranks, kept weight, kept mask, best other position per group, best other item).

    Why it is cheap: moving item ``i`` to position ``p`` keeps the others' relative order,
    so a group is kept for an *interval* of positions p: a group choosing ``i`` is kept
    while ``i`` stays above the group's best other item, a group offering ``i`` is kept
    (if its choice beats the rest of its menu) once ``i`` goes below its choice. Summing
    the intervals with a difference array scores all s x s moves in a few array operations.
    """
    s, choice, others, w, og, oi = ctx
    starts = np.flatnonzero(np.r_[True, og[1:] != og[:-1]])  # og is sorted and names every group
    width = s + 1
    choice_start = choice * width  # a group choosing i: kept for p in [0, end]
    other_base = oi * width
    w_og = w[og]
    base = np.bincount(choice_start, weights=w, minlength=s * width)  # every choice interval opens at p = 0
    previous = -np.inf
    while True:
        ro = ranks[oi]  # per (group, other item): that item's position
        first = np.minimum.reduceat(ro, starts)
        is_first = ro == first[og]  # positions are distinct: one per group
        arg = oi[is_first]
        second = np.minimum.reduceat(np.where(is_first, s, ro), starts)
        rc = ranks[choice]
        sat = rc < first
        kept = float(w[sat].sum())
        if kept >= stop_at or kept <= previous:  # the second never happens while the scores are right
            break
        previous = kept
        end = first - (first > rc)  # the best other item's position once the choice is taken out
        without = np.where(is_first, second[og], first[og])  # best other item except i
        rco = rc[og]
        ok = rco < without
        lo = rco - (rco > ro) + 1  # i must go below the choice (open to the end: column s is cut off)
        idx = np.concatenate([choice_start + end + 1, other_base + lo])
        val = np.concatenate([-w, w_og * ok])
        diff = base + np.bincount(idx, weights=val, minlength=s * width)
        gains = np.cumsum(diff.reshape(s, width), axis=1)[:, :s]
        ws = w * sat
        touching = np.bincount(choice, weights=ws, minlength=s) + np.bincount(oi, weights=ws[og], minlength=s)
        total = gains + (kept - touching)[:, None]
        best = int(np.argmax(total))
        item, pos = divmod(best, s)
        if total[item, pos] <= kept + 1e-9:
            break
        ranks = _moved(ranks, item, pos)
    return ranks, kept, sat, first, arg


def _conflict_bound(choice: np.ndarray, others: np.ndarray, weight: np.ndarray) -> float:
    """A lower bound on the weight to drop, from disjoint cycles of observations.

    A set of observations whose revealed edges close a cycle cannot all be kept, so a
    packing of observation-disjoint such sets (each group used at most its weight) needs
    one drop per set. First pairs: groups g, h conflict when each one's choice is in the
    other's menu (a > b and b > a), packed greedily least-conflicted first; then, on what
    the pairs left, any longer cycle of the remaining observations' relation, one at a
    time (shortest first, by breadth-first search), until that relation is acyclic.
    """
    s = others.shape[1]
    capacity = weight.astype(float).copy()
    og, oi = np.nonzero(others)
    revealed = np.zeros((s, s), dtype=bool)
    revealed[choice[og], oi] = True
    both = revealed & revealed.T
    active = np.flatnonzero((others & both[choice]).any(1))  # exactly the groups with a conflicting partner
    bound = 0.0
    if len(active):
        sub = others[np.ix_(active, choice[active])]  # sub[x, y]: y's choice is in x's menu
        xs, ys = np.nonzero(sub & sub.T)
        degree = np.bincount(xs, minlength=len(active))
        order = np.lexsort((ys, degree[ys], xs))  # each group's partners, least-conflicted first
        flat = ys[order].tolist()
        ends = np.cumsum(degree).tolist()
        deg = degree.tolist()
        cap = capacity[active].tolist()
        for x in np.argsort(degree, kind="stable").tolist():
            for y in flat[ends[x] - deg[x] : ends[x]]:
                if cap[x] <= 0:
                    break
                flow = min(cap[x], cap[y])
                if flow > 0:
                    cap[x] -= flow
                    cap[y] -= flow
                    bound += flow
        capacity[active] = cap
    return bound + _pack_cycles(choice, others, capacity)


def _pack_cycles(choice: np.ndarray, others: np.ndarray, capacity: np.ndarray) -> float:
    """Greedy packing of observation-disjoint cycles among the groups with capacity left
    (``capacity`` is used up in place); returns the packed weight."""
    s = others.shape[1]
    small = s <= 62  # menus as int64 bit rows; wider components fall back to Python integers
    if small:
        bits = (others.astype(np.int64) << np.arange(s, dtype=np.int64)).sum(1)
    else:
        bits = [sum(1 << int(i) for i in np.flatnonzero(row)) for row in others]
    packed = 0.0
    while True:
        live = np.flatnonzero(capacity > 0)
        if small:
            rows = np.zeros(s, dtype=np.int64)
            np.bitwise_or.at(rows, choice[live], bits[live])
            adj = rows.tolist()
        else:
            adj = [0] * s
            for g in live.tolist():
                adj[choice[g]] |= bits[g]
        cycle = _shortest_cycle(adj)
        if cycle is None:
            return packed
        users = []
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            gen = live[(choice[live] == a) & others[live, b]]
            users.append(int(gen[np.argmax(capacity[gen])]))
        flow = float(capacity[users].min())
        capacity[users] -= flow
        packed += flow


def _shortest_cycle(adj: list[int]) -> list[int] | None:
    """A shortest cycle of a relation given as bit rows (items in order), or None."""
    if is_acyclic(adj):
        return None
    best = None
    for start in range(len(adj)):
        if not adj[start]:
            continue
        cyc = shortest_cycle_through(adj, start)
        if cyc is not None and (best is None or len(cyc) < len(best)):
            best = cyc
            if len(best) <= 3:  # pairs are packed first: a 3-cycle is as short as it gets here, most times
                break
    return best


def _solve_by_milp(
    s: int, choice: np.ndarray, others: np.ndarray, weight: np.ndarray, time_limit: float, min_kept: float = 0.0
) -> tuple[np.ndarray, float, bool, str]:
    """(kept mask, upper bound on kept weight, proven optimal, note) from the ordering IP."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    pairs = pair_index(s)
    n_x, n_g = len(pairs), len(choice)
    rows, cols, vals, r = transitivity_rows(s, pairs)
    lo, hi = [0.0] * r, [1.0] * r
    for g in range(n_g):  # z_g <= [choice above b] for each other item b
        c = int(choice[g])
        for b in np.flatnonzero(others[g]):
            b = int(b)
            rows += [r, r]
            cols += [n_x + g, pairs[min(c, b), max(c, b)]]
            if c < b:  # z - x_cb <= 0
                vals += [1.0, -1.0]
                hi.append(0.0)
            else:  # z + x_bc <= 1
                vals += [1.0, 1.0]
                hi.append(1.0)
            lo.append(-np.inf)
            r += 1
    if min_kept > 0:  # the greedy incumbent as a cut-off: only orderings at least as good
        rows += [r] * n_g
        cols += list(range(n_x, n_x + n_g))
        vals += [float(w) for w in weight]
        lo.append(float(min_kept))
        hi.append(np.inf)
        r += 1
    a = coo_matrix((vals, (rows, cols)), shape=(r, n_x + n_g)).tocsr()
    cost = np.concatenate([np.zeros(n_x), -weight.astype(float)])
    integrality = np.concatenate([np.ones(n_x), np.zeros(n_g)])
    res = milp(
        cost,
        constraints=LinearConstraint(a, lo, hi),
        integrality=integrality,
        bounds=Bounds(0, 1),
        # a relative gap below 1/(2 * total weight) proves the integer optimum
        options={
            "time_limit": max(time_limit, 0.01),
            "disp": False,
            "mip_rel_gap": 0.5 / max(1.0, float(weight.sum())),
        },
    )
    dual = getattr(res, "mip_dual_bound", None)
    upper_kept = float(weight.sum()) if dual is None or not np.isfinite(dual) else -float(dual)
    if res.x is None:
        return np.zeros(n_g, dtype=bool), upper_kept, False, f"solver stopped without a solution: {res.message}"
    x = res.x[:n_x]
    kept = _kept_under_pair_order(s, x, pairs, choice, others)
    optimal = res.status == 0
    return kept, (float(weight[kept].sum()) if optimal else upper_kept), optimal, "" if optimal else str(res.message)


def _kept_under_pair_order(
    s: int, x: np.ndarray, pairs: dict[tuple[int, int], int], choice: np.ndarray, others: np.ndarray
) -> np.ndarray:
    """Which groups a transitive pair order satisfies (recomputed, not read from z)."""
    above = above_matrix(s, x, pairs)
    return np.array([bool(np.all(above[c, others[g]])) for g, c in enumerate(choice)])


def _menu_matrix(masks: list[int], n: int) -> np.ndarray:
    """Boolean (observation x action) menu matrix from bitmask menus."""
    if n <= 62:
        return (np.array(masks, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)) & 1 == 1
    return np.array([[m >> i & 1 for i in range(n)] for m in masks], dtype=bool)


def _component_groups_small(
    comp: int, n: int, obs: list[tuple[int, int, int]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`_component_groups` on Python integers: faster than array set-up for short logs."""
    items = [i for i in range(n) if comp >> i & 1]
    local = {item: k for k, item in enumerate(items)}
    groups: dict[tuple[int, int], int] = {}
    members, inverse = [], []
    for row, (_, c, mask) in enumerate(obs):
        inner = mask & comp & ~(1 << c)
        if comp >> c & 1 and inner:
            members.append(row)
            inverse.append(groups.setdefault((c, inner), len(groups)))
    keys = list(groups)
    choice = np.array([local[c] for c, _ in keys], dtype=np.int64)
    others = np.array([[inner >> it & 1 for it in items] for _, inner in keys], dtype=bool).reshape(
        len(keys), len(items)
    )
    weight = np.bincount(np.array(inverse, dtype=np.int64), minlength=len(keys)).astype(np.int64)
    return choice, others, weight, np.array(members, dtype=np.int64), np.array(inverse, dtype=np.int64)


def _component_groups(
    comp: int, n: int, obs_choice: np.ndarray, menu: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One component's sub-problem: observations whose choice lies in it and whose menu
    has another of its items, restricted to its items and merged when equal.

    Returns (choice, others, weight) per group (local item numbers), the rows of the
    observations used (``members``) and each one's group (``inverse``).
    """
    inside = np.array([comp >> i & 1 for i in range(n)], dtype=bool)
    items = np.flatnonzero(inside)
    local = np.full(n, -1, dtype=np.int64)
    local[items] = np.arange(len(items))
    lc = local[obs_choice]
    rows = np.flatnonzero(lc >= 0)
    inner = menu[np.ix_(rows, items)]
    inner[np.arange(len(rows)), lc[rows]] = False
    has = inner.any(1)
    rows, inner = rows[has], inner[has]
    s = len(items)
    if s <= 56:  # (choice, menu) packed in one integer: a 1-d unique is many times faster than a row-wise one
        key = (lc[rows] << s) | (inner.astype(np.int64) << np.arange(s, dtype=np.int64)).sum(1)
        uniq, inverse, weight = np.unique(key, return_inverse=True, return_counts=True)
        choice = uniq >> s
        others = (uniq[:, None] >> np.arange(s, dtype=np.int64)) & 1 == 1
    else:
        key = np.concatenate([lc[rows][:, None], inner], axis=1).astype(np.int64)
        uniq, inverse, weight = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        choice, others = uniq[:, 0].copy(), uniq[:, 1:].astype(bool)
    return choice, others, weight.astype(np.int64), rows, inverse.reshape(-1)


def houtman_maks(log: MenuChoiceLog, include_parse_fail: bool = False, time_budget: float = 30.0) -> HoutmanMaksResult:
    """Minimum number of observations to drop so the rest satisfy SARP, and which.

    ``time_budget`` (seconds) is shared by the integer programs of all components; the
    enumeration path never needs it.

    SARP only says yes or no; this says *how far* a log is from one stable ranking, and
    which choices are the odd ones out (to read in the transcripts).

    Parameters
    ----------
    log : MenuChoiceLog
        The menus shown and the choice made from each.
    include_parse_fail : bool, default False
        Count an answer naming an off-menu action ``x`` as ``x`` chosen from ``menu ∪ {x}``.
    time_budget : float, default 30.0
        Seconds for the integer programs; when exceeded the result is not ``exact``.

    Returns
    -------
    HoutmanMaksResult
        ``n_drop``, the ``dropped`` observations, ``exact`` and the bounds.

    Examples
    --------
    >>> log = MenuChoiceLog(menus=[["a", "b"], ["b", "c"], ["a", "c"], ["a", "b", "c"]],
    ...                     choices=["a", "b", "c", "a"])
    >>> result = houtman_maks(log)
    >>> result.n_drop, result.dropped, result.exact
    (1, [2], True)
    """
    start = time.perf_counter()
    obs = log.revealed_observations(include_parse_fail)
    adj = revealed_relation(log.n_actions, obs)
    comps = cyclic_components(adj)
    dropped: list[int] = []
    lower, exact, notes, methods, largest = 0, True, [], set(), 0
    small = len(obs) <= SMALL_LOG
    if comps:
        obs_id = np.array([i for i, _, _ in obs], dtype=np.int64)
        if not small:
            obs_choice = np.array([c for _, c, _ in obs], dtype=np.int64)
            menu = _menu_matrix([m for _, _, m in obs], log.n_actions)
    for comp in comps:
        if small:
            choice, others, weight, members, inverse = _component_groups_small(comp, log.n_actions, obs)
        else:
            choice, others, weight, members, inverse = _component_groups(comp, log.n_actions, obs_choice, menu)
        s = others.shape[1]
        largest = max(largest, s)
        if s <= ENUMERATE_UP_TO:
            kept = _solve_by_enumeration(s, choice, others, weight)
            upper_kept, optimal, note = float(weight[kept].sum()), True, ""
            methods.add("enumeration")
        else:
            total = float(weight.sum())
            bound_kept = total - _conflict_bound(choice, others, weight)
            ranks, greedy_kept = _greedy_ranking(s, choice, others, weight, stop_at=bound_kept)
            if greedy_kept >= bound_kept:  # the bound proves the greedy ranking optimal
                kept = _kept_by_ranks(ranks[None], choice, others, s)[0]
                upper_kept, optimal, note = float(weight[kept].sum()), True, ""
                methods.add("greedy+bound")
            else:
                remaining = time_budget - (time.perf_counter() - start)
                kept, upper_kept, optimal, note = _solve_by_milp(
                    s, choice, others, weight, remaining, min_kept=greedy_kept
                )
                if not optimal and float(weight[kept].sum()) < greedy_kept:  # keep the better incumbent
                    kept = _kept_by_ranks(ranks[None], choice, others, s)[0]
                upper_kept = min(upper_kept, bound_kept)
                methods.add("milp")
        drop_here = obs_id[members[~kept[inverse]]].tolist()
        dropped += drop_here
        lower += int(np.ceil(weight.sum() - upper_kept - 1e-6)) if not optimal else len(drop_here)
        if not optimal:
            exact = False
            notes.append(f"component of {s} actions: {note or 'time budget exhausted'}")
    dropped.sort()
    return HoutmanMaksResult(
        n_drop=len(dropped),
        dropped=dropped,
        exact=exact,
        lower_bound=lower,
        n_observations=len(obs),
        largest_component=largest,
        method="+".join(sorted(methods)) or "acyclic",
        seconds=time.perf_counter() - start,
        note="; ".join(notes),
    )


def houtman_maks_many(
    logs: list[MenuChoiceLog],
    *,
    include_parse_fail: bool = False,
    time_budget: float = 30.0,
    n_jobs: int = 1,
    use_ray: bool = False,
) -> list[HoutmanMaksResult]:
    """`houtman_maks` of each log, in order: serially, on ``n_jobs`` joblib processes, or as
    Ray tasks on a running cluster (``use_ray``; see models.distributed.ray_session)."""
    args = [(log, include_parse_fail, time_budget) for log in logs]
    if use_ray:
        from liedar.core._util.extras import require

        ray = require("ray", "Houtman-Maks on Ray")
        if not ray.is_initialized():
            from liedar.core.errors import InputError

            raise InputError("use_ray=True needs a running Ray cluster (start one with models.distributed.ray_session)")
        remote = ray.remote(num_cpus=1)(_many_chunk)
        chunks = [
            args[i :: max(1, int(ray.cluster_resources().get("CPU", 1)))]
            for i in range(max(1, int(ray.cluster_resources().get("CPU", 1))))
        ]
        parts = ray.get([remote.remote(c) for c in chunks])
        out: list = [None] * len(args)
        k = len(chunks)
        for i, part in enumerate(parts):
            out[i::k] = part
        return out
    if n_jobs == 1 or len(args) < 2:
        return [houtman_maks(*a) for a in args]
    from joblib import Parallel, delayed

    return list(Parallel(n_jobs=n_jobs)(delayed(houtman_maks)(*a) for a in args))


def _many_chunk(args: list[tuple]) -> list[HoutmanMaksResult]:
    return [houtman_maks(*a) for a in args]


def restores_sarp(log: MenuChoiceLog, dropped: list[int], include_parse_fail: bool = False) -> bool:
    """Check an answer: do the observations left after dropping ``dropped`` satisfy SARP?

    Parameters
    ----------
    log : MenuChoiceLog
        The log.
    dropped : list of int
        Observation indices to leave out.
    include_parse_fail : bool, default False
        Count off-menu answers as revealed choices (as `houtman_maks` did).

    Returns
    -------
    bool
        True when the remaining choices have no preference cycle.

    Examples
    --------
    >>> log = MenuChoiceLog(menus=[["a", "b"], ["b", "c"], ["a", "c"]], choices=["a", "b", "c"])
    >>> restores_sarp(log, []), restores_sarp(log, [2])
    (False, True)
    """
    gone = set(dropped)
    obs = [o for o in log.revealed_observations(include_parse_fail) if o[0] not in gone]
    return is_acyclic(revealed_relation(log.n_actions, obs))
