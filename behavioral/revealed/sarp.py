"""SARP and WARP: can one strict ranking explain every choice?

Each choice ``x`` from menu ``A`` reveals ``x`` preferred to every other item of ``A``.
**SARP** holds iff this directly-revealed relation has no cycle (its transitive closure is
acyclic), which for one choice per menu is exactly "some strict ranking puts every
chosen item at the top of its menu". **WARP** is the two-step version: no pair ``x, y``
with ``x`` chosen while ``y`` was available and ``y`` chosen while ``x`` was available.

Why bitmasks: a relation over up to a few dozen actions fits in one Python int per
action, so closure and cycle search cost microseconds per log (the benchmark runs
thousands of logs).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Optional, Sequence

from liedar.behavioral.revealed.logs import MenuChoiceLog
from liedar.core._util.serial import Serial


def revealed_relation(n: int, observations: Sequence[tuple[int, int, int]]) -> list[int]:
    """``adj[x]`` = bitmask of items directly revealed worse than ``x``."""
    adj = [0] * n
    for _, c, mask in observations:
        adj[c] |= mask & ~(1 << c)
    return adj


def transitive_closure(adj: Sequence[int]) -> list[int]:
    """Warshall's algorithm on bit rows."""
    reach = list(adj)
    for k in range(len(reach)):
        bit, row_k = 1 << k, reach[k]
        for i in range(len(reach)):
            if reach[i] & bit:
                reach[i] |= row_k
    return reach


def is_acyclic(adj: Sequence[int]) -> bool:
    """Kahn's algorithm: repeatedly remove items that beat no remaining item."""
    remaining = (1 << len(adj)) - 1
    while remaining:
        sinks = 0
        for i in range(len(adj)):
            if remaining >> i & 1 and not adj[i] & remaining:
                sinks |= 1 << i
        if not sinks:
            return False
        remaining &= ~sinks
    return True


def shortest_cycle_through(adj: Sequence[int], start: int) -> Optional[list[int]]:
    """A shortest cycle of the relation ``adj`` that passes through item ``start``.

    Why public: `find_cycles` reports such cycles as SARP's witnesses, and the
    Houtman-Maks packing (`liedar.behavioral.revealed.houtman_maks`) searches them too.

    Parameters
    ----------
    adj : sequence of int
        The relation as bit rows (``adj[x]`` = bitmask of items revealed worse than ``x``).
    start : int
        The item the cycle must contain.

    Returns
    -------
    list of int or None
        The cycle's items in order, from ``start``; None when no cycle passes through it.

    Examples
    --------
    >>> shortest_cycle_through([0b010, 0b100, 0b001], 0)
    [0, 1, 2]
    >>> shortest_cycle_through([0b010, 0b000, 0b000], 0) is None
    True
    """
    parent = {start: -1}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        row = adj[u]
        while row:
            v = (row & -row).bit_length() - 1
            row &= row - 1
            if v == start:
                path = [u]
                while parent[path[-1]] != -1:
                    path.append(parent[path[-1]])
                return path[::-1]
            if v not in parent:
                parent[v] = u
                queue.append(v)
    return None


def find_cycles(adj: Sequence[int], max_cycles: int = 20) -> list[list[int]]:
    """Distinct shortest cycles through each item that lies on a cycle (at most ``max_cycles``)."""
    reach = transitive_closure(adj)
    seen: set[tuple[int, ...]] = set()
    cycles = []
    for i in range(len(adj)):
        if not reach[i] >> i & 1:
            continue
        cyc = shortest_cycle_through(adj, i)
        if cyc is None:
            continue
        k = cyc.index(min(cyc))
        key = tuple(cyc[k:] + cyc[:k])
        if key not in seen:
            seen.add(key)
            cycles.append(list(key))
            if len(cycles) >= max_cycles:
                break
    return cycles


@dataclass
class SarpResult(Serial):
    """SARP verdict on the on-menu choices, and again counting parse-fails as revealed.

    ``cycles`` are preference cycles (lists of action labels, each beating the next and
    the last beating the first). ``*_with_parse_fail`` treat an answer naming an off-menu
    action ``x`` as ``x`` chosen from ``menu ∪ {x}``.

    Parameters
    ----------
    consistent : bool
        One strict ranking explains every on-menu choice.
    cycles : list of list of str
        Preference cycles found (the evidence when not consistent).
    n_observations : int
        Observations in the log.
    n_parse_fail : int
        Observations whose answer was not on the menu.
    consistent_with_parse_fail : bool
        The verdict when off-menu answers count as revealed choices.
    cycles_with_parse_fail : list of list of str, optional
        The cycles found then.

    Examples
    --------
    >>> log = MenuChoiceLog(menus=[["a", "b"], ["b", "c"], ["a", "c"]], choices=["a", "b", "c"])
    >>> result = check_sarp(log)
    >>> result.is_consistent, result.violations
    (False, [['a', 'b', 'c']])
    """

    consistent: bool
    cycles: list[list[str]]
    n_observations: int
    n_parse_fail: int
    consistent_with_parse_fail: bool
    cycles_with_parse_fail: list[list[str]] = field(default_factory=list)

    @property
    def is_consistent(self) -> bool:
        """Alias of ``consistent``, the name prefgraph's ``validate_menu_sarp`` result uses."""
        return self.consistent

    @property
    def violations(self) -> list[list[str]]:
        """Alias of ``cycles`` (prefgraph's name): each violation is one preference cycle."""
        return self.cycles


def _verdict(log: MenuChoiceLog, include_parse_fail: bool, max_cycles: int) -> tuple[bool, list[list[str]]]:
    adj = revealed_relation(log.n_actions, log.revealed_observations(include_parse_fail))
    if is_acyclic(adj):
        return True, []
    labels = log.actions
    return False, [[labels[i] for i in c] for c in find_cycles(adj, max_cycles)]


def check_sarp(log: MenuChoiceLog, max_cycles: int = 20) -> SarpResult:
    """Test whether one strict ranking explains every on-menu choice (SARP).

    Why: a model with a stable preference picks the top of one ranking from every menu;
    a preference cycle shows its choice depends on what else was offered.

    Parameters
    ----------
    log : MenuChoiceLog
        The menus shown and the choice made from each.
    max_cycles : int, default 20
        At most this many distinct shortest cycles are listed as evidence.

    Returns
    -------
    SarpResult
        ``consistent`` (alias ``is_consistent``), the ``cycles`` found (alias
        ``violations``), and the same verdict counting off-menu answers as revealed.

    Raises
    ------
    liedar.core.errors.InputError
        Never here: a malformed log is refused when the ``MenuChoiceLog`` is built.

    Examples
    --------
    >>> from liedar.behavioral.revealed import MenuChoiceLog, check_sarp
    >>> log = MenuChoiceLog(menus=[["a", "b"], ["b", "c"], ["a", "c"]], choices=["a", "b", "c"])
    >>> check_sarp(log).consistent
    False
    """
    ok, cycles = _verdict(log, False, max_cycles)
    if any(p.named is not None for p in log.parse_fails):
        ok_pf, cycles_pf = _verdict(log, True, max_cycles)
    else:
        ok_pf, cycles_pf = ok, cycles
    return SarpResult(ok, cycles, len(log), len(log.parse_fails), ok_pf, cycles_pf)


@dataclass
class WarpViolation(Serial):
    """``better`` was chosen from observation ``first`` while ``worse`` was on offer, and
    ``worse`` was chosen from observation ``second`` while ``better`` was on offer.

    Parameters
    ----------
    better : str
        The action chosen first.
    worse : str
        The action chosen second.
    first : int
        Observation where ``better`` was chosen over ``worse``.
    second : int
        Observation where ``worse`` was chosen over ``better``.
    """

    better: str
    worse: str
    first: int
    second: int


@dataclass
class WarpResult(Serial):
    """WARP verdict: ``consistent`` (alias ``is_consistent``) and each pairwise reversal.

    Parameters
    ----------
    consistent : bool
        No pair of actions is chosen over each other.
    violations : list of WarpViolation
        Every such pairwise reversal.
    """

    consistent: bool
    violations: list[WarpViolation]

    @property
    def is_consistent(self) -> bool:
        """Alias of ``consistent``, the name prefgraph's ``validate_menu_warp`` result uses."""
        return self.consistent


def check_warp(log: MenuChoiceLog, include_parse_fail: bool = False) -> WarpResult:
    """Test for direct pairwise reversals (WARP): ``x`` chosen over ``y`` and ``y`` over ``x``.

    The weaker, two-step check: every WARP violation is a SARP cycle of length two, and
    each violation names the two observations, so a reversal can be read in the records.
    ``validate_menu_warp`` is the same function under prefgraph's name.

    Parameters
    ----------
    log : MenuChoiceLog
        The menus shown and the choice made from each.
    include_parse_fail : bool, default False
        Count an answer naming an off-menu action ``x`` as ``x`` chosen from ``menu ∪ {x}``.

    Returns
    -------
    WarpResult
        ``consistent`` (alias ``is_consistent``) and every pairwise reversal.

    Examples
    --------
    >>> log = MenuChoiceLog(menus=[["a", "b"], ["a", "b", "c"]], choices=["a", "b"])
    >>> check_warp(log).violations
    [WarpViolation(better='a', worse='b', first=0, second=1)]
    """
    obs = log.revealed_observations(include_parse_fail)
    first_seen: dict[tuple[int, int], int] = {}
    for i, c, mask in obs:
        rest = mask & ~(1 << c)
        while rest:
            y = (rest & -rest).bit_length() - 1
            rest &= rest - 1
            first_seen.setdefault((c, y), i)
    labels = log.actions
    violations = [
        WarpViolation(labels[x], labels[y], i, first_seen[(y, x)])
        for (x, y), i in first_seen.items()
        if x < y and (y, x) in first_seen
    ]
    return WarpResult(not violations, violations)


# prefgraph's names for the same two checks, so its users' code runs with only the import
# line changed (``from liedar.behavioral.revealed import MenuChoiceLog, validate_menu_sarp``).
# Menu items may be any hashable labels; liedar keeps them as strings, so a violation lists
# ``"0"``, not ``0``.
validate_menu_sarp = check_sarp
validate_menu_warp = check_warp
