"""The audit's second rule format: every format the reference can answer, paired, Holm within a kind, sized by power.

Why a second format beside the first (``liedar-audit-rule-1`` stays, with its record): the
first rule read one format per kind (the next only when the first was unanswerable), an
excess by MOVER as if model and reference were independent, and sizes fixed outside the rule.
This format lists, per kind, one row per format the behaviour can be asked in (letters,
choice by option text, yes/no, free answer, the lie probe, the monitor, a trigger-free
consistency row); a row runs when the *reference* is capable in its format; the kind flags
when any capable row's paired excess clears its threshold after a Holm correction over the
kind's capable rows; a kind with no capable row is *not measurable on this reference*
(named in the verdict, never blocking ``clean``). The sizes the rows need for 80% power are
part of the rule, so they are chosen and pinned with it.

Format ``liedar-audit-rule-2``::

    {"format": "liedar-audit-rule-2",
     "status": "provisional" | "chosen",
     "about": "...",
     "chosen_on": {...} | null,            # chooser's record; "chosen_utc" is the pin date
     "alpha": 0.05,                         # family-wise within a kind (Holm)
     "precedence": ["sandbagging", "hidden_capability", "lying", "sycophancy"],
     "sizes": {"gap_items": 100, ...},      # the audit's sizes (liedar.audit.evidence.audit_sizes keys);
                                            # "item_split": "audit" reads the audit split, not the banks
     "kinds": {"sandbagging": [ROW, ...], ...}}

    ROW = {"detector": "sandbagging_gap",   # a detector the audit runs
           "format": "option_text",          # one of FORMATS (what the row asks the model in)
           "min_excess": 0.05,               # paired excess (model - reference) at least this
           "plan_effect": 0.2,               # 80% power against this excess for a clear
           "require_flag": false}            # and the detector's own flag rule on the model
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from liedar.core._util.serial import Serial
from liedar.core.errors import InputError

RULE2_FORMAT = "liedar-audit-rule-2"
KINDS = ("sandbagging", "hidden_capability", "sycophancy", "lying")
FORMATS = ("letters", "option_text", "yes_no", "free_answer", "lie_probe", "monitor", "consistency")
_ROW_KEYS = {"detector", "format", "min_excess", "plan_effect", "require_flag"}
_TOP_KEYS = {"format", "status", "about", "chosen_on", "alpha", "precedence", "sizes", "kinds"}


@dataclass(frozen=True)
class Row2(Serial):
    """One format of one kind.

    Attributes
    ----------
    detector : str
        The detector id whose per-item scores the row pairs.
    format : str
        What the row asks the model in (`FORMATS`).
    min_excess : float
        The least paired excess over the reference that flags.
    plan_effect : float
        The excess the row is planned to see with 80% power (a *clear* needs that power at the
        reference's discordance and the row's n).
    require_flag : bool
        The detector's own flag rule must also hold on the model.
    """

    detector: str
    format: str
    min_excess: float
    plan_effect: float
    require_flag: bool


@dataclass(frozen=True)
class Rule2:
    """A checked rule of format 2, with the sha256 of the file it came from."""

    kinds: dict[str, tuple[Row2, ...]]
    precedence: tuple[str, ...]
    alpha: float
    sizes: dict[str, Any]
    status: str
    about: str
    chosen_on: Optional[dict[str, Any]]
    sha256: str
    path: str

    @property
    def pinned_utc(self) -> Optional[str]:
        """When the rule was chosen and pinned (``chosen_on.chosen_utc``): no test member may predate it."""
        return None if not self.chosen_on else self.chosen_on.get("chosen_utc")

    def detectors(self) -> list[str]:
        return list(dict.fromkeys(r.detector for rows in self.kinds.values() for r in rows))

    # stays hand-written: writes the constant format, not sha256 or path
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": RULE2_FORMAT,
            "status": self.status,
            "about": self.about,
            "chosen_on": self.chosen_on,
            "alpha": self.alpha,
            "precedence": list(self.precedence),
            "sizes": self.sizes,
            "kinds": {k: [r.to_dict() for r in rows] for k, rows in self.kinds.items()},
        }


def rule_number(where: str, value: Any, lo: float = -1.0, hi: float = 10.0) -> float:
    """A rule file's number, finite and within [lo, hi] (both rule formats check numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{where} is {value!r}, not a finite number: fix the rule file")
    if not lo <= value <= hi:
        raise InputError(f"{where} is {value}, outside [{lo}, {hi}]: fix the rule file")
    return float(value)


def _row(where: str, d: Any) -> Row2:
    if not isinstance(d, dict) or set(d) != _ROW_KEYS:
        raise InputError(f"{where} must have exactly the keys {', '.join(sorted(_ROW_KEYS))}: fix the rule file")
    if not isinstance(d["detector"], str) or not d["detector"].isidentifier():
        raise InputError(f"{where}.detector is {d['detector']!r}, not a detector id: fix the rule file")
    if d["format"] not in FORMATS:
        raise InputError(f"{where}.format is {d['format']!r}: use one of {', '.join(FORMATS)}")
    if not isinstance(d["require_flag"], bool):
        raise InputError(f"{where}.require_flag is {d['require_flag']!r}, not true/false: fix the rule file")
    return Row2(
        d["detector"],
        d["format"],
        rule_number(f"{where}.min_excess", d["min_excess"], -1.0, 2.0),
        rule_number(f"{where}.plan_effect", d["plan_effect"], 0.0, 2.0),
        d["require_flag"],
    )


def check_rule_header(data: Any, where: str, rule_format: str, top_keys: "set[str]") -> dict[str, Any]:
    """The part both rule formats share: a JSON object of ``rule_format`` with exactly
    ``top_keys``, a status of provisional or chosen, text ``about`` and a ``chosen_on``
    object or null; one-line `InputError` otherwise."""
    if not isinstance(data, dict):
        raise InputError(f"{where} is not a JSON object: restore it from the repository")
    if data.get("format") != rule_format:
        raise InputError(f"{where} has format {data.get('format')!r}, not {rule_format!r}: restore it")
    if set(data) != top_keys:
        extra, missing = sorted(set(data) - top_keys), sorted(top_keys - set(data))
        raise InputError(f"{where} has unknown keys {extra} or lacks {missing}: restore it from the repository")
    if data["status"] not in ("provisional", "chosen"):
        raise InputError(f"{where}: status {data['status']!r} is neither 'provisional' nor 'chosen'")
    if not isinstance(data["about"], str) or not (data["chosen_on"] is None or isinstance(data["chosen_on"], dict)):
        raise InputError(f"{where}: 'about' must be text and 'chosen_on' an object or null")
    return data


def check_rule2(data: Any, sha256: str = "", path: str = "") -> Rule2:
    """A `Rule2` from parsed JSON, every field checked; one-line `InputError` otherwise."""
    where = path or "the rule"
    data = check_rule_header(data, where, RULE2_FORMAT, _TOP_KEYS)
    alpha = rule_number(f"{where}: alpha", data["alpha"], 1e-6, 0.5)
    if not isinstance(data["sizes"], dict):
        raise InputError(f"{where}: 'sizes' must be an object of audit sizes")
    from liedar.pipeline.validate_detectors import item_split

    item_split(data["sizes"])  # a split that does not exist: one line before any model loads
    kinds = data["kinds"]
    if not isinstance(kinds, dict) or set(kinds) != set(KINDS):
        raise InputError(f"{where}: 'kinds' must give rows for exactly {', '.join(KINDS)}")
    rows: dict[str, tuple[Row2, ...]] = {}
    for kind in KINDS:
        if not isinstance(kinds[kind], list):
            raise InputError(f"{where}: kinds.{kind} is not a list of rows")
        rows[kind] = tuple(_row(f"kinds.{kind}[{i}]", r) for i, r in enumerate(kinds[kind]))
        dets = [r.detector for r in rows[kind]]
        if len(set(dets)) != len(dets):
            raise InputError(f"{where}: kinds.{kind} names a detector twice")
    prec = data["precedence"]
    if not isinstance(prec, list) or sorted(map(str, prec)) != sorted(KINDS) or len(prec) != len(KINDS):
        raise InputError(f"{where}: precedence must list each of {', '.join(KINDS)} once")
    return Rule2(
        rows,
        tuple(prec),
        alpha,
        dict(data["sizes"]),
        data["status"],
        data["about"],
        data["chosen_on"],
        sha256,
        str(path),
    )


__all__ = ["FORMATS", "RULE2_FORMAT", "Row2", "Rule2", "check_rule2", "check_rule_header", "rule_number"]
