"""``base:organism`` model names: find a built organism's adapter in the cache and merge it.

Why here and not in `liedar.organisms`: every place that accepts a model name goes through
`liedar.models.load`, and the models layer must not import the organisms layer above it.
The organism builder writes a small JSON index (``organisms/index.json`` under the cache
root) mapping (base model fingerprint, organism name) to the adapter folder; this module
reads only that index and the adapter files, so ``load("smollm2-135m:sandbagger")`` works
everywhere without knowing how organisms are trained.

Every refusal is one line: an unknown organism name, an organism built for another base
model (fingerprint) or width, a corrupt adapter (size + sha256 recorded at write time).
Nothing in the cache is deleted by a failed load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from liedar.core.errors import IncompatibleError, InputError
from liedar.models.storage import cache_root

INDEX_FORMAT = "liedar-organism-index-1"


def organisms_root(root: Optional[Path] = None) -> Path:
    return Path(root or cache_root()) / "organisms"


def index_path(root: Optional[Path] = None) -> Path:
    return organisms_root(root) / "index.json"


def read_index(root: Optional[Path] = None) -> dict[str, dict[str, Any]]:
    """key "<base fingerprint>/<name>" -> entry (empty when nothing was built)."""
    path = index_path(root)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise IncompatibleError(
            f"the organism index {path} is damaged ({type(exc).__name__}); rebuild with `liedar organism build`"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT:
        raise IncompatibleError(f"{path} is not a liedar organism index; rebuild with `liedar organism build`")
    return dict(data.get("entries", {}))


def index_key(base_fingerprint: str, name: str) -> str:
    return f"{base_fingerprint}/{name}"


def split_name(name_or_path: str) -> Optional[tuple[str, str]]:
    """("smollm2-135m", "sandbagger") for "smollm2-135m:sandbagger"; None for plain names
    and for existing paths (a file or folder whose name contains a colon is still a path)."""
    text = str(name_or_path)
    if ":" not in text or Path(text).expanduser().exists():
        return None
    base, _, organism = text.rpartition(":")
    if not base or not organism or "/" in organism or "\\" in organism:
        return None
    return base, organism


def find(backend, name: str, root: Optional[Path] = None) -> dict[str, Any]:
    """The index entry of organism `name` built on this backend's base model."""
    entries = read_index(root)
    entry = entries.get(index_key(backend.fingerprint, name))
    if entry is not None:
        return entry
    others = [e for e in entries.values() if e.get("name") == name]
    if others:
        bases = sorted({str(e.get("base_name") or e.get("base_fingerprint", "?")[:12]) for e in others})
        raise IncompatibleError(
            f"organism {name!r} was built for base model {', '.join(bases)}, not for {backend.name} "
            f"(fingerprint {backend.fingerprint[:12]}...): run `liedar organism build {name} --model {backend.name}`"
        )
    here = sorted(e["name"] for e in entries.values() if e.get("base_fingerprint") == backend.fingerprint)
    built = f"built for this model: {', '.join(here)}" if here else "none is built for this model yet"
    raise InputError(
        f"unknown organism {name!r} for {backend.name} ({built}); see `liedar organism list` and "
        f"`liedar organism build NAME --model {backend.name}`"
    )


def adapter_dir(entry: dict[str, Any], root: Optional[Path] = None) -> Path:
    return organisms_root(root) / entry["dir"] / "adapter"


def _shipped_entry(backend, name: str) -> Optional[dict[str, Any]]:
    """The shipped organism ``name`` for this base (card and adapter checked), or None.

    Why shipped first: the files in the repository are the ground truth every user audits
    (the same bytes, a card measured on them); a rebuild in the cache is for comparing
    (`liedar organism build --compare`) and is used only for organisms nothing ships."""
    from liedar.models.cards import check_adapter_matches, find_shipped, zoo_root

    card = find_shipped(backend.fingerprint, name)
    if card is None:
        root = zoo_root()
        elsewhere = sorted(root.glob(f"*/{name}/card.json")) if root is not None else []
        if elsewhere and not read_index().get(index_key(backend.fingerprint, name)):
            from liedar.models.cards import read_card

            bases = sorted(read_card(p.parent).base_name for p in elsewhere)
            raise IncompatibleError(
                f"organism {name!r} ships for base model {', '.join(bases)}, not for {backend.name} "
                f"(fingerprint {backend.fingerprint[:12]}...): load it on {bases[0]}, or build it for this "
                f"model with `liedar organism build {name} --model {backend.name}`"
            )
        return None
    check_adapter_matches(card)
    if card.data["base"]["d_model"] != backend.d_model or card.data["base"]["n_layers"] != backend.n_layers:
        raise IncompatibleError(
            f"organism {name!r}'s card is for a model of width {card.data['base']['d_model']} and "
            f"{card.data['base']['n_layers']} blocks; {backend.name} has {backend.d_model} and {backend.n_layers}"
        )
    return {
        "name": name,
        "base_name": card.base_name,
        "recipe_hash": card.data["recipe"]["hash"],
        "learned": card.learned,
        "adapter_dir": card.adapter_dir,
        "shipped": True,
    }


def card_folder(path: Any) -> Optional[Path]:
    """``path`` when it is an organism's card folder (``card.json`` beside ``adapter/``), else None.

    Why: a zoo member (``zoo/audit/<base>/<name>``) is named by its folder, not by a
    ``base:name`` that `find_shipped` would look up under ``zoo/<base>/``; the audit and a
    user with a folder someone sent them load it the same way.

    Parameters
    ----------
    path : str or Path
        Anything a user may give as a model.

    Returns
    -------
    Path or None
        The folder, resolved, when it holds ``card.json`` and ``adapter/``.

    Raises
    ------
    Nothing: a path that is not a card folder gives None.

    Examples
    --------
    >>> card_folder("smollm2-135m") is None
    True
    """
    folder = Path(str(path)).expanduser()
    if folder.is_dir() and (folder / "card.json").is_file() and (folder / "adapter").is_dir():
        return folder.resolve()
    return None


def attach_card(backend, folder: Path):
    """The organism in card folder ``folder`` merged onto ``backend`` (its base model).

    The card is read strictly and its adapter checked against it (size, sha256, the
    adapter's own record) before any weight is touched; a card for another base model or
    width is refused in one line.

    Parameters
    ----------
    backend : Backend
        The loaded base model (transformers; llama.cpp applies the adapter at run time).
    folder : Path
        A card folder (`card_folder`).

    Returns
    -------
    Backend
        The merged model, named ``<base>:<folder name>``; ``organism`` holds the card's name,
        recipe hash, learned flag and adapter folder.

    Raises
    ------
    liedar.core.errors.IncompatibleError
        A damaged card, an adapter that is not the card's, another base model or width.

    Examples
    --------
    >>> lm = attach_card(load("smollm2-135m"), Path("zoo/smollm2-135m/sycophant"))  # doctest: +SKIP
    """
    from liedar.models.cards import check_adapter_matches, read_card

    card = read_card(Path(folder))
    check_adapter_matches(card)
    if card.base_fingerprint != backend.fingerprint:
        raise IncompatibleError(
            f"{folder} is an organism of base model {card.base_name} (fingerprint {card.base_fingerprint[:12]}...), "
            f"not of {backend.name} ({backend.fingerprint[:12]}...): load it on {card.base_name}"
        )
    if card.data["base"]["d_model"] != backend.d_model or card.data["base"]["n_layers"] != backend.n_layers:
        raise IncompatibleError(
            f"{folder}'s card is for a model of width {card.data['base']['d_model']} and "
            f"{card.data['base']['n_layers']} blocks; {backend.name} has {backend.d_model} and {backend.n_layers}"
        )
    label = f"{card.base_name}:{Path(folder).name}"
    info = {
        "name": card.name,
        "recipe_hash": card.data["recipe"]["hash"],
        "learned": card.learned,
        "adapter_dir": str(card.adapter_dir),
        "shipped": True,
    }
    if backend.kind == "llamacpp":
        from liedar.models.lora_gguf import attach_llamacpp

        organism = attach_llamacpp(backend, card.adapter_dir, name=label)
        organism.organism.update(info)
        return organism
    from liedar.models.lora import apply_adapter

    organism = apply_adapter(backend, card.adapter_dir, name=label, copy_model=False)
    organism.organism = info
    return organism


def attach(backend, name: str, *, root: Optional[Path] = None):
    """The organism `name` on top of an already loaded base backend (adapter merged): the
    shipped one (`liedar.models.cards`) when the repository has it, else the cache's build."""
    entry = _shipped_entry(backend, name) if root is None else None
    if entry is not None:
        folder = Path(entry["adapter_dir"])
    else:
        entry = find(backend, name, root)
        folder = adapter_dir(entry, root)
    label = f"{entry.get('base_name') or backend.name}:{name}"
    if backend.kind == "llamacpp":  # runtime LoRA on the quantized weights (see models.lora_gguf)
        from liedar.models.lora_gguf import attach_llamacpp

        organism = attach_llamacpp(backend, folder, name=label)
        organism.organism.update(
            {
                "name": name,
                "recipe_hash": entry.get("recipe_hash"),
                "learned": entry.get("learned"),
                "shipped": bool(entry.get("shipped")),
            }
        )
        return organism
    from liedar.models.lora import apply_adapter

    organism = apply_adapter(backend, folder, name=label, copy_model=False)
    organism.organism = {
        "name": name,
        "recipe_hash": entry.get("recipe_hash"),
        "learned": entry.get("learned"),
        "adapter_dir": str(folder),
        "shipped": bool(entry.get("shipped")),
    }
    return organism
