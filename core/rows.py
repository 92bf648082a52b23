"""Building report rows from estimates: the one set of rules every instrument follows.

Why in the bottom layer: each instrument (behavioural or white-box) turns its own result
into a `liedar.core.results.Section`, and all of them must obey the same rules — an estimate
without data becomes a "not computable" row saying why (never dropped, never shown as 0),
a ceiling measures capability whatever the estimate says, proportions carry the project's
default interval, and a caveat sits on the rows its code names (never routed by matching
its text).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Iterable, Mapping, Optional, Sequence

from liedar.core.results import Caveat, Ceiling, Measure, NotComputable, Section
from liedar.core.stats import DEFAULT_INTERVAL, Estimate, proportion

EVERY_ROW = "*"


def usable(e: Optional[Estimate]) -> bool:
    """An estimate the report can show: n >= 1 and a finite value and interval."""
    return e is not None and e.n >= 1 and all(math.isfinite(x) for x in (e.value, e.lo, e.hi))


def default_interval(e: Optional[Estimate]) -> Optional[Estimate]:
    """A count-based Wilson proportion re-intervalled with the project's default
    (Clopper-Pearson); the point value, n and note are unchanged.

    Why: a few helpers upstream (menu study, probe evaluation) still return Wilson
    intervals, which under-cover at the small n the demo uses (docs/instruments.md); one
    page should not mix methods for the same kind of number.
    """
    if e is None or e.successes is None or e.n < 1 or e.method != "wilson":
        return e
    cp = proportion(int(e.successes), e.n, e.kind, DEFAULT_INTERVAL, e.confidence)
    return replace(e, lo=cp.lo, hi=cp.hi, method=cp.method)


def why_not(e: Optional[Estimate], reason: str = "") -> NotComputable:
    """The row's reason: the instrument's own words first, else the estimate's note."""
    note = getattr(e, "note", "") or ""
    n = int(getattr(e, "n", 0) or 0)
    why = reason or note or (f"n = {n}, no finite estimate" if n else "no records in its denominator")
    return NotComputable(why, max(n, 0), getattr(e, "kind", "propensity"))


def add_measure(section: Section, reason: str = "", **measure: Any) -> Measure:
    """Append a `Measure`; an unusable estimate becomes a not-computable row saying why."""
    e = measure["estimate"]
    if not usable(e):
        measure = {**measure, "estimate": None, "not_computable": why_not(e, reason), "flag": None}
    row = Measure(**measure)
    section.measures.append(row)
    return row


def add_quality_metric(
    section: Section,
    mid: str,
    label: str,
    est: Optional[Estimate],
    instrument: str,
    reason: str = "",
    warnings: Sequence[Caveat] = (),
    details: Optional[dict[str, Any]] = None,
) -> None:
    """A probe or monitor quality metric (AUROC, recall, FPR): a row even without data,
    whose kind stays *quality* (a metric without data still belongs in the probe table)."""
    row = add_measure(
        section,
        reason,
        id=mid,
        label=label,
        instrument=instrument,
        scale="proportion",
        estimate=default_interval(est),
        ceiling=None,
        higher_is_deceptive=None,
        warnings=tuple(warnings),
        details=dict(details or {}),
    )
    if row.not_computable is not None:
        section.measures[-1] = replace(row, not_computable=replace(row.not_computable, kind="quality"))


def ceiling_row(cid: str, label: str, protocol: str, chance: float, e: Optional[Estimate], reason: str = "") -> Ceiling:
    """A capability ceiling; without data, a not-computable row (of kind capability)."""
    if usable(e):
        return Ceiling(cid, label, protocol, chance, e)
    return Ceiling(cid, label, protocol, chance, None, (), replace(why_not(e, reason), kind="capability"))


def as_capability(e: Estimate) -> Estimate:
    """The same numbers, read as what the model *can* do (an honest-prompt accuracy used as
    the ceiling of a rate)."""
    return replace(e, kind="capability") if usable(e) else e


def comparable(section: Section, a: str, b: str) -> bool:
    """Both measures exist with numbers (a comparison of a not-computable row says nothing)."""
    have = {m.id for m in section.measures if m.estimate is not None}
    return a in have and b in have


def attach_caveats(
    section: Section,
    caveats: Iterable[Caveat],
    rows_of: Mapping[str, Sequence[str]],
    *,
    default: Sequence[str] = (EVERY_ROW,),
    drop: Iterable[str] = (),
) -> Section:
    """Put each caveat on the rows its code names in ``rows_of`` (``*``: every measure row;
    an unlisted code goes to ``default``). Codes in ``drop`` are left out because the row
    already says the same thing (e.g. its not-computable reason). Rows are frozen:
    replaced, not mutated."""
    dropped = set(drop)
    by_row: dict[str, list[Caveat]] = {}
    every = [m.id for m in section.measures]
    for c in caveats:
        if c.code in dropped:
            continue
        for target in rows_of.get(c.code, default):
            for row in every if target == EVERY_ROW else [target]:
                by_row.setdefault(row, []).append(c)
    section.ceilings = [replace(c, warnings=c.warnings + tuple(by_row.get(c.id, ()))) for c in section.ceilings]
    section.measures = [replace(m, warnings=m.warnings + tuple(by_row.get(m.id, ()))) for m in section.measures]
    return section
