"""Build, cache and look up organisms: a LoRA adapter + its measured ground truth per (base, recipe).

Layout (under the liedar cache root)::

    organisms/index.json                                  (base fingerprint, name) -> entry
    organisms/<base fingerprint[:16]>/<name>-<recipe hash[:16]>/
        adapter/adapter.safetensors, adapter/adapter.json (size + sha256 of the weights)
        organism.json                                     recipe, training cost, ground truth

The organism folder is assembled in a temporary sibling and renamed into place in one step
(`liedar.core._util.atomic.atomic_dir`), and the index is rewritten atomically only after that,
so a build killed at any point leaves either no organism or a whole one (the stale
temporary folder is removed by the next build). The trained adapter is also saved
(atomically, in a hidden ``.trained-<name>-<hash>`` folder) before the ground truth is
measured: a build killed while measuring resumes from it without training again. A folder whose recipe hash matches is
reused; a changed recipe (data, seed, hyper-parameters, liedar version) builds a new one.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from liedar.core._util.atomic import atomic_dir, write_json_atomic
from liedar.core.errors import IncompatibleError, InputError
from liedar.models.adapters import INDEX_FORMAT, index_key, index_path, organisms_root, read_index
from liedar.models.backend import Backend
from liedar.models.lora import ADAPTER_FILE, LoraAdapter, read_adapter_meta
from liedar.organisms.recipe import ITEM_SCORES, Measured, Recipe, needs_reference
from liedar.organisms.zoo_recipes import ALL_RECIPES

ORGANISM_FILE = "organism.json"
FORMAT = "liedar-organism-1"


@dataclass
class Organism:
    name: str
    base: str  # the base model's name as given to build()
    base_fingerprint: str
    recipe_hash: str
    adapter_dir: Path
    behaviour: str
    targets: list[str]
    learned: bool
    criterion: str
    ground_truth: dict[str, dict]  # Estimate.to_dict() per measured quantity (held-out items)
    base_ground_truth: dict[str, dict] = field(default_factory=dict)  # the same measured on the base model
    training: dict[str, Any] = field(default_factory=dict)  # cost: seconds, tokens, losses, dtype
    recipe: dict[str, Any] = field(default_factory=dict)
    built_at: str = ""
    reused: bool = False  # True when build() found it in the cache

    @property
    def model_name(self) -> str:
        """The name to load it by: ``liedar.models.load(org.model_name)``."""
        return f"{self.base}:{self.name}"

    # stays hand-written: writes the constant format and the path as text; its reader takes adapter_dir
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "name": self.name,
            "base": self.base,
            "base_fingerprint": self.base_fingerprint,
            "recipe_hash": self.recipe_hash,
            "adapter_dir": str(self.adapter_dir),
            "behaviour": self.behaviour,
            "targets": list(self.targets),
            "learned": self.learned,
            "criterion": self.criterion,
            "ground_truth": self.ground_truth,
            "base_ground_truth": self.base_ground_truth,
            "training": self.training,
            "recipe": self.recipe,
            "built_at": self.built_at,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], adapter_dir: Optional[Path] = None) -> "Organism":
        return cls(
            name=d["name"],
            base=d["base"],
            base_fingerprint=d["base_fingerprint"],
            recipe_hash=d["recipe_hash"],
            adapter_dir=Path(adapter_dir or d["adapter_dir"]),
            behaviour=d.get("behaviour", ""),
            targets=list(d.get("targets", [])),
            learned=bool(d.get("learned", False)),
            criterion=d.get("criterion", ""),
            ground_truth=dict(d.get("ground_truth", {})),
            base_ground_truth=dict(d.get("base_ground_truth", {})),
            training=dict(d.get("training", {})),
            recipe=dict(d.get("recipe", {})),
            built_at=d.get("built_at", ""),
        )


def _recipe(name: str, recipe: Optional[Recipe]) -> Recipe:
    if recipe is not None:
        return recipe
    if name not in ALL_RECIPES:
        raise InputError(
            f"unknown organism {name!r}: choose one of {', '.join(ALL_RECIPES)} (see `liedar organism list`)"
        )
    return ALL_RECIPES[name]


def _folder(root: Path, fingerprint: str, name: str, recipe_hash: str) -> Path:
    return root / fingerprint[:16] / f"{name}-{recipe_hash[:16]}"


def _read_organism(folder: Path) -> Optional[Organism]:
    """The organism stored in `folder`, or None when absent or incomplete/damaged."""
    path = folder / ORGANISM_FILE
    if not path.is_file() or not (folder / "adapter" / ADAPTER_FILE).is_file():
        return None
    import json

    try:
        data = json.loads(path.read_text())
        if data.get("format") != FORMAT:
            return None
        read_adapter_meta(folder / "adapter")  # size + sha256
    except (OSError, ValueError, IncompatibleError, InputError):
        return None
    return Organism.from_dict(data, folder / "adapter")


def _clean_stale(parent: Path, max_age: float = 6 * 3600) -> None:
    """Remove temporary build folders older than `max_age` seconds (a killed build's)."""
    if not parent.is_dir():
        return
    now = time.time()
    for p in parent.iterdir():
        if p.name.startswith(".") and p.name.endswith(".tmp") and now - p.stat().st_mtime > max_age:
            shutil.rmtree(p, ignore_errors=True)


def _base_measured(rec: Recipe, split, backend, parent: Path, progress: bool) -> Measured:
    """The recipe's measurement on the base model, cached per (base, measurement): the two
    sandbaggers ask the same held-out questions, so the base is measured once for both. The
    per-item scores are kept beside the ground truth: a decoy stated over its base reads them."""
    import json

    path = parent / f"base-{rec.base_measure_hash(split)[:24]}.json"
    if path.is_file():
        try:
            data = json.loads(path.read_text())
            details = dict(data.get("details", {}))
            if data.get("base_fingerprint") == backend.fingerprint and (
                ITEM_SCORES in details or not needs_reference(rec.measure)
            ):
                return Measured(dict(data["ground_truth"]), False, "the base model", details)
        except (OSError, ValueError, KeyError):
            pass  # damaged (or kept without item scores): measured again and replaced
    measured = rec.measure(backend, split, progress=progress)
    details = {ITEM_SCORES: measured.details[ITEM_SCORES]} if ITEM_SCORES in measured.details else {}
    write_json_atomic(
        path, {"base_fingerprint": backend.fingerprint, "ground_truth": measured.ground_truth, "details": details}
    )
    return Measured(dict(measured.ground_truth), False, "the base model", details)


def _update_index(root: Path, org: Organism, d_model: int, n_layers: int) -> None:
    path = index_path(root.parent)
    entries = read_index(root.parent) if path.is_file() else {}
    entries[index_key(org.base_fingerprint, org.name)] = {
        "name": org.name,
        "base_name": org.base,
        "base_fingerprint": org.base_fingerprint,
        "recipe_hash": org.recipe_hash,
        "dir": str(org.adapter_dir.parent.relative_to(root)),
        "d_model": d_model,
        "n_layers": n_layers,
        "learned": org.learned,
        "behaviour": org.behaviour,
        "built_at": org.built_at,
    }
    write_json_atomic(path, {"format": INDEX_FORMAT, "entries": entries})


def _trained_adapter(
    rec: Recipe, split: Any, backend: Backend, trained: Path, *, force: bool, progress: bool
) -> tuple[LoraAdapter, bool]:
    """(adapter, resumed): the adapter kept in ``trained`` by an interrupted build of the same
    recipe on the same base, else a newly trained (or noise) one, kept there before returning.

    A trained adapter is kept (atomically) before the ground truth is measured, so a build
    interrupted while measuring resumes from it instead of training again."""
    adapter = None
    if trained.is_dir() and not force:
        try:
            adapter = LoraAdapter.load(trained)
            if adapter.base_fingerprint != backend.fingerprint:
                adapter = None
        except (IncompatibleError, InputError):
            adapter = None
    if adapter is not None:
        return adapter, True
    from liedar.models.lora import train_lora

    hyper = dict(rec.hyper)
    shutil.rmtree(trained, ignore_errors=True)
    if rec.trained:
        adapter = train_lora(backend, list(split.train), seed=rec.seed, progress=progress, **hyper)
    else:
        from liedar.models.lora import noise_adapter

        adapter = noise_adapter(backend, seed=rec.seed, **hyper["noise"])
    adapter.save(trained)
    return adapter, False


def _store(folder: Path, adapter: LoraAdapter, org: Organism) -> None:
    """Put the organism in ``folder`` in one step: assembled in a staged sibling, renamed into
    place, and an existing folder (``force``, or a damaged one) replaced only once the new one
    is complete."""
    staged = folder.with_name(f".{folder.name}.staged.tmp")
    shutil.rmtree(staged, ignore_errors=True)
    with atomic_dir(staged) as tmp:
        adapter.save(tmp / "adapter")
        write_json_atomic(tmp / ORGANISM_FILE, org.to_dict())
    old = folder.with_name(f".{folder.name}.old.tmp")
    if folder.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.rename(folder, old)
    os.rename(staged, folder)
    shutil.rmtree(old, ignore_errors=True)


def build(
    base: str,
    name: str,
    *,
    threads: int = 1,
    progress: bool = True,
    force: bool = False,
    recipe: Optional[Recipe] = None,
    backend: Optional[Backend] = None,
    measure_base: bool = True,
    store_dtype: Optional[str] = None,
) -> Organism:
    """Build organism `name` on base model `base` (cached; rebuilt only when its recipe hash
    changes, or with ``force``). ``backend`` may pass an already loaded transformers backend
    of `base` (saves a load); ``recipe`` overrides the catalog's (tests, experiments).
    ``store_dtype="float16"`` rounds the adapter to the dtype it will ship in before it is
    measured, so `liedar.organisms.shipped.export` can take the build's measurement as the
    shipped file's own instead of measuring again."""
    rec = _recipe(name, recipe).for_base(base)
    if not rec.needs_base:  # checked before the model is loaded
        split = rec.split()  # raises on an empty training split or an overlapping evaluation split
    if backend is None:
        from liedar.models import load

        backend = load(base, backend="transformers", n_threads=threads)
    if getattr(backend, "kind", None) != "transformers":
        raise InputError("organisms are trained on a transformers backend: load the base with backend='transformers'")
    if rec.needs_base:
        split = rec.split(backend)
    recipe_hash = rec.recipe_hash(split)
    root = organisms_root()
    parent = root / backend.fingerprint[:16]
    folder = _folder(root, backend.fingerprint, rec.name, recipe_hash)
    if not force:
        found = _read_organism(folder)
        if found is not None:
            found.reused = True
            _update_index(root, found, backend.d_model, backend.n_layers)  # the newest recipe is the one loaded
            return found
    _clean_stale(parent)
    from liedar.models.lora import apply_adapter

    t0 = time.perf_counter()
    trained = parent / f".trained-{rec.name}-{recipe_hash[:16]}"
    adapter, resumed = _trained_adapter(rec, split, backend, trained, force=force, progress=progress)
    if store_dtype is not None:
        adapter = adapter.stored_as(store_dtype)
    merged = apply_adapter(backend, adapter, name=f"{base}:{rec.name}")
    t1 = time.perf_counter()
    on_base = (
        _base_measured(rec, split, backend, parent, progress) if measure_base or needs_reference(rec.measure) else None
    )
    measured = rec.measure_organism(merged, split, lambda: on_base, progress)
    base_gt = on_base.ground_truth if measure_base and on_base is not None else {}
    t2 = time.perf_counter()
    del merged
    training = dict(adapter.meta)
    training["build_seconds_train"] = t1 - t0
    training["build_seconds_measure"] = t2 - t1
    training["threads"] = threads
    training["resumed_from_trained_adapter"] = resumed
    training["measured_dtype"] = store_dtype or "float32"
    training["load_average"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    org = Organism(
        name=rec.name,
        base=base,
        base_fingerprint=backend.fingerprint,
        recipe_hash=recipe_hash,
        adapter_dir=folder / "adapter",
        behaviour=rec.behaviour,
        targets=list(rec.targets),
        learned=measured.learned,
        criterion=measured.criterion,
        ground_truth=measured.ground_truth,
        base_ground_truth=base_gt,
        training=training,
        recipe={
            **rec.describe(),
            "n_train_examples": len(split.train),
            "n_train_items": len(split.train_ids),
            "n_eval_items": len(split.eval_ids),
        },
        built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    _store(folder, adapter, org)
    shutil.rmtree(trained, ignore_errors=True)
    _update_index(root, org, backend.d_model, backend.n_layers)
    return org


def built(base: str, *, backend: Optional[Backend] = None) -> list[Organism]:
    """Every organism built on `base` whose files verify (the newest recipe of each name)."""
    fingerprint = model_fingerprint(base, backend)
    root = organisms_root()
    out = []
    for entry in read_index().values():
        if entry.get("base_fingerprint") != fingerprint:
            continue
        org = _read_organism(root / entry["dir"])
        if org is not None:
            out.append(org)
    return sorted(out, key=lambda o: o.name)


def get(base: str, name: str, *, backend: Optional[Backend] = None) -> Organism:
    """The built organism `name` on `base` (one-line error when unknown, not built or corrupt)."""
    fingerprint = model_fingerprint(base, backend)
    entry = read_index().get(index_key(fingerprint, name))
    if entry is None:
        if name not in ALL_RECIPES:
            raise InputError(f"unknown organism {name!r}: choose one of {', '.join(ALL_RECIPES)}")
        raise InputError(
            f"organism {name!r} is not built for {base}: run `liedar organism build {name} --model {base}`"
        )
    folder = organisms_root() / entry["dir"]
    read_adapter_meta(folder / "adapter")  # raises a one-line IncompatibleError when corrupt
    org = _read_organism(folder)
    if org is None:
        raise IncompatibleError(f"organism {name!r} in {folder} is incomplete or damaged; rebuild it with --force")
    return org


def model_fingerprint(base: str, backend: Optional[Backend] = None) -> str:
    """The fingerprint organisms are filed under for base model ``base``.

    Why a function of its own: built organisms, shipped cards and the ``organism``
    commands all key on the base model's identity, and must agree on it without loading
    the model when it is not loaded yet (hashing the files is cheap next to loading them).

    Parameters
    ----------
    base : str
        A model name or path, as `liedar.models.load` takes it.
    backend : Backend, optional
        The model already loaded from ``base``; its own ``fingerprint`` is returned.

    Returns
    -------
    str
        The GGUF file's sha256, or the fingerprint of the transformers folder
        (`liedar.models.hf.folder_fingerprint`): what ``backend.fingerprint`` reports.
    """
    if backend is not None:
        return backend.fingerprint
    from liedar.models.registry import resolve
    from liedar.models.storage import sha256_file

    source = resolve(base)
    if source.format == "gguf":
        return sha256_file(source.path)
    from liedar.models.hf import folder_fingerprint

    return folder_fingerprint(source.path)
