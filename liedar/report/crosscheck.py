"""Cross-check: do behavioural flags and probe flags agree on the same items?

Why: the two lines of evidence fail differently (a behavioural test sees only answers; a
probe can fire on style). Where they agree the flag is more credible; the items where
they disagree are listed so a user can read them. Kappa comes from
`behavioral.stats.cohen_kappa` (one implementation in the project).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

from liedar.core.errors import InputError
from liedar.core.results import CrossCheck, Disagreement
from liedar.core.stats import DEFAULT_INTERVAL, Estimate, cohen_kappa, proportion


def cross_check(
    item_ids: Sequence[str],
    behavioural_flags: Sequence[bool],
    probe_flags: Sequence[bool],
    *,
    behavioural: str,
    probe: str,
    probe_scores: Optional[Sequence[float]] = None,
    notes: Optional[Sequence[str]] = None,
) -> CrossCheck:
    """Contingency table, kappa with interval, raw agreement, and the disagreeing items."""
    n = len(item_ids)
    if n == 0:
        raise InputError("cross-check needs at least one item flagged (or not) by both sources")
    if len(behavioural_flags) != n or len(probe_flags) != n or (probe_scores is not None and len(probe_scores) != n):
        raise InputError("cross-check: item ids, behavioural flags, probe flags (and scores) must have equal lengths")
    beh = [bool(x) for x in behavioural_flags]
    prb = [bool(x) for x in probe_flags]
    table = [
        [sum(b and p for b, p in zip(beh, prb)), sum(b and not p for b, p in zip(beh, prb))],
        [sum(p and not b for b, p in zip(beh, prb)), sum(not b and not p for b, p in zip(beh, prb))],
    ]
    kappa: Optional[Estimate] = cohen_kappa(beh, prb)
    kappa_note = ""
    constant = [name for name, flags in (("behaviour", beh), ("probe", prb)) if len(set(flags)) == 1]
    if constant:
        # One source gave one label to every item: kappa is 0 (or 0/0) by construction and
        # its asymptotic interval collapses to a point, so it says nothing about agreement.
        which = " and ".join(constant)
        kappa_note = (
            f"the {which} flagged {'every' if (beh if constant[0] == 'behaviour' else prb)[0] else 'no'} "
            "item: kappa is uninformative when a source never varies"
        )
        kappa = None
    elif not math.isfinite(kappa.value):
        kappa_note = kappa.note or "undefined: a source used one label for every item"
        kappa = None
    elif not (math.isfinite(kappa.lo) and math.isfinite(kappa.hi)):
        kappa_note, kappa = "interval undefined at this n", None
    agree = table[0][0] + table[1][1]
    agreement = proportion(agree, n, "quality", DEFAULT_INTERVAL)  # the project default, as for every rate
    disagreements = [
        Disagreement(
            str(item_ids[i]),
            beh[i],
            prb[i],
            None if probe_scores is None else float(probe_scores[i]),
            "" if notes is None else str(notes[i]),
        )
        for i in range(n)
        if beh[i] != prb[i]
    ]
    return CrossCheck(behavioural, probe, table, kappa, agreement, disagreements, kappa_note)
