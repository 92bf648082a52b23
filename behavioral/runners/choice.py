"""Asking a model to choose among option texts (the cloze format) in any prompt.

Why a module of its own: the choice-format instruments (sycophancy, belief vs assertion)
ask the same question under several user turns and roles, and each answer is the option
whose text, as the continuation after "Answer:", has the highest summed log-probability
(lm-eval-harness ``acc``; `behavioral.runners.elicitation.cloze_sum` on the bank's items).
A small model that sits at chance on Yes/No tokens picks the right option text here.

`ChoiceInstrument` is what their instruments share: the run and the report's four rows (the
ceiling, the rate under the condition, under the control, and the paired excess), so each
keeps only its row ids and labels (`ChoiceRows`) and which of its result's estimates fill them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Optional, Sequence

import numpy as np

from liedar.behavioral.choice_format import ChoiceResult
from liedar.behavioral.instrument import Instrument, InstrumentRun
from liedar.behavioral.runners.common import ANSWER_PREFIX
from liedar.core.errors import InputError
from liedar.core.results import Comparison, Section
from liedar.core.rows import add_measure, attach_caveats, ceiling_row, comparable
from liedar.core.stats import DEFAULT_INTERVAL, Estimate
from liedar.models.backend import Backend

if TYPE_CHECKING:  # `behavioral` never imports `models` at import time (team contract)
    from liedar.models.chat import Dialogue, TextInput


def choice_prompt(user: str, system: Optional[str]) -> "Dialogue":
    """(system +) a user turn, then the assistant prefill "Answer:" the option text follows."""
    from liedar.models.chat import Dialogue, Message  # torch-free, kept lazy by contract

    messages = [Message("system", system)] if system else []
    messages.append(Message("user", user, detect=True))
    messages.append(Message("assistant", ANSWER_PREFIX))
    return Dialogue.of(*messages)


def choose(backend: Backend, prompt: "TextInput", options: Sequence[str]) -> int:
    """Index of the option whose text (after one space) the model scores highest after ``prompt``."""
    conts = [" " + o.lstrip() for o in options]
    scores = np.asarray(backend.score_options(prompt, conts), dtype=float)
    if scores.shape != (len(conts),) or not np.isfinite(scores).any():
        raise InputError(
            f"backend.score_options returned {scores!r} for {len(conts)} options: expected finite log-probs "
            f"(a served model without log-probs cannot answer in the choice format; {ANSWER_PREFIX!r} prefill)"
        )
    return int(np.argmax(scores))


@dataclass(frozen=True)
class ChoiceRows:
    """A choice-format instrument's row ids and labels: the part of its report section that differs.

    ``no_known`` is the reason its effect rows give when no item was known; ``{n_items}`` in it
    is filled in."""

    ceiling: str
    ceiling_label: str
    condition: str
    condition_label: str
    control: str
    control_label: str
    excess: str
    excess_label: str
    comparison_label: str
    no_known: str

    @property
    def effect(self) -> tuple[str, str, str]:
        """The paired effect's three rows (where a caveat without rows of its own goes)."""
        return (self.condition, self.control, self.excess)

    def caveat_rows(self) -> dict[str, tuple[str, ...]]:
        """Caveat code -> rows: a ceiling near chance on the ceiling, no known item on the effect rows."""
        return {"ceiling_near_chance": (self.ceiling,), "no_denominator": self.effect}


class ChoiceInstrument(Instrument):
    """Base of the choice-format instruments: the run and the four report rows every one of them has.

    A subclass sets ``rows`` (and ``caveat_rows = rows.caveat_rows()``), asks the model in
    ``_measure`` and names its result's ceiling, condition and control estimates in ``_estimates``."""

    rows: ClassVar[ChoiceRows]

    def _measure(
        self, backend: Backend, items: Sequence[Any], *, interval: str, progress: bool
    ) -> tuple[ChoiceResult, list[Any]]:
        """The result and the per-item records of asking ``backend`` every item."""
        raise NotImplementedError

    def _estimates(self, res: Any) -> tuple[Estimate, Estimate, Estimate]:
        """The result's ceiling accuracy, rate under the condition, and rate under the control."""
        raise NotImplementedError

    def _condition_details(self, res: Any) -> dict[str, Any]:
        """Details the condition's row carries beyond n, known items and the reading."""
        return {}

    def run(
        self,
        backend: Backend,
        items: Sequence[Any],
        *,
        interval: str = DEFAULT_INTERVAL,
        seed: int = 0,
        progress: bool = False,
        **options: Any,
    ) -> InstrumentRun:
        """Ask the model every item (neutrally, then the known ones under the condition and the control).

        Parameters
        ----------
        backend : Backend
            The loaded model; it must score option texts (``score_options``).
        items : sequence
            Items from `items`.
        interval : str
            Interval method of the rates (`liedar.core.stats.proportion`).
        seed : int, default 0
            Unused: the items carry their seeded choices.
        progress : bool, default False
            Show progress.
        **options
            Options from `options` (none change the run).

        Returns
        -------
        InstrumentRun
            Result, per-item records and caveats.
        """
        res, records = self._measure(backend, items, interval=interval, progress=progress)
        return InstrumentRun(self.name, res, records, res.warnings, {})

    def section(self, run: InstrumentRun) -> Section:
        """The ceiling, both rates over the known items and their paired excess; a row without a
        denominator says why.

        Parameters
        ----------
        run : InstrumentRun
            A run of this instrument.

        Returns
        -------
        Section
            The four rows (and the comparison of the two rates), caveats on the rows they qualify.
        """
        res, r = run.result, self.rows
        accuracy, condition, control = self._estimates(res)
        s = Section(ceilings=[ceiling_row(r.ceiling, r.ceiling_label, res.protocol, res.chance, accuracy)])
        none = r.no_known.format(n_items=res.n_items)
        details = {"n_known": res.n_known, "n_items": res.n_items, "reading": res.reading}
        add_measure(
            s,
            none,
            id=r.condition,
            label=r.condition_label,
            instrument=self.name,
            scale="proportion",
            estimate=condition,
            ceiling=r.ceiling,
            details={**details, **self._condition_details(res)},
        )
        add_measure(
            s,
            none,
            id=r.control,
            label=r.control_label,
            instrument=self.name,
            scale="proportion",
            estimate=control,
            ceiling=r.ceiling,
            higher_is_deceptive=False,
        )
        add_measure(
            s,
            none,
            id=r.excess,
            label=r.excess_label,
            instrument=self.name,
            scale="difference",
            estimate=res.excess,
            ceiling=r.ceiling,
            null_value=0.0,
            details={"mcnemar": res.test.to_dict()},
        )
        if comparable(s, r.condition, r.control):
            s.comparisons.append(Comparison(r.condition, r.control, r.comparison_label))
        return attach_caveats(s, run.caveats, self.caveat_rows, default=r.effect)
