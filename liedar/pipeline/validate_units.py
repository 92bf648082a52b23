"""A model's detector units, each saved and resumed on its own: the matrix's unit of work.

Why apart from `validate`: the one-process path (`validate`) and the worker processes
(`validate_pool`) both run a model's units through `run_model` and read the same saved
files, and neither should import the other to get them. A unit's file is keyed by a hash of
everything its numbers depend on (sizes, seed, model and organism, the probe for the units
that read it, the hashes of the units it reads, the liedar version), so a changed input is
recomputed and an interrupted run resumes.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, cast

from liedar import __version__
from liedar.core._util.atomic import write_json_atomic
from liedar.core.results import SCHEMA_VERSION
from liedar.models.backend import Backend
from liedar.models.scoring import ScoringEngine
from liedar.pipeline.validate_detectors import (
    DETECTORS,
    UNITS,
    Cell,
    ProbeKit,
    Unit,
    UnitContext,
    not_computable,
    run_unit,
)
from liedar.report.store import config_hash, shared_path

VALIDATION_DIR = "validation"


@dataclass(frozen=True)
class ModelSpec:
    """One column of the matrix: the base model or an organism (with its to_dict())."""

    name: str  # what `liedar.models.load` takes: "smollm2-135m" or "smollm2-135m:sandbagger"
    organism: Optional[dict[str, Any]] = None  # None for the base model

    @property
    def is_base(self) -> bool:
        return self.organism is None

    @property
    def label(self) -> str:
        return self.name


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def unit_path(results_dir: Path, model: str, unit: str) -> Path:
    return Path(results_dir) / VALIDATION_DIR / _slug(model) / f"{unit}.json"


def _read_unit(path: Path, expected: str) -> Optional[dict[str, Any]]:
    if not path.is_file():
        return None
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None  # damaged: recomputed, never trusted
    if not isinstance(d, dict) or d.get("hash") != expected or d.get("status") != "ok":
        return None
    return d


def load_saved_unit(path: Path, expected: str, shared_key: Optional[str] = None) -> Optional[dict[str, Any]]:
    """A unit's saved file at ``path`` when its hash is ``expected``; else, given the weights key
    ``shared_key``, the same unit from the cache's shared results (`liedar.report.store.shared_path`),
    copied to ``path``. A damaged file is recomputed, never trusted."""
    d = _read_unit(path, expected)
    if d is not None or shared_key is None:
        return d
    d = _read_unit(shared_path("units", path.stem, expected, shared_key), expected)
    if d is not None:
        write_json_atomic(path, d)
    return d


def unit_hashes(spec: ModelSpec, sizes: dict[str, Any], seed: int, probe_hash: str) -> dict[str, str]:
    out: dict[str, str] = {}
    identity = {"name": spec.name, "organism": spec.organism}
    for u in UNITS:
        out[u.name] = config_hash(
            {
                "unit": u.name,
                "version": u.version,
                "model": identity,
                "sizes": {k: sizes[k] for k in u.sizes},
                "seed": seed,
                "probe": probe_hash if u.name in ("lies", "cross_check") else "",
                "needs": [out[n] for n in u.needs],
                "liedar": __version__,
            }
        )
    return out


@dataclass
class ModelRun:
    cells: list[Cell] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    seconds: float = 0.0
    statuses: dict[str, str] = field(default_factory=dict)
    call_cache: dict[str, int] = field(default_factory=dict)  # this model's replayed/asked answers (if cached)


def unloaded_run(reason: object) -> "ModelRun":
    """The column of a model that would not load: every detector not computable, saying why."""
    return ModelRun([not_computable(d, f"model did not load: {reason}") for d in DETECTORS])


def run_model(
    spec: ModelSpec,
    load: Callable[[], Any],
    results_dir: Path,
    sizes: dict[str, Any],
    seed: int,
    probe: Optional[ProbeKit],
    probe_hash: str,
    *,
    units: Sequence[Unit] = UNITS,
    items: Optional[list[Any]] = None,
    say: Callable[[str], None] = print,
    progress: bool = True,
    wrap: Optional[Callable[[Any], Any]] = None,
    shared_key: Optional[str] = None,
) -> ModelRun:
    """Every unit on one model, each resumed from its saved file when its hash matches; the
    model is loaded only if some unit has to run. ``wrap`` puts the loaded backend behind the
    model-call cache for the units that only ask questions; units that change or copy the
    weights (``bare``) always get the bare backend. Given the base weights' key ``shared_key``,
    each unit is also kept in, and read from, the cache's shared results, so a run into
    another results folder does not compute it again."""
    from liedar.behavioral.items.mcq import load_mcq_bank

    hashes = unit_hashes(spec, sizes, seed, probe_hash)
    ctx = UnitContext(sizes, seed, list(load_mcq_bank()) if items is None else list(items), probe, progress=progress)
    backend = engine = None
    out = ModelRun()
    t_model = time.perf_counter()
    for u in units:
        path = unit_path(results_dir, spec.name, u.name)
        saved = load_saved_unit(path, hashes[u.name], shared_key)
        if saved is not None:
            out.cells += [Cell.from_dict(c) for c in saved["cells"]]
            ctx.prior[u.name] = saved["raw"]
            out.cached.append(u.name)
            out.statuses[u.name] = "ok"
            continue
        if backend is None:
            backend = load()
            asked = backend if wrap is None else wrap(backend)
            counts_before = dict(getattr(asked, "stats", None) or {})
            engine = ScoringEngine(asked)
        t0 = time.perf_counter()
        say(f"  {spec.name}: {u.name} ...")
        # the engine stands in for its backend: every attribute but score_options is the backend's own
        cells, raw, status = run_unit(u, backend if u.bare else cast(Backend, engine), ctx)
        seconds = time.perf_counter() - t0
        if status == "ok":
            ctx.prior[u.name] = raw
        record = {
            "schema_version": SCHEMA_VERSION,
            "liedar_version": __version__,
            "unit": u.name,
            "model": spec.name,
            "hash": hashes[u.name],
            "status": status,
            "seconds": round(seconds, 2),
            "cells": [c.to_dict() for c in cells],
            "raw": raw,
        }
        write_json_atomic(path, record)
        if shared_key is not None and status == "ok":
            write_json_atomic(shared_path("units", u.name, hashes[u.name], shared_key), record)
        out.cells += cells
        out.statuses[u.name] = status
        say(f"  {spec.name}: {u.name} {status} in {seconds:.1f} s")
    out.seconds = time.perf_counter() - t_model
    if backend is not None and isinstance(getattr(asked, "stats", None), dict):
        out.call_cache = {k: v - counts_before.get(k, 0) for k, v in asked.stats.items()}
    return out
