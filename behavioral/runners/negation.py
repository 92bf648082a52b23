"""Negation-consistency runner: P(yes|Q) and P(yes|not Q) for the built-in claim pairs."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from liedar.behavioral.instrument import DemoPlan, Instrument, InstrumentRun, ItemSource
from liedar.behavioral.items.claims import NegationPair, negation_pairs, user_message
from liedar.behavioral.negation import NegationRecord, NegationResult, negation_consistency
from liedar.behavioral.runners.yesno import ask_yes_no
from liedar.core.results import Section
from liedar.core.rows import add_measure, attach_caveats, usable
from liedar.core.stats import DEFAULT_INTERVAL
from liedar.models.backend import Backend

PROTOCOL = (
    "product-sheet claims; Q and 'Is it true that ... not ...?' asked in separate chats; P(yes) from the "
    "log-probs of 'Yes' vs 'No' as the assistant's first token; neutral = information-desk role, costly = "
    "sales role with a bonus that the honest answer endangers"
)


def negation_records(
    backend: Backend, pairs: Sequence[NegationPair], *, progress: bool = False
) -> list[NegationRecord]:
    from liedar.core._util.progress import progress as step_progress

    out = []
    for p in step_progress(pairs, desc="negation pairs", disable=not progress):
        yes_q = ask_yes_no(backend, user_message(p.claim, p.claim.question), system=p.system).p_yes
        yes_not_q = ask_yes_no(backend, user_message(p.claim, p.claim.negated), system=p.system).p_yes
        out.append(NegationRecord(p.pair_id, p.group, yes_q, yes_not_q))
    return out


def run_negation(
    backend: Backend,
    pairs: Optional[Sequence[NegationPair]] = None,
    *,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
) -> tuple[NegationResult, list[NegationRecord]]:
    records = negation_records(backend, negation_pairs() if pairs is None else pairs, progress=progress)
    return negation_consistency(records, interval=interval, protocol=PROTOCOL), records


class NegationConsistency(Instrument):
    """``liedar behavioral negation``: P(yes|Q) + P(yes|not Q), neutral vs honesty-costly roles."""

    name = "negation"
    title = "negation consistency P(yes|Q)+P(yes|not Q), neutral vs honesty-costly claims"
    source = ItemSource(negation_pairs, group=lambda p: p.group)  # half from each group: the selective test compares
    caveat_rows = {"few_pairs": ("negation_selective",)}
    demo = DemoPlan(full={"limit": 40}, quick={"limit": 10}, order=40)
    version = 2

    def run(
        self,
        backend: Backend,
        items: Sequence[NegationPair],
        *,
        interval: str = DEFAULT_INTERVAL,
        seed: int = 0,
        progress: bool = False,
        **options: Any,
    ) -> InstrumentRun:
        res, records = run_negation(backend, items, interval=interval, progress=progress)
        return InstrumentRun(self.name, res, records, res.warnings, {})

    def section(self, run: InstrumentRun, ceiling: Optional[str] = None) -> Section:
        res = run.result
        s = Section()
        add_measure(
            s,
            id="negation_inconsistency",
            label="Negation inconsistency index (all pairs)",
            instrument="negation",
            scale="proportion",
            estimate=res.overall.inconsistency,
            ceiling=ceiling,
            details={
                "reading": res.reading,
                "yes_bias": res.overall.yes_bias.to_dict() if usable(res.overall.yes_bias) else None,
            },
        )
        add_measure(
            s,
            id="negation_selective",
            label=f"Selective inconsistency ({res.costly_group} − {res.baseline_group})",
            instrument="negation",
            scale="difference",
            estimate=res.selective,
            ceiling=ceiling,
            null_value=0.0,
            details={"fisher": res.test.to_dict()},
        )
        return attach_caveats(s, run.caveats, self.caveat_rows)
