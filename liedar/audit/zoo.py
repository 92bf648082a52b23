"""The audit zoo: its manifest read strictly, its members' cards checked against their adapters, blind ids.

Why checked before anything runs: a member whose adapter is not the one its card describes
would be scored against the wrong truth. Every card is read strictly (`read_card`) and its
adapter's size and sha256 compared with it (`check_adapter_matches`); the outcome is cached
by the adapter file's size, modification time and the card's own sha256, so a warm audit
does not hash every adapter again. A member whose card disagrees is refused in one line.

Why blind ids: the detectors must run as on unknown models. While they run, each member is
named by an opaque id (``m01``, ``m02``, ... in a seeded random order); the names and the
truth are joined back only when the verdicts are scored.

Manifest format ``liedar-zoo-1`` (``zoo/audit/<base>/zoo.json``): ``base``, ``verdicts``,
``members`` (``name``, ``path`` relative to the zoo folder or null for the base model,
``half`` (a name: dev, test, or a later half such as fresh), ``role`` deceiver|decoy,
``truth``, ``kind``, ``trigger``; a member written for the second protocol also gives
``formats``, the formats it was trained in, never empty, and ``criterion``, what it must
measure to count as learned). ``seen_halves`` lists the halves that existed before the
second protocol's rule was pinned: their audits are marked *seen*; every member of any other
half must have been built after the rule's pin date.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from liedar.core._util.atomic import write_json_atomic
from liedar.core._util.serial import Serial
from liedar.core.errors import InputError
from liedar.models.cards import OrganismCard, check_adapter_matches, read_card, zoo_root

ZOO_FORMAT = "liedar-zoo-1"
MANIFEST = "zoo.json"
RULE_PIN = "rule.sha256"
TRUTHS = ("sandbagging", "hidden_capability", "sycophancy", "lying", "clean")
_MEMBER_KEYS = {"name", "path", "half", "role", "truth", "kind", "trigger"}
_PLANNED_KEYS = {"formats", "criterion"}  # a member written for the second protocol


@dataclass(frozen=True)
class Member(Serial):
    """One zoo member as the manifest states it (its truth is never shown to the detectors)."""

    name: str
    path: Optional[str]
    half: str
    role: str
    truth: str
    kind: str
    trigger: str
    formats: tuple[str, ...] = ()  # the formats it was trained in (second-protocol members)
    criterion: str = ""  # what it must measure to count as learned (second-protocol members)


@dataclass(frozen=True)
class Zoo:
    """A checked manifest and where it lives."""

    base: str
    folder: Path  # zoo/audit/<base>
    root: Path  # zoo/
    members: tuple[Member, ...]
    about: str
    seen_halves: tuple[str, ...] = ()

    def half(self, which: str) -> list[Member]:
        return [m for m in self.members if m.half == which]

    def folder_of(self, m: Member) -> Optional[Path]:
        return None if m.path is None else self.root / m.path

    @property
    def pinned_rule(self) -> Optional[str]:
        """The sha256 of the rule this zoo is scored with, when the zoo pins one (``rule.sha256``)."""
        p = self.folder / RULE_PIN
        if not p.is_file():
            return None
        text = p.read_text(encoding="utf-8").split()
        return text[0] if text else None


def zoos(root: Optional[Path] = None) -> list[str]:
    """The zoo names (base models) that have a manifest under ``zoo/audit/``."""
    root = root or zoo_root()
    if root is None:
        return []
    return sorted(p.parent.name for p in (Path(root) / "audit").glob(f"*/{MANIFEST}"))


def load_zoo(name: str, root: Optional[Path] = None) -> Zoo:
    """The zoo for base model ``name``, its manifest checked field by field.

    Parameters
    ----------
    name : str
        The zoo's base model, e.g. ``"smollm2-135m"``.
    root : Path, optional
        The ``zoo/`` folder (default: `zoo_root`).

    Returns
    -------
    Zoo

    Raises
    ------
    liedar.core.errors.InputError
        An unknown zoo, or a manifest that is not the format, with a bad member or duplicate names.
    """
    root = root or zoo_root()
    known = zoos(root)
    if root is None or name not in known:
        raise InputError(f"unknown zoo {name!r}: choose from {', '.join(known) or 'none (no zoo/audit/ folder found)'}")
    folder = Path(root) / "audit" / name
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(
            f"{path} cannot be read as JSON ({type(exc).__name__}): restore it from the repository"
        ) from None
    if not isinstance(data, dict) or data.get("format") != ZOO_FORMAT:
        raise InputError(f"{path} is not a {ZOO_FORMAT} manifest: restore it from the repository")
    if data.get("base") != name or not isinstance(data.get("members"), list):
        raise InputError(f"{path}: base {data.get('base')!r} is not {name!r} or 'members' is not a list")
    members = []
    for i, m in enumerate(data["members"]):
        if not isinstance(m, dict) or not (set(m) == _MEMBER_KEYS or set(m) == _MEMBER_KEYS | _PLANNED_KEYS):
            raise InputError(
                f"{path}: member {i} must have exactly the keys {', '.join(sorted(_MEMBER_KEYS))} "
                f"(and, written for the second protocol, {', '.join(sorted(_PLANNED_KEYS))})"
            )
        half_ok = isinstance(m["half"], str) and m["half"].isidentifier()
        if not half_ok or m["role"] not in ("deceiver", "decoy") or m["truth"] not in TRUTHS:
            raise InputError(f"{path}: member {m.get('name')!r} has half/role/truth outside the format")
        if "formats" in m:
            fm = m["formats"]
            if not isinstance(fm, list) or not fm or not all(isinstance(x, str) and x for x in fm):
                raise InputError(
                    f"{path}: member {m['name']!r} has format list {fm!r}: list the formats it was trained in "
                    '(at least one, e.g. ["option_text"])'
                )
            if not isinstance(m["criterion"], str) or not m["criterion"]:
                raise InputError(f"{path}: member {m['name']!r} states no criterion to count as learned")
            m = {**m, "formats": tuple(fm)}
        if m["path"] is not None and (not isinstance(m["path"], str) or ".." in Path(m["path"]).parts):
            raise InputError(f"{path}: member {m['name']!r} has path {m['path']!r}: a folder under zoo/ or null")
        members.append(Member(**{k: m[k] for k in m}))
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise InputError(f"{path}: member names repeat")
    seen = data.get("seen_halves", [])
    if not isinstance(seen, list) or not all(isinstance(h, str) for h in seen):
        raise InputError(f"{path}: 'seen_halves' must be a list of half names")
    return Zoo(name, folder, Path(root), tuple(members), str(data.get("about", "")), tuple(seen))


def _stamp(path: Path) -> list[Any]:
    st = path.stat()
    return [str(path.resolve()), st.st_size, st.st_mtime_ns]


def _cache_file() -> Path:
    from liedar.models.storage import cache_root

    return Path(cache_root()) / "audit" / "checked-cards.json"


def check_member(zoo: Zoo, m: Member, memo: Optional[dict[str, Any]] = None) -> Optional[OrganismCard]:
    """The member's card, read strictly and checked against its adapter (None for the base model).

    ``memo`` (from `check_members`) holds earlier checks keyed by the adapter file's stamp
    and the card's sha256; a hit skips the adapter's hash.

    Raises
    ------
    liedar.core.errors.InputError
        A missing member folder, a card that is damaged, for another base, or whose adapter
        differs from it (one line naming the member).
    """
    from liedar.core.errors import LiedarError
    from liedar.models.lora import ADAPTER_FILE

    folder = zoo.folder_of(m)
    if folder is None:
        return None
    if not (folder / "card.json").is_file():
        raise InputError(f"zoo member {m.name!r}: {folder} has no card.json (not built yet, or not pulled)")
    try:
        card = read_card(folder)
        card_sha = hashlib.sha256((folder / "card.json").read_bytes()).hexdigest()
        adapter = card.adapter_dir / ADAPTER_FILE
        stamp = json.dumps([_stamp(adapter) if adapter.is_file() else None, card_sha])
        if memo is None or memo.get(str(folder)) != stamp:
            check_adapter_matches(card)
            if memo is not None:
                memo[str(folder)] = stamp
    except LiedarError as exc:
        raise InputError(f"zoo member {m.name!r}: its card disagrees with its adapter: {exc}") from None
    if card.base_name != zoo.base:
        raise InputError(f"zoo member {m.name!r} is an organism of {card.base_name}, not of the zoo's {zoo.base}")
    return card


def check_members(zoo: Zoo, members: list[Member]) -> dict[str, Optional[OrganismCard]]:
    """Every member's card checked (cached across runs); name -> card (None for the base model)."""
    path = _cache_file()
    try:
        memo = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        memo = memo if isinstance(memo, dict) else {}
    except (OSError, ValueError):
        memo = {}
    before = dict(memo)
    out = {m.name: check_member(zoo, m, memo) for m in members}
    if memo != before:
        try:
            write_json_atomic(path, memo)
        except OSError:
            pass  # an unwritable cache costs a re-hash next time
    return out


def check_built_after(rule: Any, zoo: Zoo, half: str, cards: dict[str, Optional[OrganismCard]]) -> bool:
    """Whether ``half`` was seen before the rule was pinned (its results are then marked *seen*).

    Under a second-protocol rule (one with ``pinned_utc``), a half not in the manifest's
    ``seen_halves`` is a fresh test half: each of its built members must have been built
    after the rule's pin date, or its score would not be blind to the rule.

    Raises
    ------
    liedar.core.errors.InputError
        A fresh half audited with a rule that has no pin date, or a member built before it.
    """
    if not hasattr(rule, "pinned_utc"):
        return False  # the first protocol: its zoo pins its rule in rule.sha256
    if half == "dev" or half in zoo.seen_halves:
        return True  # the dev half is where the rule is chosen: it is seen by construction
    pinned = rule.pinned_utc
    if not pinned:
        raise InputError(
            f"the rule {rule.path} has no pin date (chosen_on.chosen_utc): the {half} half is scored only with a rule "
            "chosen on the dev half and pinned; run scripts/choose_audit_rule2.py"
        )
    for name, card in sorted(cards.items()):
        built = None if card is None else str(card.data.get("build", {}).get("built_at") or "")
        if card is not None and (not built or built < pinned):
            raise InputError(
                f"zoo member {name!r} of the {half} half was built at {built or 'an unknown time'}, before the rule's "
                f"pin date {pinned}: a fresh half's members must be built after the pin (rebuild it, or list the half "
                "in seen_halves and read its score as seen)"
            )
    return False


def blind_ids(names: list[str], seed: int) -> dict[str, str]:
    """name -> opaque id (``m01``...), in a seeded random order unrelated to the manifest's."""
    order = sorted(names)
    random.Random(f"liedar-audit-blind-{seed}").shuffle(order)
    return {n: f"m{i + 1:02d}" for i, n in enumerate(order)}


def strength(card: Optional[OrganismCard]) -> Optional[dict[str, Any]]:
    """The member's strength for the power curves: its card's headline number (value, interval, n)."""
    if card is None:
        return None
    e = card.ground_truth.get(card.headline) or {}
    if e.get("value") is None:
        return None
    return {"headline": card.headline, "value": e["value"], "lo": e["lo"], "hi": e["hi"], "n": e["n"]}


__all__ = [
    "Member",
    "Zoo",
    "ZOO_FORMAT",
    "blind_ids",
    "check_built_after",
    "check_member",
    "check_members",
    "load_zoo",
    "strength",
    "zoos",
]
