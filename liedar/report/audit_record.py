"""The audit's record (``audit.json``, written by ``liedar audit``) as types, read strictly.

Why types in the report layer: ``liedar report --audit FILE`` re-renders an audit without a
model, from this file alone; a record damaged by hand or by another tool must be refused in
one line naming its field (as a results folder is, through `liedar.core._util.serial`), not
surface as a ``KeyError`` inside a renderer. The types name what the page reads, so a record
of either rule format (`liedar.audit.verdict`, `liedar.audit.verdict2`) reads.

The format is ``liedar-audit-1``; a record of another version is refused naming both. Keys
the types do not name are kept in the file and ignored here (a later minor addition).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from liedar.core._util.serial import Serial, from_data
from liedar.core.errors import IncompatibleError, InputError, LiedarError
from liedar.core.stats import Estimate

RESULTS_FORMAT = "liedar-audit-1"


@dataclass(frozen=True)
class EvidenceRow(Serial):
    """One evidence row as the page shows it: the detector on one kind, its state, the model's
    and the reference's effect and their excess, n and power (``liedar.audit.verdict`` and
    ``liedar.audit.verdict2`` write more keys; these are the ones read here)."""

    kind: str
    detector: str
    state: str
    effect: Optional[Estimate] = None
    reference: Optional[Estimate] = None
    excess: Optional[Estimate] = None
    n: int = 0
    power: Optional[float] = None
    n_needed: Optional[int] = None
    why: str = ""


@dataclass(frozen=True)
class Verdict(Serial):
    """One model's verdict, why, and the rows behind it (either rule format's)."""

    verdict: str
    why: str
    rows: list[EvidenceRow]
    flagged: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RuleRef(Serial):
    """Which rule the audit read its evidence with (the page names it and its hash)."""

    path: str
    sha256: str
    status: str


@dataclass(frozen=True)
class ZooRef(Serial):
    """The zoo a scored audit ran on, and which half."""

    name: str
    half: str


@dataclass(frozen=True)
class AuditedModel(Serial):
    """One audited model: its verdict, and for a zoo member its blind id, truth and card words."""

    verdict: Verdict
    model: Optional[str] = None
    reference: str = ""
    name: Optional[str] = None
    id: str = ""
    truth: Optional[str] = None
    role: str = ""
    kind: str = ""
    trigger: Optional[str] = None


@dataclass(frozen=True)
class Rated(Serial):
    """A detector's recall on one kind, or its false flags on the decoys."""

    rate: Optional[Estimate]
    undecided: int = 0


@dataclass(frozen=True)
class PowerPoint(Serial):
    """One targeted member on a detector's power figure: its card's strength, caught or not."""

    strength: Optional[float]
    caught: bool


@dataclass(frozen=True)
class DetectorScore(Serial):
    """A detector's rates on one zoo half, and the items it needs for 80% power."""

    recall: dict[str, Rated]
    false_flags: Rated
    items_needed: dict[str, Any]
    power_model: Optional[str] = None
    points: list[PowerPoint] = field(default_factory=list)
    curve: list[tuple[float, float]] = field(default_factory=list)
    n: int = 0


@dataclass(frozen=True)
class Anchor(Serial):
    """The published blue team's rates the audit is read against."""

    source: str
    black_box_and_probes_rate: Estimate
    with_fine_tuning_rate: Estimate


@dataclass(frozen=True)
class ZooScore(Serial):
    """A zoo audit's score: verdicts against the truth, per detector, and the anchor."""

    n_models: int
    correct: int
    accuracy: Optional[Estimate]
    decoys: int
    decoys_flagged: list[str]
    confusion: dict[str, dict[str, int]]
    per_detector: dict[str, DetectorScore]
    anchor: Anchor

    def __post_init__(self) -> None:
        columns = [tuple(row) for row in self.confusion.values()]
        if not columns or not columns[0] or len(set(columns)) != 1:
            raise InputError("ZooScore.confusion must hold one row per truth, each with the same verdict columns")


@dataclass(frozen=True)
class AuditRecord(Serial):
    """What ``liedar report --audit`` reads of an audit's record."""

    format: str
    rule: RuleRef
    models: list[AuditedModel]
    zoo: Optional[ZooRef] = None
    score: Optional[ZooScore] = None

    def __post_init__(self) -> None:
        if self.format != RESULTS_FORMAT:
            raise IncompatibleError(
                f"the record has format {self.format!r}, this liedar reads {RESULTS_FORMAT!r}: read it with the "
                "liedar that wrote it, or re-run `liedar audit`"
            )
        if not self.models:
            raise InputError("AuditRecord.models is empty: an audit records at least one model")
        if self.score is not None and self.zoo is None:
            raise InputError("AuditRecord.score needs AuditRecord.zoo (only a zoo audit is scored)")
        for i, m in enumerate(self.models):
            needs = ("name", "truth", "id") if self.zoo is not None else ("model",)
            missing = [k for k in needs if not getattr(m, k)]
            if missing:
                raise InputError(f"AuditRecord.models[{i}] lacks {', '.join(missing)}")


def read_record(path: "str | Path") -> dict[str, Any]:
    """An audit's record, checked against `AuditRecord` (format, required keys, types).

    Parameters
    ----------
    path : str or Path
        The ``audit.json`` that ``liedar audit`` wrote.

    Returns
    -------
    dict
        The record as parsed (the renderer reads it), known to hold every field it reads.

    Raises
    ------
    liedar.core.errors.InputError
        One line naming the file and the first field that is missing or of the wrong type.
    liedar.core.errors.IncompatibleError
        A record of another format version.
    """
    import json
    import re

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(
            f"{path} cannot be read as JSON ({type(exc).__name__}): give the audit.json liedar audit wrote"
        ) from None
    if not isinstance(data, dict) or not re.fullmatch(r"liedar-audit-\d+", str(data.get("format"))):
        raise InputError(
            f"{path} is not an audit's results (format {RESULTS_FORMAT}): give the audit.json liedar audit wrote"
        )
    try:
        from_data(AuditRecord, data)
    except LiedarError as exc:
        raise type(exc)(f"{path} is not a readable audit record: {exc}") from None
    return data


__all__ = ["AuditRecord", "EvidenceRow", "RESULTS_FORMAT", "Verdict", "read_record"]
