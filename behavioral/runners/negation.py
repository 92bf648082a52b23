"""Negation-consistency runner: P(yes|Q) and P(yes|not Q) for the built-in claim pairs."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from liedar.behavioral.items.claims import NegationPair, negation_pairs, user_message
from liedar.behavioral.negation import NegationRecord, NegationResult, negation_consistency
from liedar.behavioral.runners.yesno import ask_yes_no
from liedar.stats import DEFAULT_INTERVAL

PROTOCOL = (
    "product-sheet claims; Q and 'Is it true that ... not ...?' asked in separate chats; P(yes) from the "
    "log-probs of 'Yes' vs 'No' as the assistant's first token; neutral = information-desk role, costly = "
    "sales role with a bonus that the honest answer endangers"
)


def negation_records(backend: Any, pairs: Sequence[NegationPair], *, progress: bool = False) -> list[NegationRecord]:
    from tqdm.auto import tqdm

    out = []
    for p in tqdm(pairs, desc="negation pairs", disable=not progress):
        yes_q = ask_yes_no(backend, user_message(p.claim, p.claim.question), system=p.system).p_yes
        yes_not_q = ask_yes_no(backend, user_message(p.claim, p.claim.negated), system=p.system).p_yes
        out.append(NegationRecord(p.pair_id, p.group, yes_q, yes_not_q))
    return out


def run_negation(
    backend: Any,
    pairs: Optional[Sequence[NegationPair]] = None,
    *,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
) -> tuple[NegationResult, list[NegationRecord]]:
    records = negation_records(backend, negation_pairs() if pairs is None else pairs, progress=progress)
    return negation_consistency(records, interval=interval, protocol=PROTOCOL), records
