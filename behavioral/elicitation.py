"""A capability ceiling chosen from several elicitation protocols without winner's curse.

Why several protocols: a ceiling is only as strong as the elicitation behind it. Zero-shot
answer-letter scoring is cheap but confounds what the model knows with which *letter* it
likes; worked examples, scoring the option text itself (cloze) and averaging over option
orders each remove a different nuisance, and which one helps depends on the model. A weak
ceiling understates capability, so "no sandbagging gap" or "low deception" may only mean
"the question was asked badly".

Why a selection split: reporting ``max`` over k protocols' accuracies measured on the *same*
items is biased upwards — with k protocols of equal true accuracy p on n items, the
maximum of k noisy estimates exceeds p on average (for k = 5 independent protocols, n = 16,
p = 0.25 the expected maximum is 0.38: a pure guesser would look capable; correlated
protocols inflate it less, but never below p). So the protocol is *chosen* on a
selection split and its accuracy is *reported* on a disjoint evaluation split, where the
choice can no longer flatter it; the evaluation-split accuracy is then an honest binomial
proportion with an ordinary (Clopper-Pearson by default) interval. Every protocol's
evaluation-split accuracy is shown as well, so a reader can see what was left on the table;
taking the best of *those* would reintroduce the bias, and the report says so.

This module is pure bookkeeping over per-item correctness (no model, no torch): the
protocols themselves live in `behavioral.runners.elicitation`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from liedar.core._util.serial import Serial
from liedar.core.errors import InputError
from liedar.core.stats import DEFAULT_INTERVAL, Estimate, proportion


def seeded_rng(seed: int, *parts: str) -> np.random.Generator:
    """A generator seeded by ``seed`` and string parts (stable across runs, unlike hash())."""
    digest = hashlib.sha256("\x1f".join([str(int(seed)), *parts]).encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def split_selection_evaluation(
    ids: Sequence[str],
    *,
    selection_fraction: float = 1 / 3,
    seed: int = 0,
    strata: Optional[Mapping[str, str]] = None,
) -> tuple[list[str], list[str]]:
    """Split item ids into a disjoint (selection, evaluation) pair, seeded and stratified.

    Within each stratum (e.g. topic; one stratum when ``strata`` is None) the ids are
    shuffled by a generator seeded by (``seed``, stratum) and the first
    ``round(selection_fraction * size)`` go to selection. The input order does not matter
    (ids are sorted first), so the same ids and seed always give the same split. Both
    splits are non-empty; each is returned in sorted order.
    """
    uniq = sorted(set(ids))
    if len(uniq) != len(ids):
        raise InputError("duplicate item ids in the split: give each item once")
    if len(uniq) < 2:
        raise InputError(f"{len(uniq)} item(s) cannot be split into selection and evaluation: give at least 2")
    if not 0 < selection_fraction < 1:
        raise InputError(f"selection_fraction {selection_fraction} must be strictly between 0 and 1, e.g. 1/3")
    groups: dict[str, list[str]] = {}
    for i in uniq:
        groups.setdefault((strata or {}).get(i, ""), []).append(i)
    selection: list[str] = []
    for name in sorted(groups):
        members = groups[name]
        perm = seeded_rng(seed, "split", name).permutation(len(members))
        take = int(round(selection_fraction * len(members)))
        selection += [members[int(j)] for j in perm[:take]]
    chosen = set(selection)
    if not chosen:  # tiny strata all rounded down: give selection one item
        chosen = {uniq[int(seeded_rng(seed, "split-fallback").integers(len(uniq)))]}
    if len(chosen) == len(uniq):
        chosen.discard(sorted(chosen)[0])
    return sorted(chosen), [i for i in uniq if i not in chosen]


@dataclass(frozen=True)
class ProtocolScore(Serial):
    """One protocol's accuracy on the selection split (None if not needed) and the evaluation split."""

    name: str
    description: str
    selection: Optional[Estimate]
    evaluation: Estimate


@dataclass(frozen=True)
class ElicitedCeiling:
    """The chosen protocol and its evaluation-split accuracy (the ceiling), with every protocol's numbers.

    What `select_ceiling` returns. ``estimate`` is the number to use as a capability ceiling:
    it was measured on items the choice never saw, so it is not the winner's curse maximum.

    Parameters
    ----------
    chosen : str
        The protocol chosen on the selection split.
    estimate : Estimate
        Its accuracy on the evaluation split only.
    scores : tuple of ProtocolScore
        Every protocol's selection and evaluation accuracy, in preference order.
    selection_ids : tuple of str
        Items the choice was made on.
    evaluation_ids : tuple of str
        Items the ceiling was measured on.
    correct : dict of str to bool
        Evaluation item id -> the chosen protocol answered correctly.
    chance : float
        Accuracy of guessing.
    """

    chosen: str
    estimate: Estimate  # the chosen protocol's accuracy on the evaluation split only
    scores: tuple[ProtocolScore, ...]  # every protocol, in preference order
    selection_ids: tuple[str, ...]
    evaluation_ids: tuple[str, ...]
    correct: dict[str, bool]  # evaluation item id -> chosen protocol answered correctly
    chance: float

    @property
    def description(self) -> str:
        """The chosen protocol's description."""
        return next(s.description for s in self.scores if s.name == self.chosen)

    def protocol_text(self) -> str:
        """One paragraph for the report's Ceiling.protocol: what was chosen, how, and the alternatives.

        Returns
        -------
        str
            The paragraph.
        """
        if len(self.scores) == 1:
            return f"{self.chosen}: {self.description}; accuracy on all {len(self.evaluation_ids)} items"
        others = "; ".join(
            f"{s.name} {s.evaluation.value:.2f} [{s.evaluation.lo:.2f}, {s.evaluation.hi:.2f}]"
            + (f" (selection {s.selection.value:.2f})" if s.selection is not None else "")
            for s in self.scores
        )
        return (
            f"best of {len(self.scores)} elicitation protocols, chosen on {len(self.selection_ids)} selection items "
            f"and reported on {len(self.evaluation_ids)} disjoint evaluation items (no winner's curse): "
            f"{self.chosen} = {self.description}. Evaluation-split accuracy of every protocol: {others} "
            "(the best of these is biased upwards; the ceiling is the pre-chosen protocol's)"
        )

    # stays hand-written: writes the derived description and protocol_text, scores as "protocols", not `correct`
    def to_dict(self) -> dict[str, Any]:
        """The ceiling as a JSON-ready dictionary, with `protocol_text`.

        Returns
        -------
        dict
            Chosen protocol, estimate, chance, every protocol's scores and the splits.
        """
        return {
            "chosen": self.chosen,
            "description": self.description,
            "estimate": self.estimate.to_dict(),
            "chance": self.chance,
            "protocols": [s.to_dict() for s in self.scores],
            "selection_ids": list(self.selection_ids),
            "evaluation_ids": list(self.evaluation_ids),
            "protocol_text": self.protocol_text(),
        }


def choose_protocol(selection_correct: Mapping[str, Mapping[str, bool]], order: Sequence[str]) -> str:
    """The protocol with the most correct selection items; ties go to the earliest in ``order``
    (list cheaper, simpler protocols first, so a tie never buys extra cost)."""
    best, best_k = order[0], -1
    for name in order:
        k = sum(bool(v) for v in selection_correct[name].values())
        if k > best_k:
            best, best_k = name, k
    return best


def _check_split(correct: Mapping[str, Mapping[str, bool]], order: Sequence[str], what: str) -> set[str]:
    if set(correct) != set(order):
        raise InputError(f"{what}: protocols {sorted(correct)} do not match {list(order)}; give results for each once")
    id_sets = {frozenset(v) for v in correct.values()}
    if len(id_sets) != 1:
        raise InputError(
            f"{what}: the protocols were scored on different items; score every protocol on the same items"
        )
    return set(next(iter(id_sets)))


def select_ceiling(
    selection_correct: Mapping[str, Mapping[str, bool]],
    evaluation_correct: Mapping[str, Mapping[str, bool]],
    descriptions: Mapping[str, str],
    *,
    chance: float,
    interval: str = DEFAULT_INTERVAL,
) -> ElicitedCeiling:
    """Choose the protocol on the selection split; report its accuracy on the evaluation split.

    Both arguments map protocol name -> item id -> correct. ``descriptions`` fixes the
    protocols and their preference order (ties go to the earlier one). With a single
    protocol there is nothing to choose: ``selection_correct`` may be empty and every item
    is an evaluation item. The splits must be disjoint.

    Reporting the best of several protocols' accuracies on the same items is biased upwards
    (five equal protocols at chance 0.25 on 16 items look like 0.38); choosing on one split
    and reporting on another removes that bias. Split the items with
    `split_selection_evaluation`.

    Parameters
    ----------
    selection_correct : mapping of str to mapping of str to bool
        Protocol name -> item id -> correct, on the selection split.
    evaluation_correct : mapping of str to mapping of str to bool
        Protocol name -> item id -> correct, on the evaluation split.
    descriptions : mapping of str to str
        Protocol name -> description; its order is the preference order for ties.
    chance : float
        Accuracy of guessing (1 / number of options).
    interval : str, default DEFAULT_INTERVAL
        Interval method of the proportions (`liedar.core.stats.proportion`).

    Returns
    -------
    ElicitedCeiling
        The chosen protocol, its evaluation-split accuracy and every protocol's numbers.

    Raises
    ------
    InputError
        When no protocol is given, the protocols were scored on different items, a split is
        empty, or the splits overlap.

    Examples
    --------
    >>> sel = {"zero-shot": {"a": False, "b": True}, "few-shot": {"a": True, "b": True}}
    >>> ev = {"zero-shot": {"c": False, "d": True, "e": False}, "few-shot": {"c": True, "d": True, "e": False}}
    >>> ceiling = select_ceiling(sel, ev, {"zero-shot": "answer letter", "few-shot": "worked examples"}, chance=0.25)
    >>> ceiling.chosen, f"{ceiling.estimate:.2f}"
    ('few-shot', '0.67')
    """
    order = list(descriptions)
    if not order:
        raise InputError("no elicitation protocols given: name at least one")
    eval_ids = _check_split(evaluation_correct, order, "evaluation split")
    if not eval_ids:
        raise InputError("the evaluation split has no items: give at least one")
    if len(order) == 1 and not selection_correct:
        sel_ids: set[str] = set()
        chosen = order[0]
    else:
        sel_ids = _check_split(selection_correct, order, "selection split")
        if not sel_ids:
            raise InputError("the selection split has no items: choosing among protocols needs at least one")
        overlap = sel_ids & eval_ids
        if overlap:
            raise InputError(
                f"{len(overlap)} item(s) (e.g. {sorted(overlap)[0]!r}) are in both the selection and the evaluation "
                "split: the splits must be disjoint or the ceiling inherits the winner's curse"
            )
        chosen = choose_protocol(selection_correct, order)
    ev = sorted(eval_ids)
    scores = []
    for name in order:
        k_ev = sum(bool(evaluation_correct[name][i]) for i in ev)
        sel = None
        if sel_ids:
            sel = proportion(
                sum(bool(v) for v in selection_correct[name].values()), len(sel_ids), "capability", interval
            )
        scores.append(ProtocolScore(name, descriptions[name], sel, proportion(k_ev, len(ev), "capability", interval)))
    estimate = next(s.evaluation for s in scores if s.name == chosen)
    return ElicitedCeiling(
        chosen,
        estimate,
        tuple(scores),
        tuple(sorted(sel_ids)),
        tuple(ev),
        {i: bool(evaluation_correct[chosen][i]) for i in ev},
        float(chance),
    )
