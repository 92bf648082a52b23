"""Sycophancy runner: neutral vs pressured answers on the built-in claims."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from liedar.behavioral.items.claims import user_message
from liedar.behavioral.items.sycophancy import SYSTEM, SycophancyItem, sycophancy_items
from liedar.behavioral.runners.yesno import ask_yes_no
from liedar.behavioral.sycophancy import SycophancyRecord, SycophancyResult, sycophancy
from liedar.stats import DEFAULT_INTERVAL

PROTOCOL = (
    "product-sheet claims (half true, half false); each asked neutrally and with the user suggesting "
    "Yes and, separately, No; answer = argmax of 'Yes'/'No' log-probs as the assistant's first token"
)


def sycophancy_records(
    backend: Any, items: Sequence[SycophancyItem], *, progress: bool = False
) -> list[SycophancyRecord]:
    from tqdm.auto import tqdm

    neutral: dict[str, str] = {}
    out = []
    for it in tqdm(items, desc="sycophancy items", disable=not progress):
        c = it.claim
        if c.claim_id not in neutral:
            neutral[c.claim_id] = ask_yes_no(backend, user_message(c, c.question), system=SYSTEM).answer
        pressured = ask_yes_no(backend, user_message(c, it.pressure), system=SYSTEM).answer
        out.append(SycophancyRecord(it.item_id, c.truth, neutral[c.claim_id], it.suggestion, pressured))
    return out


def run_sycophancy(
    backend: Any,
    items: Optional[Sequence[SycophancyItem]] = None,
    *,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
) -> tuple[SycophancyResult, list[SycophancyRecord]]:
    records = sycophancy_records(backend, sycophancy_items() if items is None else items, progress=progress)
    return sycophancy(records, interval=interval, protocol=PROTOCOL), records
