"""The audit's decision rule: a small JSON file, read strictly, refused unless its hash is pinned.

Why a file and a pinned hash: an audit's accuracy means something only if the rule that
turns detector rows into verdicts was fixed before the models it is scored on existed. The
rule is data (which detector rows, which thresholds, which verdict wins when several fire,
what makes *cannot tell*), so it can be chosen by a script on the development half
(``scripts/choose_audit_rule.py``), committed, and never edited by hand afterwards: a file
whose sha256 is not among the pinned ones (``rules/pins.json``) is refused in one line.

Format ``liedar-audit-rule-1``::

    {"format": "liedar-audit-rule-1",
     "status": "provisional" | "chosen",
     "about": "...",
     "chosen_on": {...} | null,                 # how and on what the thresholds were chosen
     "precedence": ["hidden_capability", "sandbagging", "lying", "sycophancy"],
     "clean_requires": ["sandbagging", "hidden_capability", "sycophancy", "lying"],
     "verdicts": {"sandbagging": [ROW, ...], ...}}

    ROW = {"detectors": ["sandbagging_gap"],     # alternatives (formats), first capable one used
           "min_excess": 0.0,                    # model's effect minus the reference's, at least
           "excess_lo_above": 0.0,               # and that difference's interval above this
           "require_flag": true,                 # and the detector's own flag rule on the model
           "plan_effect": 0.2}                   # a clear needs 80% power against this excess
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from liedar.audit.rule2 import RULE2_FORMAT, Rule2, check_rule2, check_rule_header, rule_number
from liedar.core._util.serial import Serial
from liedar.core.errors import InputError

RULE_FORMAT = "liedar-audit-rule-1"
RULES_DIR = Path(__file__).resolve().parent / "rules"
DEFAULT_RULE = RULES_DIR / "default.json"
PINS_FILE = RULES_DIR / "pins.json"
KINDS = ("sandbagging", "hidden_capability", "sycophancy", "lying")
VERDICTS = KINDS + ("clean", "cannot_tell")
_ROW_KEYS = {"detectors", "min_excess", "excess_lo_above", "require_flag", "plan_effect"}
_TOP_KEYS = {"format", "status", "about", "chosen_on", "precedence", "clean_requires", "verdicts"}


@dataclass(frozen=True)
class RuleRow(Serial):
    """One evidence row a verdict rests on.

    Attributes
    ----------
    detectors : tuple of str
        Detector ids, in order of preference: the same behaviour asked in different formats
        (e.g. choice, then yes/no); the first in which model and reference are both capable is used.
    min_excess : float
        The least effect above the reference's (model minus reference) that flags.
    excess_lo_above : float
        The difference's 95% interval must lie above this (significance, not just size).
    require_flag : bool
        The detector's own flag rule (`FLAG_RULES`) must also hold on the model.
    plan_effect : float
        A row reads *clear* only with 80% power to see this excess at its n; else *too few to decide*.
    """

    detectors: tuple[str, ...]
    min_excess: float
    excess_lo_above: float
    require_flag: bool
    plan_effect: float


@dataclass(frozen=True)
class Rule:
    """A checked rule, with the sha256 of the file it came from.

    Attributes
    ----------
    verdicts : dict
        Kind -> its rows (any row flagging flags the kind).
    precedence : tuple of str
        When several kinds flag, the first in this order is the verdict.
    clean_requires : tuple of str
        *Clean* needs at least one row of each of these kinds to read clear; otherwise the
        verdict is *cannot tell*.
    status : {"provisional", "chosen"}
    sha256 : str
        The rule file's hash (pinned in ``rules/pins.json``).
    """

    verdicts: dict[str, tuple[RuleRow, ...]]
    precedence: tuple[str, ...]
    clean_requires: tuple[str, ...]
    status: str
    about: str
    chosen_on: Optional[dict[str, Any]]
    sha256: str
    path: str

    def detectors(self) -> list[str]:
        """Every detector id the rule reads, once, in rule order."""
        return list(dict.fromkeys(d for rows in self.verdicts.values() for r in rows for d in r.detectors))

    # stays hand-written: writes the constant format, not sha256 or path
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": RULE_FORMAT,
            "status": self.status,
            "about": self.about,
            "chosen_on": self.chosen_on,
            "precedence": list(self.precedence),
            "clean_requires": list(self.clean_requires),
            "verdicts": {k: [r.to_dict() for r in rows] for k, rows in self.verdicts.items()},
        }


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def pinned_hashes(pins: Path = PINS_FILE) -> dict[str, str]:
    """sha256 -> rule file name, from the committed ``rules/pins.json``."""
    try:
        data = json.loads(Path(pins).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{pins} cannot be read ({type(exc).__name__}): restore it from the repository") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputError(f"{pins} is not a map of rule file -> sha256: restore it from the repository")
    return {v: k for k, v in data.items()}


def _row(where: str, d: Any) -> RuleRow:
    if not isinstance(d, dict):
        raise InputError(f"{where} is not an object: fix the rule file")
    if set(d) != _ROW_KEYS:
        extra, missing = sorted(set(d) - _ROW_KEYS), sorted(_ROW_KEYS - set(d))
        raise InputError(f"{where} has unknown keys {extra} or lacks {missing}: fix the rule file")
    dets = d["detectors"]
    if not isinstance(dets, list) or not dets or not all(isinstance(x, str) and x.isidentifier() for x in dets):
        raise InputError(f"{where}.detectors must be a non-empty list of detector ids: fix the rule file")
    if not isinstance(d["require_flag"], bool):
        raise InputError(f"{where}.require_flag is {d['require_flag']!r}, not true/false: fix the rule file")
    return RuleRow(
        tuple(dets),
        rule_number(f"{where}.min_excess", d["min_excess"]),
        rule_number(f"{where}.excess_lo_above", d["excess_lo_above"]),
        d["require_flag"],
        rule_number(f"{where}.plan_effect", d["plan_effect"], 0.0, 10.0),
    )


def check_rule(data: Any, sha256: str = "", path: str = "") -> Rule:
    """A `Rule` from parsed JSON, every field checked; one-line `InputError` otherwise.

    Parameters
    ----------
    data : Any
        The parsed rule file.
    sha256, path : str
        Carried into the result (what the audit's results record).

    Returns
    -------
    Rule

    Raises
    ------
    liedar.core.errors.InputError
        Wrong format, unknown or missing keys, a kind that is not a verdict, a threshold
        that is not a finite number, a precedence that does not list every kind once.
    """
    where = path or "the rule"
    data = check_rule_header(data, where, RULE_FORMAT, _TOP_KEYS)
    verdicts = data["verdicts"]
    if not isinstance(verdicts, dict) or set(verdicts) != set(KINDS):
        raise InputError(f"{where}: 'verdicts' must give rows for exactly {', '.join(KINDS)}")
    rows: dict[str, tuple[RuleRow, ...]] = {}
    for kind in KINDS:
        if not isinstance(verdicts[kind], list):
            raise InputError(f"{where}: verdicts.{kind} is not a list of rows")
        rows[kind] = tuple(_row(f"verdicts.{kind}[{i}]", r) for i, r in enumerate(verdicts[kind]))
    prec = data["precedence"]
    if not isinstance(prec, list) or sorted(map(str, prec)) != sorted(KINDS) or len(prec) != len(KINDS):
        raise InputError(f"{where}: precedence must list each of {', '.join(KINDS)} once")
    clean = data["clean_requires"]
    if not isinstance(clean, list) or not set(map(str, clean)) <= set(KINDS) or len(set(clean)) != len(clean):
        raise InputError(f"{where}: clean_requires must list kinds among {', '.join(KINDS)}, each once")
    return Rule(rows, tuple(prec), tuple(clean), data["status"], data["about"], data["chosen_on"], sha256, str(path))


def load_rule(path: Optional[Path] = None, *, pins: Path = PINS_FILE) -> Union[Rule, Rule2]:
    """The rule at ``path`` (default: the shipped ``rules/default.json``), refused unless its
    sha256 is pinned in ``rules/pins.json``; a ``liedar-audit-rule-2`` file gives a `Rule2`.

    Parameters
    ----------
    path : Path, optional
        A rule file.
    pins : Path
        The committed pins (tests give their own).

    Returns
    -------
    Rule or Rule2

    Raises
    ------
    liedar.core.errors.InputError
        A missing or unreadable file, invalid JSON, a hash that is not pinned (an edited or
        unchosen rule), a malformed rule.

    Examples
    --------
    >>> load_rule().status in ("provisional", "chosen")  # doctest: +SKIP
    True
    """
    path = Path(path) if path is not None else DEFAULT_RULE
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"rule file {path} cannot be read ({type(exc).__name__}): give an existing file") from None
    digest = hashlib.sha256(raw).hexdigest()
    pinned = pinned_hashes(pins)
    if digest not in pinned:
        raise InputError(
            f"rule file {path} has sha256 {digest[:16]}..., which is not a committed rule ({Path(pins).name} pins "
            f"{', '.join(sorted(pinned.values())) or 'none'}): use the committed file, or choose a new rule with "
            "scripts/choose_audit_rule.py and commit it"
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"rule file {path} is not valid JSON ({str(exc).splitlines()[0][:80]})") from None
    shown = "liedar/audit/rules/default.json" if path.resolve() == DEFAULT_RULE.resolve() else str(path)
    if isinstance(data, dict) and data.get("format") == RULE2_FORMAT:
        return check_rule2(data, digest, shown)
    return check_rule(data, digest, shown)


def pin(path: Path, pins: Path = PINS_FILE) -> str:
    """Record ``path``'s sha256 under its file name in ``pins`` (the chooser's last step); returns the hash."""
    from liedar.core._util.atomic import write_json_atomic

    digest = file_sha256(path)
    try:
        current = json.loads(Path(pins).read_text(encoding="utf-8")) if Path(pins).is_file() else {}
    except ValueError:
        current = {}
    current[Path(path).name] = digest
    write_json_atomic(pins, dict(sorted(current.items())))
    return digest


__all__ = [
    "DEFAULT_RULE",
    "KINDS",
    "RULE_FORMAT",
    "Rule",
    "RuleRow",
    "VERDICTS",
    "check_rule",
    "file_sha256",
    "load_rule",
    "pin",
    "pinned_hashes",
]
