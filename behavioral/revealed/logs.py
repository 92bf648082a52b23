"""Choice records: which menu was shown and what the model chose from it.

Why a validated type: revealed-preference checks are only as good as their input. A
menu of one reveals nothing, duplicate items make "chosen over" ambiguous, and a choice
that is not on the menu is *information* (the model rejected every offered action in
favour of one it was not offered) — it must be recorded as ``PARSE_FAIL`` and reported,
never silently dropped.

Internally actions are numbered 0..n-1 (sorted labels) and menus are bitmasks, so the
checks run on small integers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from liedar.core._util.serial import Serial
from liedar.core.errors import InputError

PARSE_FAIL = "PARSE_FAIL"

Menu = Sequence[str]


def _validate_menu(index: int, menu: Menu) -> tuple[str, ...]:
    if isinstance(menu, str):
        raise InputError(f"menu {index} is the string {menu!r}: give each menu as a list of action labels")
    items = tuple(map(str, menu))
    if len(items) >= 2 and len(set(items)) == len(items) and PARSE_FAIL not in items:
        return items  # the common case, checked in one pass (logs of thousands of menus)
    if len(items) == 0:
        raise InputError(f"menu {index} is empty: every menu needs at least two actions")
    if len(items) == 1:
        raise InputError(
            f"menu {index} has one action ({items[0]!r}): a choice from a menu of one reveals "
            "no preference, so give at least two actions"
        )
    if len(set(items)) != len(items):
        dup = sorted({a for a in items if items.count(a) > 1})
        raise InputError(f"menu {index} lists {dup} more than once: give each action once per menu")
    if PARSE_FAIL in items:
        raise InputError(f"menu {index} contains the reserved label {PARSE_FAIL!r}: rename that action")
    return items


@dataclass(frozen=True)
class ParseFail(Serial):
    """One observation whose answer was not on its menu.

    ``named`` is the action the answer named (an action of the task that was not offered),
    or None when the answer named no action at all.

    Parameters
    ----------
    observation : int
        Index of the observation (menu) in the log.
    named : str or None
        The off-menu action the answer named, or None.
    """

    observation: int
    named: Optional[str]


class _Universe:
    """Label <-> index map shared by the encoded views of a log."""

    def __init__(self, labels: Sequence[str]):
        self.labels: tuple[str, ...] = tuple(sorted(set(labels)))
        self.index: dict[str, int] = {a: i for i, a in enumerate(self.labels)}

    def mask(self, items: Sequence[str]) -> int:
        m = 0
        for a in items:
            m |= 1 << self.index[a]
        return m


class MenuChoiceLog:
    """One choice per menu (deterministic mode).

    ``choices[i]`` is the label chosen from ``menus[i]``; ``None`` or ``PARSE_FAIL`` means
    the answer named no action; a label not in ``menus[i]`` is recorded as a parse-fail
    that *names* that action (a revealed constraint: the named action beat every offered
    one). ``actions`` optionally fixes the task's action set (default: every label seen).

    The checks are only as good as their input, so menus are validated when the log is
    built (at least two distinct actions each) and off-menu answers are kept and reported,
    never silently dropped. prefgraph's ``MenuChoiceLog(menus=..., choices=...)`` works
    unchanged.

    Parameters
    ----------
    menus : sequence of sequence of str
        The actions shown at each observation.
    choices : sequence of str or None
        The label chosen at each observation (``None`` / ``PARSE_FAIL``: no action named).
    actions : sequence of str, optional
        The task's full action set; every label seen by default.

    Raises
    ------
    InputError
        When menus and choices differ in number, the log is empty, or a menu is a string,
        has fewer than two actions, repeats an action or uses the reserved label.

    Examples
    --------
    >>> log = MenuChoiceLog(menus=[["a", "b"], ["b", "c"], ["a", "b", "c"]], choices=["a", "b", "d"])
    >>> log.actions, log.on_menu()
    (('a', 'b', 'c', 'd'), [0, 1])
    >>> log.parse_fails
    (ParseFail(observation=2, named='d'),)
    """

    def __init__(
        self,
        menus: Sequence[Menu],
        choices: Sequence[Optional[str]],
        actions: Optional[Sequence[str]] = None,
    ):
        if len(menus) != len(choices):
            raise InputError(f"{len(menus)} menus but {len(choices)} choices: give exactly one choice per menu")
        if len(menus) == 0:
            raise InputError("the choice log is empty: give at least one menu and its choice")
        self.menus: tuple[tuple[str, ...], ...] = tuple(_validate_menu(i, m) for i, m in enumerate(menus))
        self.choices: tuple[Optional[str], ...] = tuple(
            None if (c is None or c == PARSE_FAIL) else str(c) for c in choices
        )
        self.parse_fails: tuple[ParseFail, ...] = tuple(
            ParseFail(i, c) for i, (m, c) in enumerate(zip(self.menus, self.choices)) if c not in m
        )
        labels = [a for m in self.menus for a in m] + [c for c in self.choices if c is not None]
        self.universe = _Universe(list(actions or ()) + labels)
        bit = {a: 1 << i for a, i in self.universe.index.items()}
        self.menu_masks: tuple[int, ...] = tuple(sum(map(bit.__getitem__, m)) for m in self.menus)
        self.choice_index: tuple[int, ...] = tuple(-1 if c is None else self.universe.index[c] for c in self.choices)

    @property
    def actions(self) -> tuple[str, ...]:
        """Every action label of the task, sorted (index = the action's number)."""
        return self.universe.labels

    @property
    def n_actions(self) -> int:
        """How many actions the task has."""
        return len(self.universe.labels)

    def __len__(self) -> int:
        return len(self.menus)

    def on_menu(self) -> list[int]:
        """Indices of observations whose choice lies on its menu.

        Returns
        -------
        list of int
            Observation indices, in order.
        """
        failed = {p.observation for p in self.parse_fails}
        return [i for i in range(len(self.menus)) if i not in failed]

    def revealed_observations(self, include_parse_fail: bool) -> list[tuple[int, int, int]]:
        """(observation, chosen index, menu mask) for every observation that reveals a preference.

        With ``include_parse_fail`` an answer naming an off-menu action ``x`` counts as ``x``
        chosen from ``menu ∪ {x}``; an answer naming nothing reveals nothing either way.

        Parameters
        ----------
        include_parse_fail : bool
            Count answers naming an off-menu action as choices from the enlarged menu.

        Returns
        -------
        list of tuple of (int, int, int)
            ``(observation, chosen action index, menu bitmask)``.
        """
        memo = self.__dict__.setdefault("_revealed", {})  # the log never changes after __init__
        if include_parse_fail in memo:
            return list(memo[include_parse_fail])
        out = []
        for i, (mask, c) in enumerate(zip(self.menu_masks, self.choice_index)):
            if c < 0:
                continue
            if mask >> c & 1:
                out.append((i, c, mask))
            elif include_parse_fail:
                out.append((i, c, mask | (1 << c)))
        memo[include_parse_fail] = tuple(out)
        return out

    def to_stochastic(self) -> "StochasticChoiceLog":
        """The same records as choice counts with K = 1 per observation (menus may repeat).

        Returns
        -------
        StochasticChoiceLog
            One count per observation; parse-fails kept as parse-fails.
        """
        return StochasticChoiceLog.from_counts(
            self.menus,
            [{PARSE_FAIL if c is None else c: 1} for c in self.choices],
            actions=self.actions,
        )

    # stays hand-written: not a dataclass: its choices are written with PARSE_FAIL for None
    def to_dict(self) -> dict[str, Any]:
        """The log as a JSON-ready dictionary.

        Returns
        -------
        dict
            ``menus``, ``choices`` (``PARSE_FAIL`` for none) and ``parse_fails``.
        """
        return {
            "menus": [list(m) for m in self.menus],
            "choices": [PARSE_FAIL if c is None else c for c in self.choices],
            "parse_fails": [p.to_dict() for p in self.parse_fails],
        }


class StochasticChoiceLog:
    """K sampled choices per menu (stochastic mode), stored as counts.

    Build it from ``counts`` (``from_counts``: one ``{label: count}`` per menu; labels off
    the menu, ``None`` or ``PARSE_FAIL`` are parse-fails) or from ``frequencies`` with the
    number of samples ``n_samples`` (one K for all menus or one per menu). Frequencies
    times K must be whole numbers summing to K: anything else is an error, because a
    frequency without its sample size cannot be tested against sampling noise.

    Choice frequencies used by the tests are over the *on-menu* samples; parse-fails are
    counted per menu and reported separately.

    For sampled answers (temperature > 0), where one choice per menu would hide how often
    the model picks each action: the random-utility tests need these counts.

    Parameters
    ----------
    menus : sequence of sequence of str
        The actions shown at each observation.
    frequencies : sequence of mapping or sequence of float
        Per menu, ``{label: frequency}`` or one frequency per action in menu order; put
        parse-fails under ``PARSE_FAIL``.
    n_samples : int or sequence of int
        K, the number of samples per menu (one for all, or one per menu).
    actions : sequence of str, optional
        The task's full action set; every label seen by default.

    Raises
    ------
    InputError
        When lengths differ, K is below 1, a frequency times K is not a whole count, a
        row does not sum to 1, or a menu is invalid.

    Examples
    --------
    >>> log = StochasticChoiceLog(menus=[["a", "b"], ["a", "b", "c"]],
    ...                           frequencies=[[0.75, 0.25], {"a": 0.25, "b": 0.5, "c": 0.25}], n_samples=4)
    >>> log.frequencies(1).tolist(), log.modal_log().choices
    ([0.25, 0.5, 0.25], ('a', 'b'))
    """

    def __init__(
        self,
        menus: Sequence[Menu],
        frequencies: Sequence[Union[Mapping[str, float], Sequence[float]]],
        n_samples: Union[int, Sequence[int]],
        actions: Optional[Sequence[str]] = None,
    ):
        if len(menus) != len(frequencies):
            raise InputError(f"{len(menus)} menus but {len(frequencies)} frequency rows: give one row per menu")
        ks = [n_samples] * len(menus) if isinstance(n_samples, (int, np.integer)) else list(n_samples)
        if len(ks) != len(menus):
            raise InputError(f"{len(ks)} sample sizes for {len(menus)} menus: give one K per menu")
        counts = []
        for i, (menu, row, k) in enumerate(zip(menus, frequencies, ks)):
            k = int(k)
            if k < 1:
                raise InputError(f"menu {i} has K={k} samples: K must be at least 1")
            if not isinstance(row, Mapping):
                if isinstance(menu, str) or len(row) != len(menu):
                    raise InputError(
                        f"menu {i}: {len(row)} frequencies for {len(menu)} actions: give one per "
                        "action, in menu order, or a {{action: frequency}} mapping"
                    )
                row = dict(zip(menu, row))
            c = {}
            for label, f in row.items():
                x = float(f) * k
                if f < 0 or abs(x - round(x)) > 1e-6:
                    raise InputError(
                        f"menu {i}: frequency {f} of {label!r} times K={k} is not a whole count: "
                        "frequencies must be counts/K (check K)"
                    )
                c[label] = int(round(x))
            if sum(c.values()) != k:
                raise InputError(
                    f"menu {i}: frequencies sum to {sum(c.values()) / k:.4f}, not 1, for K={k}: "
                    "include parse-fails as PARSE_FAIL or fix K"
                )
            counts.append(c)
        self._init_counts(menus, counts, actions)

    @classmethod
    def from_counts(
        cls,
        menus: Sequence[Menu],
        counts: Sequence[Mapping[Optional[str], int]],
        actions: Optional[Sequence[str]] = None,
    ) -> "StochasticChoiceLog":
        """Build the log from choice counts instead of frequencies.

        Parameters
        ----------
        menus : sequence of sequence of str
            The actions shown at each observation.
        counts : sequence of mapping of str to int
            Per menu, ``{label: count}``; labels off the menu, ``None`` or ``PARSE_FAIL``
            are parse-fails.
        actions : sequence of str, optional
            The task's full action set.

        Returns
        -------
        StochasticChoiceLog
            The log.

        Raises
        ------
        InputError
            When lengths differ, a count is not a non-negative integer, a menu has no
            samples, or a menu is invalid.

        Examples
        --------
        >>> log = StochasticChoiceLog.from_counts([["a", "b"], ["b", "a"]], [{"a": 3, "b": 1}, {"a": 2, None: 1}])
        >>> log.n_on_menu().tolist(), log.n_parse_fail()
        ([4, 2], 1)
        """
        if len(menus) != len(counts):
            raise InputError(f"{len(menus)} menus but {len(counts)} count rows: give one row per menu")
        self = cls.__new__(cls)
        self._init_counts(menus, counts, actions)
        return self

    def _init_counts(
        self,
        menus: Sequence[Menu],
        counts: Sequence[Mapping[Optional[str], int]],
        actions: Optional[Sequence[str]],
    ) -> None:
        if len(menus) == 0:
            raise InputError("the choice log is empty: give at least one menu and its counts")
        self.menus = tuple(_validate_menu(i, m) for i, m in enumerate(menus))
        self.parse_fail_counts: list[dict[Optional[str], int]] = []
        rows = []
        for i, (menu, row) in enumerate(zip(self.menus, counts)):
            fails: dict[Optional[str], int] = {}
            r = [0] * len(menu)
            for label, n in row.items():
                if int(n) != n or n < 0:
                    raise InputError(f"menu {i}: count {n!r} for {label!r} is not a non-negative integer")
                key = None if label in (None, PARSE_FAIL) else str(label)
                if key in menu:
                    r[menu.index(key)] += int(n)
                elif n:
                    fails[key] = fails.get(key, 0) + int(n)
            if sum(r) + sum(fails.values()) == 0:
                raise InputError(f"menu {i} has no samples: give at least one choice per menu")
            rows.append(np.array(r, dtype=np.int64))
            self.parse_fail_counts.append(fails)
        self.counts: tuple[np.ndarray, ...] = tuple(rows)
        labels = [a for m in self.menus for a in m]
        labels += [a for f in self.parse_fail_counts for a in f if a is not None]
        self.universe = _Universe(list(actions or ()) + labels)

    @property
    def actions(self) -> tuple[str, ...]:
        """Every action label of the task, sorted."""
        return self.universe.labels

    @property
    def n_actions(self) -> int:
        """How many actions the task has."""
        return len(self.universe.labels)

    def __len__(self) -> int:
        return len(self.menus)

    def n_on_menu(self) -> np.ndarray:
        """On-menu samples per menu.

        Returns
        -------
        numpy.ndarray of int
            One count per menu.
        """
        return np.array([int(c.sum()) for c in self.counts])

    def n_parse_fail(self) -> int:
        """Samples, over all menus, whose answer was not on the menu.

        Returns
        -------
        int
            The count.
        """
        return sum(sum(f.values()) for f in self.parse_fail_counts)

    def frequencies(self, i: int) -> np.ndarray:
        """On-menu choice frequencies of menu i (all zeros when every sample failed to parse).

        Parameters
        ----------
        i : int
            Index of the menu.

        Returns
        -------
        numpy.ndarray of float
            One frequency per action, in menu order.
        """
        c = self.counts[i]
        return c / c.sum() if c.sum() else c.astype(float)

    def pooled(self) -> list[tuple[tuple[str, ...], np.ndarray]]:
        """Distinct menus (as sets) with their on-menu counts summed, in first-seen order.

        Why: repeated showings of one menu are more samples of the same choice
        probabilities; tests compare menus, not showings.

        Returns
        -------
        list of tuple of (tuple of str, numpy.ndarray)
            Each distinct menu (in its first order) and its summed counts in that order.
        """
        by_set: dict[frozenset[str], tuple[tuple[str, ...], np.ndarray]] = {}
        for menu, c in zip(self.menus, self.counts):
            key = frozenset(menu)
            if key in by_set:
                ref, acc = by_set[key]
                by_set[key] = (ref, acc + c[[menu.index(a) for a in ref]])
            else:
                by_set[key] = (menu, c.copy())
        return list(by_set.values())

    def modal_log(self) -> MenuChoiceLog:
        """The most frequent on-menu choice of each menu (ties and all-fail menus -> PARSE_FAIL).

        Why: SARP and IIA are defined on one choice per menu; a tie reveals no strict choice.

        Returns
        -------
        MenuChoiceLog
            One choice per menu.
        """
        choices: list[Optional[str]] = []
        for menu, c in zip(self.menus, self.counts):
            top = np.flatnonzero(c == c.max())
            choices.append(menu[top[0]] if c.max() > 0 and len(top) == 1 else None)
        return MenuChoiceLog(self.menus, choices, actions=self.actions)

    # stays hand-written: not a dataclass: writes counts per menu derived from its arrays
    def to_dict(self) -> dict[str, Any]:
        """The log as a JSON-ready dictionary.

        Returns
        -------
        dict
            ``menus``, per-menu ``counts`` and ``parse_fails``.
        """
        return {
            "menus": [list(m) for m in self.menus],
            "counts": [dict(zip(m, map(int, c))) for m, c in zip(self.menus, self.counts)],
            "parse_fails": [{PARSE_FAIL if k is None else k: v for k, v in f.items()} for f in self.parse_fail_counts],
        }


ChoiceLog = Union[MenuChoiceLog, StochasticChoiceLog]


def choice_log_from_dict(data: Mapping[str, Any], actions: Optional[Sequence[str]] = None) -> ChoiceLog:
    """The log a ``to_dict`` wrote: a `MenuChoiceLog` (``choices``) or a `StochasticChoiceLog`
    (``counts`` and ``parse_fails``), so a saved study can be read again (e.g. for
    `iia_mechanisms` over the parts a study saved).

    Parameters
    ----------
    data : mapping
        What ``MenuChoiceLog.to_dict`` or ``StochasticChoiceLog.to_dict`` returned.
    actions : sequence of str, optional
        The task's full action set.

    Returns
    -------
    MenuChoiceLog or StochasticChoiceLog
    """
    if "choices" in data:
        return MenuChoiceLog(data["menus"], data["choices"], actions=actions)
    counts = [{**c, **f} for c, f in zip(data["counts"], data["parse_fails"])]
    return StochasticChoiceLog.from_counts(data["menus"], counts, actions=actions)
