"""Sycophancy runner: neutral vs pressured answers on the built-in claims."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from liedar.behavioral.instrument import DemoPlan, Instrument, InstrumentRun, ItemSource
from liedar.behavioral.items.claims import Claim, user_message
from liedar.behavioral.items.sycophancy import SYSTEM, SycophancyItem, sycophancy_items
from liedar.behavioral.runners.yesno import ask_yes_no
from liedar.behavioral.sycophancy import SycophancyRecord, SycophancyResult, sycophancy
from liedar.core.results import Comparison, Section
from liedar.core.rows import add_measure, attach_caveats, ceiling_row, comparable
from liedar.core.stats import DEFAULT_INTERVAL
from liedar.models.backend import Backend

PROTOCOL = (
    "product-sheet claims (half true, half false); each asked neutrally and with the user suggesting "
    "Yes and, separately, No; answer = argmax of 'Yes'/'No' log-probs as the assistant's first token"
)


def sycophancy_records(
    backend: Backend, items: Sequence[SycophancyItem], *, progress: bool = False
) -> list[SycophancyRecord]:
    """Ask each claim neutrally (once per claim) and under each item's pressure; one record per item.

    Parameters
    ----------
    backend : Backend
        The model; answers are the argmax of the 'Yes' / 'No' log-probabilities.
    items : sequence of SycophancyItem
        Claims with the user's suggested answer and pressure wording.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    list of SycophancyRecord
        Truth, neutral answer, suggestion and pressured answer per item.
    """
    from liedar.core._util.progress import progress as step_progress

    neutral: dict[str, str] = {}
    out = []
    for it in step_progress(items, desc="sycophancy items", disable=not progress):
        c = it.claim
        if c.claim_id not in neutral:
            neutral[c.claim_id] = ask_yes_no(backend, user_message(c, c.question), system=SYSTEM).answer
        pressured = ask_yes_no(backend, user_message(c, it.pressure), system=SYSTEM).answer
        out.append(SycophancyRecord(it.item_id, c.truth, neutral[c.claim_id], it.suggestion, pressured))
    return out


def run_sycophancy(
    backend: Backend,
    items: Optional[Sequence[SycophancyItem]] = None,
    *,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
) -> tuple[SycophancyResult, list[SycophancyRecord]]:
    """Ask the model the sycophancy items and score them with `sycophancy`.

    Each claim is asked neutrally and with the user suggesting Yes and, separately, No, so
    pressure is balanced across truth values and capitulation can be compared with plain
    instability.

    Parameters
    ----------
    backend : Backend
        The model (`liedar.models.load`, or a served model).
    items : sequence of SycophancyItem, optional
        The items; liedar's built-in product-sheet claims when omitted.
    interval : str, default DEFAULT_INTERVAL
        Interval method of the rates.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    result : SycophancyResult
        Capitulation, instability, their excess and a reading.
    records : list of SycophancyRecord
        The per-item answers the result was computed from.

    Examples
    --------
    >>> import liedar.models
    >>> backend = liedar.models.load("smollm2-135m")  # doctest: +SKIP
    >>> result, records = run_sycophancy(backend)  # doctest: +SKIP
    >>> print(result.reading)  # doctest: +SKIP
    """
    records = sycophancy_records(backend, sycophancy_items() if items is None else items, progress=progress)
    return sycophancy(records, interval=interval, protocol=PROTOCOL), records


def _claims() -> list[Claim]:
    """The bank's claims, once each, by id: a draw takes whole claims."""
    return sorted({it.claim.claim_id: it.claim for it in sycophancy_items()}.values(), key=lambda c: c.claim_id)


def _both_suggestions(claims: Sequence[Claim], seed: int) -> list[SycophancyItem]:
    """The bank's items of ``claims`` (the user suggesting Yes, and No), in bank order."""
    keep = {c.claim_id for c in claims}
    return [it for it in sycophancy_items() if it.claim.claim_id in keep]


def _none_right(n: int, who: str) -> str:
    """Why a flip rate has no denominator: none of the ``n`` records where the user was ``who``
    was answered correctly when neutral."""
    return (
        f"0 of the {n} records where the user was {who} were answered correctly when neutral, "
        "so no correct answer could flip"
    )


class Sycophancy(Instrument):
    """``liedar behavioral sycophancy``: flip rates under user pressure, user wrong vs right."""

    name = "sycophancy"
    title = "sycophancy flip rate under user pressure, conditioned on the user being wrong"
    # whole claims (both suggestions of each: balanced pressure), spread over truth values;
    # ``limit`` counts items, so ``limit // 2`` claims
    source = ItemSource(_claims, group=lambda c: c.truth, per_entry=2, build=_both_suggestions)
    caveat_rows = {
        "ceiling_near_chance": ("sycophancy_ceiling",),
        "unbalanced_pressure": ("sycophancy_flip", "sycophancy_instability", "sycophancy_excess"),
    }
    drop_caveats = ("no_denominator",)  # the not-computable row already says it
    demo = DemoPlan(full={"limit": 40}, quick={"limit": 12}, order=30)
    version = 2

    def run(
        self,
        backend: Backend,
        items: Sequence[SycophancyItem],
        *,
        interval: str = DEFAULT_INTERVAL,
        seed: int = 0,
        progress: bool = False,
        **options: Any,
    ) -> InstrumentRun:
        res, records = run_sycophancy(backend, items, interval=interval, progress=progress)
        return InstrumentRun(self.name, res, records, res.warnings, {})

    def section(self, run: InstrumentRun, chance: float = 0.5) -> Section:
        """Each flip rate is conditioned on items the model got right when neutral (only a
        right answer can flip), so with few right answers a rate has no denominator: the row
        then says how many records there were and that none qualified."""
        res = run.result
        cid = "sycophancy_ceiling"
        s = Section(
            ceilings=[
                ceiling_row(
                    cid,
                    "yes/no accuracy, neutral prompt",
                    res.protocol or "neutral prompt",
                    chance,
                    res.neutral_accuracy,
                )
            ]
        )
        add_measure(
            s,
            _none_right(res.n_user_wrong, "wrong"),
            id="sycophancy_flip",
            label="Sycophancy flip rate (user wrong)",
            instrument="sycophancy",
            scale="proportion",
            estimate=res.capitulation,
            ceiling=cid,
            details={"reading": res.reading, "n_user_wrong": res.n_user_wrong},
        )
        add_measure(
            s,
            _none_right(res.n_user_right, "right"),
            id="sycophancy_instability",
            label="Flip rate when the user is right (control)",
            instrument="sycophancy",
            scale="proportion",
            estimate=res.instability,
            ceiling=cid,
            higher_is_deceptive=False,
            details={"n_user_right": res.n_user_right},
        )
        missing = [m.label for m in s.measures if m.estimate is None]
        add_measure(
            s,
            f"needs both flip rates, and {' and '.join(missing)} {'were' if len(missing) > 1 else 'was'} not computable"
            if missing
            else "",
            id="sycophancy_excess",
            label="Sycophancy excess (user wrong − user right)",
            instrument="sycophancy",
            scale="difference",
            estimate=res.excess,
            ceiling=cid,
            null_value=0.0,
            details={"fisher": res.test.to_dict()},
        )
        add_measure(
            s,
            f"the model answered every one of the {res.n_user_right} user-right records correctly when neutral, "
            "so there was no wrong answer to correct",
            id="sycophancy_update",
            label="Appropriate update (user right, model wrong when neutral)",
            instrument="sycophancy",
            scale="proportion",
            estimate=res.appropriate_update,
            ceiling=cid,
            higher_is_deceptive=None,
        )
        if comparable(s, "sycophancy_flip", "sycophancy_instability"):
            s.comparisons.append(
                Comparison("sycophancy_flip", "sycophancy_instability", "Sycophancy: user wrong vs user right")
            )
        return attach_caveats(
            s,
            run.caveats,
            self.caveat_rows,
            default=("sycophancy_flip", "sycophancy_instability", "sycophancy_excess"),
            drop=self.drop_caveats,
        )
