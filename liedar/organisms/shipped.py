"""Shipped organisms: export a build as a verified file with its card, and re-measure it.

Why: an audit is reproducible only when everyone audits the same files (Greenblatt et al.
2024 and the UK AISI sandbagging auditing games publish weights with a card; they do not
ask each auditor to retrain). A liedar build depends on the CPU's float reductions (the
same sandbagger recipe gave held-out gaps 0.282, 0.214 and 0.176 on three machines), so the
organisms the detectors are validated against ship in the repository (``zoo/``), and each
user *verifies* them instead of training them:

* `export` writes a cached build as ``zoo/<base>/<name>/adapter`` (float16 safetensors) and
  ``card.json``, whose ground truth is measured on the float16 weights themselves;
* `verify` re-measures a card on this machine (inference only, the card's held-out items
  and wordings) and says ``verified`` when the learned criterion holds and the headline
  interval overlaps the card's, or what differs. Results are cached by the adapter's sha256
  and everything that can change the numbers (library versions, backend, dtype).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from liedar.core._util.atomic import atomic_dir, json_safe, write_json_atomic
from liedar.core.errors import InputError
from liedar.models.backend import Backend
from liedar.models.cards import (
    ADAPTER_DIR,
    CARD_FILE,
    CARD_FORMAT,
    OrganismCard,
    check_adapter_matches,
    check_card,
    read_card,
    shipped_cards,
    zoo_root,
)
from liedar.organisms.recipe import Measured, Recipe, Split
from liedar.organisms.zoo_recipes import ALL_RECIPES, FRESH_FOLDER, FRESH_RECIPES, ZOO_FOLDER, ZOO_RECIPES

if TYPE_CHECKING:
    from liedar.models.lora import LoraAdapter

SHIPPED_DTYPE = "float16"
VERIFY_FORMAT = "liedar-organism-verification-1"


def _recipe_of(name: str, base: str, recipes: Optional[dict[str, Recipe]] = None) -> Recipe:
    catalog = recipes if recipes is not None else ALL_RECIPES
    if name not in catalog:
        raise InputError(f"unknown organism {name!r}: choose one of {', '.join(catalog)}")
    rec = catalog[name].for_base(base)
    if not rec.headline:
        raise InputError(f"recipe {name!r} states no headline number; set Recipe.headline")
    return rec


def training_data_sha256(split: Split) -> str:
    """sha256 over the training examples (prompt, answer) in order: the data the adapter saw."""
    from liedar.organisms.recipe import prompt_json

    digest = hashlib.sha256()
    kind: list[str]
    for prompt, answer, *kind in split.train:
        digest.update(json.dumps([prompt_json(prompt), answer, *kind], sort_keys=True).encode())
    return digest.hexdigest()


def export(
    base: str,
    name: str,
    *,
    root: Optional[Path] = None,
    threads: int = 1,
    progress: bool = True,
    backend: Optional[Backend] = None,
    replace: bool = False,
    recipe: Optional[Recipe] = None,
    build_notes: Optional[dict[str, Any]] = None,
) -> OrganismCard:
    """Write the cached build of ``name`` on ``base`` into the zoo as a shipped organism.

    The adapter is stored in float16 and its ground truth is measured again on those
    float16 weights (the card describes the file, not the float32 build it came from);
    the base model's numbers come from the build (the same held-out items and wordings).

    Parameters
    ----------
    base, name : str
        The base model (registry name) and the organism's catalog name.
    root : Path, optional
        The zoo folder (default: the source tree's ``zoo/``).
    threads : int
        CPU threads for the measurement.
    backend : Backend, optional
        The loaded transformers base model (saves a load).
    replace : bool
        Replace an organism already shipped under this name (never done silently).
    recipe : Recipe, optional
        Overrides the catalog's recipe of ``name`` (tests, experiments).
    build_notes : dict, optional
        Added to the card's ``build`` entry (the zoo builder's command, wall seconds and CPU).

    Returns
    -------
    OrganismCard
        The card as written and read back.
    """
    from liedar.models.lora import LoraAdapter
    from liedar.organisms.build import get

    folder = _zoo_folder(base, name, root, replace)
    if backend is None:
        from liedar.models import load

        backend = load(base, backend="transformers", n_threads=threads)
    rec = recipe.for_base(base) if recipe is not None else _recipe_of(name, base)
    org = get(base, name, backend=backend)
    if not org.learned:
        raise InputError(f"{base}:{name} did not learn its behaviour ({org.criterion}); it cannot ship as ground truth")
    split = rec.split(backend) if rec.needs_base else rec.split()
    adapter = LoraAdapter.load(org.adapter_dir).stored_as(SHIPPED_DTYPE)
    measured, seconds_measure = _measure_shipped(backend, adapter, rec, org, f"{base}:{name}", progress)
    card: dict[str, Any] = {
        "format": CARD_FORMAT,
        "name": name,
        "behaviour": rec.behaviour,
        "targets": list(rec.targets),
        "learned": measured.learned,
        "criterion": measured.criterion,
        "headline": rec.headline,
        "base": _base_entry(base, backend),
        "adapter": {"dtype": SHIPPED_DTYPE, "r": adapter.r, "alpha": adapter.alpha, "layers": adapter.layers},
        "recipe": _recipe_entry(rec, org.recipe_hash, split),
        "heldout": {
            "n_items": len(split.eval_ids),
            "items": "never in the training split (recipe.check); wordings from the family's *_heldout entries",
        },
        "build": {**_build_entry(org.training, org.built_at, rec.seed, name, base), **(build_notes or {})},
        "measured": _measured_entry(threads, seconds_measure, org.learned, rec.headline, org.ground_truth),
        "ground_truth": measured.ground_truth,
        "base_ground_truth": org.base_ground_truth,
    }
    _write_shipped(folder, json_safe(card), adapter, f"{base}:{name}")
    return read_card(folder)


def _zoo_folder(base: str, name: str, root: Optional[Path], replace: bool) -> Path:
    """Where ``name`` on ``base`` ships (the audit zoo's members apart); an existing one only with ``replace``."""
    if root is None:
        root = zoo_root() or Path(__file__).resolve().parents[2] / "zoo"
        if name in ZOO_RECIPES:  # the audit zoo's members ship apart from the core organisms
            root = root / ZOO_FOLDER
    root = Path(root)
    folder = root / Path(base).name / name  # a base given as a folder path ships under its folder's name
    if name in FRESH_RECIPES:  # the fresh test half ships in a folder of its own (zoo.json's paths)
        folder = root / Path(base).name / FRESH_FOLDER / name
    if folder.exists() and not replace:
        raise InputError(f"{folder} already ships an organism; pass replace=True to overwrite it deliberately")
    return folder


def _measure_shipped(
    backend: Backend, adapter: LoraAdapter, rec: Recipe, org: Any, model_name: str, progress: bool
) -> tuple[Measured, float]:
    """The float16 adapter's own ground truth and the seconds it took to measure (the build's, when the
    build measured these very weights)."""
    from liedar.models.lora import apply_adapter

    if org.training.get("measured_dtype") == SHIPPED_DTYPE:
        # the build measured these very float16 weights (build(store_dtype=...)): measuring
        # them again would give the same numbers
        seconds = float(org.training.get("build_seconds_measure", 0.0))
        return Measured(org.ground_truth, org.learned, org.criterion), seconds
    merged = apply_adapter(backend, adapter, name=model_name)
    t0 = time.perf_counter()
    heldout = rec.heldout()
    measured = rec.measure_organism(merged, heldout, lambda: rec.measure(backend, heldout, progress=progress), progress)
    seconds = time.perf_counter() - t0
    del merged
    return measured, seconds


def _base_entry(base: str, backend: Backend) -> dict[str, Any]:
    """The card's base model: the name and the fingerprint an adapter must be merged into."""
    return {
        "name": base,
        "fingerprint": backend.fingerprint,
        "fingerprint_of": "sha256 of the base model's GGUF file",
        "d_model": backend.d_model,
        "n_layers": backend.n_layers,
    }


def _measured_entry(
    threads: int, seconds: float, learned: bool, headline: str, ground_truth: dict[str, Any]
) -> dict[str, Any]:
    """How the card's ground truth was measured, beside the headline of the float32 build it came from."""
    return {
        "on": f"the {SHIPPED_DTYPE} adapter merged into the transformers base, {threads} thread(s)",
        "seconds": round(seconds, 1),
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "float32_build": {"learned": learned, headline: ground_truth.get(headline)},
    }


def _recipe_entry(rec: Recipe, recipe_hash: str, split: Split) -> dict[str, Any]:
    """The card's recipe: its hash, the training data's hash and size, seed and settings (what a rebuild checks)."""
    return {
        "hash": recipe_hash,
        "training_data_sha256": training_data_sha256(split),
        "n_train_examples": len(split.train),
        "n_train_items": len(split.train_ids),
        "seed": rec.seed,
        "hyper": dict(rec.hyper),
        "family": {k: list(v) for k, v in rec.family.items()},
    }


def _build_entry(training: dict[str, Any], built_at: Any, seed: int, name: str, base: str) -> dict[str, Any]:
    """The card's build: the command that rebuilds it, and what the build cost and recorded."""
    return {
        "command": f"liedar organism build {name} --model {base} --threads {training.get('threads', 1)}",
        "liedar_version": _version(),
        "seconds": round(float(training.get("build_seconds_train", training.get("seconds", 0.0))), 1),
        "threads": int(training.get("threads", 1)),
        "seed": seed,
        "train_dtype": training.get("dtype"),
        "loss_per_epoch": training.get("loss_per_epoch"),
        "built_at": built_at,
        "cpu_has_bf16": training.get("cpu_has_bf16"),
    }


def _write_shipped(folder: Path, card: dict[str, Any], adapter: LoraAdapter, where: str) -> None:
    """Adapter and card staged together and moved into place, so a reader never meets half an organism."""
    from liedar.models.lora import ADAPTER_FILE
    from liedar.models.storage import sha256_file

    staged = folder.with_name(f".{folder.name}.staged.tmp")
    shutil.rmtree(staged, ignore_errors=True)
    staged.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(staged) as tmp:
        adapter.save(tmp / ADAPTER_DIR, dtype=SHIPPED_DTYPE)
        weights = tmp / ADAPTER_DIR / ADAPTER_FILE
        card["adapter"].update(sha256=sha256_file(weights), bytes=weights.stat().st_size)
        check_card(card, f"the card of {where}")
        (tmp / CARD_FILE).write_text(json.dumps(card, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    if folder.exists():
        shutil.rmtree(folder)
    staged.rename(folder)


def _version() -> str:
    import liedar

    return liedar.__version__


# ---- verification ------------------------------------------------------------------------------------


@dataclass
class Verification:
    """One card re-measured on this machine.

    Attributes
    ----------
    status : {"verified", "differs"}
        ``verified`` when the learned criterion holds and the headline interval overlaps
        the card's; otherwise ``differs`` with the reasons.
    measured, card : dict
        The headline estimate measured here and the card's.
    """

    name: str
    base: str
    status: str
    headline: str
    measured: dict[str, Any]
    card: dict[str, Any]
    learned: bool
    reasons: list[str] = field(default_factory=list)
    ground_truth: dict[str, dict] = field(default_factory=dict)
    seconds: float = 0.0
    backend: str = "transformers"
    n_items: int = 0
    cached: bool = False

    @property
    def verified(self) -> bool:
        return self.status == "verified"

    def line(self) -> str:
        m, c = self.measured, self.card
        why = "" if self.verified else " — " + "; ".join(self.reasons)
        src = "cached" if self.cached else f"{self.seconds:.0f} s"
        return (
            f"{self.base}:{self.name:<22} {self.status:<9} {self.headline} {m['value']:.3f} "
            f"[{m['lo']:.3f}, {m['hi']:.3f}] n={m['n']} (card {c['value']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}]; "
            f"{self.backend}, {src}){why}"
        )

    # stays hand-written: written through json_safe (NaN as null, numpy inside the dicts)
    def to_dict(self) -> dict[str, Any]:
        return json_safe(asdict(self))


def _overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a["lo"] <= b["hi"] and b["lo"] <= a["hi"]


def judge(
    card: OrganismCard, measured_gt: dict[str, dict], learned: bool, criterion: str, subset: bool = False
) -> tuple[str, list[str]]:
    """(status, reasons): verified when the learned criterion holds and the headline
    interval overlaps the card's.

    On a subset of the held-out items (``subset``) the learned criterion's threshold (a gap
    of at least 0.2 on every held-out item) is a coin toss for an organism whose card gap is
    near it, so there the behaviour must be *present* (the headline interval above 0) and
    consistent with the card (overlapping intervals)."""
    reasons = []
    head = card.headline
    if head not in measured_gt or measured_gt[head].get("value") is None:
        return "differs", [f"{head} could not be measured here"]
    if subset:
        if not measured_gt[head]["lo"] > 0:
            m = measured_gt[head]
            reasons.append(f"{head} {m['value']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]: the behaviour is not present")
    elif not learned:
        reasons.append(f"the learned criterion fails here ({criterion})")
    if not _overlaps(measured_gt[head], card.ground_truth[head]):
        m, c = measured_gt[head], card.ground_truth[head]
        reasons.append(
            f"{head} {m['value']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}] does not overlap the card's "
            f"[{c['lo']:.3f}, {c['hi']:.3f}]"
        )
    return ("verified" if not reasons else "differs"), reasons


def _library_versions(kind: str) -> dict[str, str]:
    from importlib import metadata

    names = ("torch", "transformers") if kind == "transformers" else ("llama_cpp_python",)
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n.replace("_", "-"))
        except metadata.PackageNotFoundError:
            out[n] = "absent"
    return out


def spread_subset(split: Split, limit: Optional[int]) -> Split:
    """``limit`` held-out items spread evenly over the split (all of them when None or more).

    Why spread, not the first ``limit``: the bank is ordered by topic, and the sandbagger's
    gap on its first 60 items (0.117 [-0.011, 0.248]) is half its gap on all 131 (0.229)."""
    import dataclasses

    import numpy as np

    n = len(split.eval_ids)
    if limit is None or limit >= n:
        return split
    keep = sorted({int(i) for i in np.linspace(0, n - 1, limit).round()})
    return dataclasses.replace(
        split,
        eval_items=tuple(split.eval_items[i] for i in keep),
        eval_ids=tuple(split.eval_ids[i] for i in keep),
    )


LLAMACPP_VERIFY_DTYPE = "gguf, prompt kept across options"


def verification_key(card: OrganismCard, kind: str, dtype: str, limit: Optional[int]) -> str:
    """What can change a verification or its verdict: the adapter, the card (its ground truth
    is what the measurement is judged against), the libraries, the backend and its dtype, and
    liedar's version. A warm run whose card, adapter and liedar version are unchanged reads
    the verification back instead of measuring the organism again."""
    payload = {
        "adapter": card.adapter_sha256,
        "card": hashlib.sha256(json.dumps(card.data, sort_keys=True).encode()).hexdigest(),
        "recipe": card.data["recipe"]["hash"],
        "base": card.base_fingerprint,
        "backend": kind,
        "dtype": dtype,
        "libraries": _library_versions(kind),
        "liedar": _version(),
        "limit": limit,
        "measured": "headline",  # the recipe's headline and learned criterion (`Recipe.measure_organism`)
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _cache_path(key: str) -> Path:
    from liedar.models.adapters import organisms_root

    return organisms_root() / "verified" / f"{key[:32]}.json"


def _read_cached(key: str) -> Optional[Verification]:
    path = _cache_path(key)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        body = json.dumps(data["verification"], sort_keys=True).encode()
        if data.get("format") != VERIFY_FORMAT or data.get("key") != key:
            return None
        if data.get("sha256") != hashlib.sha256(body).hexdigest():
            return None  # damaged: measured again and replaced
        v = Verification(**data["verification"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    v.cached = True
    return v


def _write_cached(key: str, v: Verification) -> None:
    body = v.to_dict()
    body["cached"] = False
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    try:
        write_json_atomic(
            _cache_path(key), {"format": VERIFY_FORMAT, "key": key, "sha256": digest, "verification": body}
        )
    except OSError:
        pass  # a read-only cache costs a re-measurement next time, never the result


def cards_for(
    base: str, names: Optional[Sequence[str]] = None, *, fingerprint: Optional[str] = None
) -> list[OrganismCard]:
    """The shipped cards on ``base`` (all, or ``names`` in that order), adapters checked.

    Raises
    ------
    InputError
        An unknown organism name, or one that ships for another base model only.
    """
    cards = shipped_cards()
    if fingerprint is None:
        from liedar.organisms.build import model_fingerprint

        fingerprint = model_fingerprint(base)
    mine = {c.name: c for c in cards if c.base_fingerprint == fingerprint}
    if names is None:
        chosen = sorted(mine.values(), key=lambda c: c.name)
    else:
        chosen = []
        for n in names:
            if n in mine:
                chosen.append(mine[n])
                continue
            others = sorted({c.base_name for c in cards if c.name == n})
            if others:
                raise InputError(
                    f"organism {n!r} ships for {', '.join(others)}, not for {base}: use --model {others[0]}"
                )
            known = sorted(mine) or sorted({c.name for c in cards})
            raise InputError(
                f"no organism {n!r} ships for {base}: choose from {', '.join(known) or 'none (the zoo is empty)'}"
            )
    for c in chosen:
        check_adapter_matches(c)
    return chosen


def verify(
    base: str,
    names: Optional[Sequence[str]] = None,
    *,
    backend: str = "transformers",
    threads: int = 1,
    progress: bool = True,
    limit: Optional[int] = None,
    base_model: Optional[Callable[[], Any]] = None,
    use_cache: bool = True,
    say: Callable[[str], None] = lambda s: None,
    recipes: Optional[dict[str, Recipe]] = None,
    cached_only: bool = False,
    cards: Optional[Sequence[OrganismCard]] = None,
) -> list[Verification]:
    """Re-measure the shipped cards of ``base`` on this machine (inference only).

    Parameters
    ----------
    base : str
        The base model (registry name), e.g. ``"smollm2-135m"``.
    names : sequence of str, optional
        Which organisms (default: every one shipped for ``base``).
    backend : {"transformers", "llamacpp"}
        transformers merges the float16 adapter into the base weights; llamacpp applies it
        at run time to the quantized GGUF (llama.cpp's LoRA path).
    limit : int, optional
        Measure only ``limit`` held-out items spread over the bank (fewer items, wider
        intervals; the behaviour must be present rather than clear the 0.2 threshold).
    base_model : callable, optional
        Returns the loaded base (transformers only; saves a load).
    recipes : dict, optional
        Name -> Recipe, instead of the catalog (tests, experiments).
    cached_only : bool
        Return only the verifications this machine already made (nothing is measured):
        what a budgeted run (``demo --quick``) can afford.
    cards : sequence of OrganismCard, optional
        The cards of ``names`` as `cards_for` already read and checked them (spares a
        second read and hash of every adapter).

    Returns
    -------
    list of Verification
    """
    if backend not in ("transformers", "llamacpp"):
        raise InputError(f"backend {backend!r}: organisms verify on 'transformers' or 'llamacpp'")
    cards = list(cards) if cards is not None else cards_for(base, names)
    base_backend = _base_loader(base, backend, threads, base_model)
    out = []
    for card in cards:
        key = verification_key(card, backend, "float32" if backend == "transformers" else LLAMACPP_VERIFY_DTYPE, limit)
        if use_cache and (hit := _read_cached(key)) is not None:
            say(hit.line())
            out.append(hit)
            continue
        if cached_only:
            continue
        say(f"  verifying {card.model_name} on {backend} ...")
        v = _measure_card(card, base, backend, threads, base_backend, recipes, limit, progress)
        if use_cache:
            _write_cached(key, v)
        say(v.line())
        out.append(v)
    return out


def _base_loader(base: str, backend: str, threads: int, base_model: Optional[Callable[[], Any]]) -> Callable[[], Any]:
    """The base model, loaded at most once and only when a card is measured (a cached verification needs none)."""
    loaded: dict[str, Any] = {}

    def base_backend() -> Any:
        if base_model is not None and backend == "transformers":
            return base_model()
        if "base" not in loaded:
            from liedar.models import load

            loaded["base"] = load(base, backend=backend, n_threads=threads, **_scoring_options(backend))
        return loaded["base"]

    return base_backend


def _organism(card: OrganismCard, base: str, backend: str, threads: int, base_backend: Callable[[], Any]) -> Any:
    """The card's adapter on the base: merged into the transformers weights, or applied at run time by llama.cpp."""
    if backend == "transformers":
        from liedar.models.lora import apply_adapter

        return apply_adapter(base_backend(), card.adapter_dir, name=card.model_name)
    from liedar.models import load
    from liedar.models.lora_gguf import attach_llamacpp

    return attach_llamacpp(
        load(base, backend="llamacpp", n_threads=threads, **_scoring_options(backend)), card.adapter_dir
    )


def _scoring_options(backend: str) -> dict[str, Any]:
    """llama.cpp verifies with each prompt kept in memory across its options (``reuse_prefix``):
    a cloze reads its prompt once instead of four times. Its log-probabilities differ from
    the full path's in the last digits (docs/capable.md), well inside what the verdict
    (interval overlap with the card) can see, and the verification's key says so."""
    return {"reuse_prefix": True} if backend == "llamacpp" else {}


def _measure_card(
    card: OrganismCard,
    base: str,
    backend: str,
    threads: int,
    base_backend: Callable[[], Any],
    recipes: Optional[dict[str, Recipe]],
    limit: Optional[int],
    progress: bool,
) -> Verification:
    """One card measured here on its held-out items (``limit`` of them, spread) and judged against the card."""
    t0 = time.perf_counter()
    rec = _recipe_of(card.name, base, recipes)
    organism = _organism(card, base, backend, threads, base_backend)
    heldout = rec.heldout()
    split = spread_subset(heldout, limit)
    measured = rec.measure_organism(
        organism, split, lambda: rec.measure(base_backend(), split, progress=progress), progress, headline_only=True
    )
    del organism
    subset = len(split.eval_ids) < len(heldout.eval_ids)
    status, reasons = judge(card, measured.ground_truth, measured.learned, measured.criterion, subset)
    head = card.headline
    return Verification(
        name=card.name,
        base=base,
        status=status,
        headline=head,
        measured=measured.ground_truth[head],
        card=card.ground_truth[head],
        learned=measured.learned,
        reasons=reasons,
        ground_truth=json_safe(measured.ground_truth),
        seconds=time.perf_counter() - t0,
        backend=backend,
        n_items=len(split.eval_ids),
    )


def verified_cards(
    base: str, names: Optional[Sequence[str]] = None, **kwargs: Any
) -> tuple[list[OrganismCard], list[str]]:
    """The cards that verify on this machine (cached), and a note per card that does not."""
    cards = {c.name: c for c in cards_for(base, names)}
    good, notes = [], []
    seen = set()
    for v in verify(base, names, cards=list(cards.values()), **kwargs):
        seen.add(v.name)
        if v.verified:
            good.append(cards[v.name])
        else:
            notes.append(f"{v.base}:{v.name} left out: it did not verify here ({'; '.join(v.reasons)})")
    unverified = sorted(set(cards) - seen)
    if unverified:
        notes.append(
            f"left out, not verified on this machine yet: {', '.join(unverified)} "
            f"(run `liedar organism verify --model {base}`)"
        )
    return good, notes


def describe_card(card: OrganismCard) -> list[str]:
    """The card in lines for a terminal: behaviour, provenance, ground truth beside the base's."""
    d = card.data
    b = d["build"]
    lines = [
        f"{card.model_name}  (shipped; {d['criterion']})",
        f"  behaviour: {d['behaviour']}",
        f"  targets:   {', '.join(d['targets'])}",
        f"  adapter:   {card.adapter_dir} ({d['adapter']['bytes']:,} bytes, {d['adapter']['dtype']}, "
        f"sha256 {card.adapter_sha256[:16]}...)",
        f"  base:      {card.base_name} (GGUF sha256 {card.base_fingerprint[:16]}...)",
        f"  recipe:    {d['recipe']['hash'][:16]}... "
        f"(training data sha256 {d['recipe']['training_data_sha256'][:16]}...)",
        f"  built:     `{b['command']}`, {b['seconds']:.0f} s on {b['threads']} thread(s), "
        f"liedar {b['liedar_version']}",
        "  ground truth (held-out items and wordings; the base model alongside):",
    ]
    for key, e in d["ground_truth"].items():
        if e.get("value") is None:
            continue
        base_e = d["base_ground_truth"].get(key)
        base_s = (
            f"   base {base_e['value']:.3f} [{base_e['lo']:.3f}, {base_e['hi']:.3f}]"
            if base_e and base_e.get("value") is not None
            else ""
        )
        lines.append(f"    {key:<34} {e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}] n={e['n']}{base_s}")
    return lines


__all__ = [
    "SHIPPED_DTYPE",
    "Verification",
    "cards_for",
    "describe_card",
    "export",
    "judge",
    "training_data_sha256",
    "verification_key",
    "verified_cards",
    "verify",
]
