"""Organism cards: the ground truth that ships beside each organism's adapter, read strictly.

Why a card, and why here: an organism is only ground truth if what it does was measured
and written down with the file it describes. A shipped organism is a folder
``zoo/<base>/<name>/`` holding ``adapter/`` (a liedar LoRA adapter in safetensors) and
``card.json``: the base model it was trained on (the GGUF's sha256), the adapter's
sha256, the recipe and training-data hashes, how it was built, and its *measured*
behaviour on held-out items and wordings with 95% intervals, beside the base model's.
`liedar.models.load("smollm2-135m:sandbagger")` must refuse an adapter that is not the
one its card describes, so the card reader lives in the models layer; the organisms layer
(``liedar.organisms.shipped``) writes cards and re-measures them.

Every refusal is one line (`InputError` / `IncompatibleError`, exit 2): a card that is not
JSON, a missing or mistyped field, a NaN or infinite number, an adapter whose size or
sha256 differs from the card, a card for another base model.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from liedar.core.errors import IncompatibleError, InputError

CARD_FILE = "card.json"
CARD_FORMAT = "liedar-organism-card-1"
ADAPTER_DIR = "adapter"
ZOO_ENV = "LIEDAR_ZOO"

# (path in the card, type) of every field a card must have; checked before anything is loaded
_REQUIRED: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("format", str),
    ("name", str),
    ("behaviour", str),
    ("targets", list),
    ("learned", bool),
    ("criterion", str),
    ("headline", str),
    ("base.name", str),
    ("base.fingerprint", str),
    ("base.d_model", int),
    ("base.n_layers", int),
    ("adapter.sha256", str),
    ("adapter.bytes", int),
    ("adapter.dtype", str),
    ("recipe.hash", str),
    ("recipe.training_data_sha256", str),
    ("build.command", str),
    ("build.liedar_version", str),
    ("build.seconds", (int, float)),
    ("build.threads", int),
    ("build.seed", int),
    ("ground_truth", dict),
    ("base_ground_truth", dict),
)


@dataclass(frozen=True)
class OrganismCard:
    """One shipped organism's card (``card.json``), as read and checked by `read_card`.

    Attributes
    ----------
    folder : Path
        The organism's folder (``zoo/<base>/<name>``); the adapter is in ``folder/adapter``.
    data : dict
        The card's JSON, every required field present, typed and finite.
    """

    folder: Path
    data: dict[str, Any] = field(repr=False)

    @property
    def name(self) -> str:
        return str(self.data["name"])

    @property
    def base_name(self) -> str:
        return str(self.data["base"]["name"])

    @property
    def base_fingerprint(self) -> str:
        return str(self.data["base"]["fingerprint"])

    @property
    def adapter_dir(self) -> Path:
        return self.folder / ADAPTER_DIR

    @property
    def adapter_sha256(self) -> str:
        return str(self.data["adapter"]["sha256"])

    @property
    def learned(self) -> bool:
        return bool(self.data["learned"])

    @property
    def headline(self) -> str:
        return str(self.data["headline"])

    @property
    def ground_truth(self) -> dict[str, dict]:
        return dict(self.data["ground_truth"])

    @property
    def base_ground_truth(self) -> dict[str, dict]:
        return dict(self.data["base_ground_truth"])

    @property
    def model_name(self) -> str:
        """The name to load it by: ``liedar.models.load(card.model_name)``."""
        return f"{self.base_name}:{self.name}"


def zoo_root() -> Optional[Path]:
    """Where shipped organisms are: ``$LIEDAR_ZOO``, else the ``zoo/`` folder of the source
    tree liedar runs from (an editable install or a clone); None when there is none.

    Why not package data: the adapters are tens of MB, and the core install (the black-box
    half, no torch) must stay small; a wheel user points ``LIEDAR_ZOO`` at a clone's ``zoo/``.
    """
    env = os.environ.get(ZOO_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise InputError(f"{ZOO_ENV}={env} is not a folder: point it at a liedar clone's zoo/ folder or unset it")
        return path
    here = Path(__file__).resolve().parents[1] / "zoo"
    return here if here.is_dir() else None


def _get(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(dotted)
        node = node[part]
    return node


def _check_estimate(where: str, e: Any) -> None:
    if not isinstance(e, dict):
        raise ValueError(f"{where} is not an estimate")
    for k in ("value", "lo", "hi"):
        v = e.get(k)
        if v is None:  # an estimate that could not be computed carries its reason instead
            if not e.get("note"):
                raise ValueError(f"{where}.{k} is missing")
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{where}.{k} is {v!r}, not a finite number")
    n = e.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"{where}.n is {n!r}, not a count")


def check_card(data: Any, where: str = "card") -> dict[str, Any]:
    """``data`` when it is a well-formed card; otherwise one-line `IncompatibleError`."""
    if not isinstance(data, dict):
        raise IncompatibleError(f"{where} is not a JSON object; restore it from the repository (git checkout)")
    if data.get("format") != CARD_FORMAT:
        raise IncompatibleError(
            f"{where} has format {data.get('format')!r}, not {CARD_FORMAT!r}; restore it from the repository"
        )
    for dotted, typ in _REQUIRED:
        try:
            value = _get(data, dotted)
        except KeyError:
            raise IncompatibleError(f"{where} lacks the field {dotted!r}; restore it from the repository") from None
        if isinstance(value, bool) and typ is not bool:
            value = None  # a bool is an int to isinstance; never a valid number here
        if not isinstance(value, typ):
            raise IncompatibleError(f"{where}: field {dotted!r} is {value!r}, not a {_type_name(typ)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise IncompatibleError(f"{where}: field {dotted!r} is {value}, not a finite number")
    try:
        for section in ("ground_truth", "base_ground_truth"):
            for key, e in data[section].items():
                _check_estimate(f"{section}.{key}", e)
    except ValueError as exc:
        raise IncompatibleError(f"{where}: {exc}; restore it from the repository") from None
    if data["headline"] not in data["ground_truth"]:
        raise IncompatibleError(f"{where}: headline {data['headline']!r} is not among its ground-truth numbers")
    return data


def _type_name(typ: type | tuple[type, ...]) -> str:
    return " or ".join(t.__name__ for t in typ) if isinstance(typ, tuple) else typ.__name__


def read_card(folder: Path) -> OrganismCard:
    """The card in ``folder`` (``card.json``), strictly checked (fields, types, finite numbers).

    Parameters
    ----------
    folder : Path
        A shipped organism's folder.

    Returns
    -------
    OrganismCard

    Raises
    ------
    IncompatibleError
        One line naming the problem: no card, not JSON, a missing/mistyped/non-finite field.
    """
    path = Path(folder) / CARD_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise IncompatibleError(f"{path} is missing; restore it from the repository (git checkout)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise IncompatibleError(
            f"{path} cannot be read ({type(exc).__name__}); restore it from the repository"
        ) from None
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except ValueError as exc:
        raise IncompatibleError(f"{path} is not valid JSON ({str(exc).splitlines()[0][:80]}); restore it") from None
    return OrganismCard(Path(folder), check_card(data, str(path)))


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a number a card may hold")


def check_adapter_matches(card: OrganismCard) -> None:
    """Refuse (one line) an adapter file whose size or sha256 differs from its card."""
    from liedar.models.lora import ADAPTER_FILE, read_adapter_meta
    from liedar.models.storage import sha256_file

    path = card.adapter_dir / ADAPTER_FILE
    if not path.is_file():
        raise IncompatibleError(f"{path} is missing; restore it from the repository (git checkout) or `git lfs pull`")
    size = path.stat().st_size
    if size != card.data["adapter"]["bytes"]:
        raise IncompatibleError(
            f"{path} has {size} bytes, its card says {card.data['adapter']['bytes']}: the file is damaged or "
            "not the one the card describes; restore it from the repository"
        )
    digest = sha256_file(path)
    if digest != card.adapter_sha256:
        raise IncompatibleError(
            f"{path} has sha256 {digest[:12]}..., its card says {card.adapter_sha256[:12]}...: the file is "
            "damaged or not the one the card describes; restore it from the repository"
        )
    read_adapter_meta(card.adapter_dir, file_sha256=digest)  # the adapter's own record agrees too


def shipped_cards(root: Optional[Path] = None) -> list[OrganismCard]:
    """Every card under the zoo (``<root>/<base>/<name>/card.json``), read strictly."""
    root = root or zoo_root()
    if root is None or not Path(root).is_dir():
        return []
    return [_placed_card(p) for p in sorted(Path(root).glob(f"*/*/{CARD_FILE}"))]


def _placed_card(path: Path) -> OrganismCard:
    """The card at ``<root>/<base>/<name>/card.json``, refused when it names another base.

    Why: the zoo's folders say which base model a card ships for; a card moved under another
    base's folder would be listed there as shipped, or verified against the wrong model.
    """
    card = read_card(path.parent)
    base_dir = path.parent.parent
    if Path(card.base_name).name != base_dir.name:  # a base given by its path ships under its folder's name
        raise IncompatibleError(
            f"{path} is a card for {card.base_name} but sits under {base_dir}/: move its folder to "
            f"{base_dir.parent / Path(card.base_name).name}/ (or restore the zoo from the repository)"
        )
    return card


def find_shipped(base_fingerprint: str, name: str, root: Optional[Path] = None) -> Optional[OrganismCard]:
    """The shipped card of organism ``name`` on the base with this fingerprint, or None."""
    root = root or zoo_root()
    if root is None:
        return None
    for path in sorted(Path(root).glob(f"*/{name}/{CARD_FILE}")):
        card = _placed_card(path)
        if card.base_fingerprint == base_fingerprint:
            return card
    return None


__all__ = [
    "CARD_FILE",
    "CARD_FORMAT",
    "OrganismCard",
    "check_adapter_matches",
    "check_card",
    "find_shipped",
    "read_card",
    "shipped_cards",
    "zoo_root",
]
