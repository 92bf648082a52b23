"""Menu effects: IIA reversals, regularity violations and mixed menus.

Why these three besides SARP: they say *how* choices depend on the menu. An IIA reversal
(``a`` beats ``b`` head to head, but ``b`` beats ``a`` once a third option is added —
the compromise effect) is the classic context effect. Regularity (adding options never
raises an existing option's choice probability) is implied by every random-utility
model, so its violation is a model-free RUM failure. A mixed menu (K samples that
disagree) shows the choice is not deterministic at that temperature.

All three work on pooled choice counts, so a deterministic log (one choice per menu)
and a stochastic one (K samples per menu) use the same definitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence, Union

from liedar.behavioral.revealed.logs import ChoiceLog, MenuChoiceLog, StochasticChoiceLog
from liedar.core._util.serial import Serial
from liedar.core.stats import Estimate, wilson


def _as_stochastic(log: ChoiceLog) -> StochasticChoiceLog:
    return log.to_stochastic() if isinstance(log, MenuChoiceLog) else log


@dataclass
class IIAReversal(Serial):
    """``pair_choice`` beats the other pair item head to head, but in ``larger_menu`` (a
    superset of the pair) the other pair item, ``larger_choice``, is chosen more often.

    Parameters
    ----------
    pair : tuple of (str, str)
        The two-action menu.
    pair_choice : str
        The action that wins head to head.
    larger_menu : tuple of str
        The larger menu where the order reverses.
    larger_choice : str
        The other pair action, chosen more often there.
    pair_frequency : float
        Share of ``pair_choice`` in the pair.
    larger_frequencies : tuple of (float, float)
        Shares of (``pair_choice``, ``larger_choice``) in ``larger_menu``.
    """

    pair: tuple[str, str]
    pair_choice: str
    larger_menu: tuple[str, ...]
    larger_choice: str
    pair_frequency: float  # share of pair_choice in the pair
    larger_frequencies: tuple[float, float]  # shares of (pair_choice, larger_choice) in larger_menu


def iia_reversals(log: ChoiceLog) -> list[IIAReversal]:
    """Every (pair, larger menu) where adding options reverses the pair's strict order.

    Menus whose samples all failed to parse, and ties, reveal no strict order and are
    skipped (parse-fails are reported by the log, not here).

    The compromise and decoy effects show up here: a model whose pick between two actions
    depends on a third one shown has no menu-independent preference between them.

    Parameters
    ----------
    log : MenuChoiceLog or StochasticChoiceLog
        Choices (one per menu, or counts); repeated menus are pooled.

    Returns
    -------
    list of IIAReversal
        Every reversal found.

    Examples
    --------
    >>> log = StochasticChoiceLog.from_counts([["a", "b"], ["a", "b", "c"]],
    ...                                       [{"a": 3, "b": 1}, {"a": 1, "b": 2, "c": 1}])
    >>> [(r.pair_choice, r.larger_choice) for r in iia_reversals(log)]
    [('a', 'b')]
    """
    pooled = _as_stochastic(log).pooled()
    out = []
    for pair, pc in pooled:
        if len(pair) != 2 or pc.sum() == 0 or pc[0] == pc[1]:
            continue
        w, lo = (0, 1) if pc[0] > pc[1] else (1, 0)
        winner, loser = pair[w], pair[lo]
        for menu, mc in pooled:
            if len(menu) <= 2 or winner not in menu or loser not in menu or mc.sum() == 0:
                continue
            fw, fl = mc[menu.index(winner)] / mc.sum(), mc[menu.index(loser)] / mc.sum()
            if fl > fw:
                out.append(
                    IIAReversal(
                        (pair[0], pair[1]), winner, menu, loser, float(pc[w] / pc.sum()), (float(fw), float(fl))
                    )
                )
    return out


@dataclass
class RegularityViolation(Serial):
    """``item``'s choice share rose from ``small_frequency`` in ``small_menu`` to
    ``large_frequency`` in ``large_menu`` ⊃ ``small_menu``.

    Parameters
    ----------
    item : str
        The action whose share rose.
    small_menu : tuple of str
        The smaller menu.
    large_menu : tuple of str
        The larger menu containing it.
    small_frequency : float
        The action's share in ``small_menu``.
    large_frequency : float
        Its share in ``large_menu``.
    """

    item: str
    small_menu: tuple[str, ...]
    large_menu: tuple[str, ...]
    small_frequency: float
    large_frequency: float


def regularity_violations(log: ChoiceLog, tolerance: float = 0.0) -> list[RegularityViolation]:
    """Every item whose choice share *rises* (by more than ``tolerance``) when options are added.

    With sampled choices some rises are noise; ``rum_test`` weighs them against the
    sample size. Here ``tolerance`` is a plain threshold on the share.

    Every random-utility model obeys regularity, so a violation is a model-free sign that
    no such model explains the choices.

    Parameters
    ----------
    log : MenuChoiceLog or StochasticChoiceLog
        Choices; repeated menus are pooled.
    tolerance : float, default 0.0
        A rise must exceed this share to count.

    Returns
    -------
    list of RegularityViolation
        Every violation found.

    Examples
    --------
    >>> log = StochasticChoiceLog.from_counts([["a", "b"], ["a", "b", "c"]],
    ...                                       [{"a": 3, "b": 1}, {"a": 1, "b": 2, "c": 1}])
    >>> [(v.item, v.small_frequency, v.large_frequency) for v in regularity_violations(log)]
    [('b', 0.25, 0.5)]
    """
    pooled = [(m, c / c.sum(), frozenset(m)) for m, c in _as_stochastic(log).pooled() if c.sum() > 0]
    out = []
    for small, fs, s_set in pooled:
        for large, fl, l_set in pooled:
            if len(large) <= len(small) or not s_set < l_set:
                continue
            for j, item in enumerate(small):
                f_large = fl[large.index(item)]
                if f_large > fs[j] + tolerance:
                    out.append(RegularityViolation(item, small, large, float(fs[j]), float(f_large)))
    return out


def mixed_menu_share(log: Union[StochasticChoiceLog, ChoiceLog]) -> Estimate:
    """Share of menus (as shown, not pooled) whose on-menu samples were not unanimous.

    Menus whose samples all failed to parse are left out of the denominator. The Wilson
    interval treats menus as independent trials, which they are only given the vignette.

    Parameters
    ----------
    log : MenuChoiceLog or StochasticChoiceLog
        Choices (a deterministic log has no mixed menus).

    Returns
    -------
    Estimate
        The share with a Wilson interval (NaN when no menu had an on-menu answer).

    Examples
    --------
    >>> log = StochasticChoiceLog.from_counts([["a", "b"], ["b", "c"]], [{"a": 4}, {"b": 2, "c": 2}])
    >>> print(mixed_menu_share(log))
    0.500 [0.095, 0.905] (n=2, wilson)
    """
    log = _as_stochastic(log)
    rows = [c for c in log.counts if c.sum() > 0]
    if not rows:
        return Estimate(float("nan"), 0.0, 1.0, 0, "wilson", note="no menu had an on-menu answer")
    mixed = sum(int((c > 0).sum() > 1) for c in rows)
    return wilson(mixed, len(rows))


IIA_MECHANISMS = ("letter position", "compromise", "severity anchor", "other")


def iia_mechanisms(reversal: IIAReversal, severity: Sequence[str], shown_first: Mapping[frozenset, str]) -> list[str]:
    """The patterns an IIA reversal fits, from `IIA_MECHANISMS` (several can apply; "other" when none does).

    Why: a reversal count says that a choice depends on the menu, not how; the published
    study read its reversals as compromise effects and severity anchors. With options
    lettered in a shuffled order a third reading has to come first: a model that picks the
    option shown first reverses whenever the lettering does.

    * **letter position**: the pair's winner was shown first in the pair, and the larger
      menu's choice was shown first there.
    * **compromise**: the larger menu has three actions and its choice is the middle one by
      severity.
    * **severity anchor**: every added action is milder than both pair actions and the
      choice moved to the more severe one, or every added action is more severe and the
      choice moved to the milder one (the menu's extreme pulls the choice away from it).

    Parameters
    ----------
    reversal : IIAReversal
    severity : sequence of str
        The scenario's actions, mildest first.
    shown_first : mapping of frozenset to str
        Each menu (as a set of actions) and the action lettered A in it.

    Returns
    -------
    list of str

    Examples
    --------
    >>> r = IIAReversal(("a", "b"), "a", ("a", "b", "c"), "b", 1.0, (0.0, 1.0))
    >>> iia_mechanisms(r, ["a", "b", "c"], {frozenset("ab"): "b", frozenset("abc"): "c"})
    ['compromise']
    """
    rank = {action: i for i, action in enumerate(severity)}
    found = []
    pair, larger = frozenset(reversal.pair), frozenset(reversal.larger_menu)
    if shown_first.get(pair) == reversal.pair_choice and shown_first.get(larger) == reversal.larger_choice:
        found.append("letter position")
    ordered = sorted(reversal.larger_menu, key=rank.__getitem__)
    if len(ordered) == 3 and ordered[1] == reversal.larger_choice:
        found.append("compromise")
    added = [rank[a] for a in reversal.larger_menu if a not in pair]
    low, high = sorted(rank[a] for a in reversal.pair)
    harsher = rank[reversal.larger_choice] > rank[reversal.pair_choice]
    if (all(a < low for a in added) and harsher) or (all(a > high for a in added) and not harsher):
        found.append("severity anchor")
    return found or ["other"]
