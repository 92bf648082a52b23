"""The validation matrix's model work on worker processes, one thread each.

Why: once the base model's lie probe is trained, the matrix's work is a set of independent
pieces (each shipped organism's verification, then each model's detector units), and one-thread
processes, one per core, get more out of a laptop CPU than one process on both cores
(`liedar.core._util.workers`). The pieces are small enough to keep both busy: every verification
first (the matrix's sizes depend on which organisms verify), then one piece per (model, group
of units), a unit grouped with the units whose results it reads.

What a piece writes is what the one-process path writes: verifications go to the same
verification cache, units to the same resumable unit files under the same hashes (thread
count is not part of either key, as in the one-process path). The model-call cache is one
sqlite file per model, safe to write from two processes. A worker loads the base model once
and merges an organism's adapter into a copy of it, as `validate` does in one process.
"""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from liedar.core._util.workers import WorkerPool
from liedar.core.errors import LiedarError
from liedar.pipeline.validate_detectors import UNITS, ProbeKit, Unit
from liedar.pipeline.validate_units import (
    ModelRun,
    ModelSpec,
    load_saved_unit,
    run_model,
    unit_hashes,
    unit_path,
    unloaded_run,
)

# a worker's loaded models: the base once, and the organism its last piece used
_LOADED: dict[str, Any] = {}


@dataclass(frozen=True)
class PoolJob:
    """What every piece needs to rebuild its model in a fresh process."""

    model: str
    backend: str
    call_cache: bool
    results_dir: Path
    sizes: dict[str, Any]
    seed: int
    probe: Optional[ProbeKit]
    probe_hash: str
    shared_key: Optional[str] = None  # the base weights' key for the cache's shared results (None: the folder only)


def unit_groups(units: Sequence[Unit] = UNITS) -> list[tuple[str, ...]]:
    """The units cut into pieces that can run apart: a unit travels with every unit it reads
    (``needs``), in the units' own order."""
    group_of = {u.name: i for i, u in enumerate(units)}
    for u in units:  # merge each unit's group with its needs' groups
        for n in u.needs:
            old, new = group_of[u.name], group_of[n]
            for k, g in group_of.items():
                if g == old:
                    group_of[k] = new
    groups: dict[int, list[str]] = {}
    for u in units:
        groups.setdefault(group_of[u.name], []).append(u.name)
    return [tuple(g) for g in groups.values()]


def _say(line: str) -> None:
    print(f"   {line}", flush=True)


def _base(model: str, backend: str) -> Any:
    if "base" not in _LOADED:
        from liedar import models

        _LOADED["base"] = models.load(model, backend=backend, n_threads=1)
    return _LOADED["base"]


def _model(job: PoolJob, spec: ModelSpec) -> Any:
    if spec.organism is None:
        return _base(job.model, job.backend)
    if _LOADED.get("organism_name") != spec.name:
        from liedar.models.lora import apply_adapter

        _LOADED.pop("organism", None)  # free the last organism's copy before making the next
        base = _base(job.model, job.backend)
        _LOADED["organism"] = apply_adapter(base, spec.organism["adapter_dir"], name=spec.name)
        _LOADED["organism_name"] = spec.name
    return _LOADED["organism"]


def _verify_piece(model: str, backend: str, name: str, limit: Optional[int]) -> None:
    """Verify one shipped organism into the machine's verification cache."""
    from liedar.organisms.shipped import verify

    verify(model, [name], threads=1, progress=False, limit=limit, base_model=lambda: _base(model, backend), say=_say)


def _units_piece(job: PoolJob, spec: ModelSpec, group: tuple[str, ...]) -> Any:
    """One group of units on one model: `run_model` restricted to those units."""
    from liedar.models.call_cache import wrap

    units = [u for u in UNITS if u.name in group]
    return run_model(
        spec,
        lambda: _model(job, spec),
        job.results_dir,
        job.sizes,
        job.seed,
        job.probe,
        job.probe_hash,
        units=units,
        say=_say,
        progress=False,
        wrap=wrap if job.call_cache else None,
        shared_key=job.shared_key,
    )


def verify_in_pool(model: str, names: Optional[Sequence[str]], limit: Optional[int], pool: WorkerPool) -> None:
    """The shipped organisms this machine has not verified yet, each on a worker; the results
    land in the verification cache, where `organism_specs` then reads them exactly as if it
    had measured them itself. Already verified ones cost nothing (no pool is started)."""
    from liedar.organisms.shipped import cards_for, verify

    # the shipped ones among ``names``; what does not ship is `organism_specs`'s to refuse or build
    wanted = [c.name for c in cards_for(model) if names is None or c.name in names]
    cached = {v.name for v in verify(model, wanted, limit=limit, cached_only=True)}
    todo = [n for n in wanted if n not in cached]
    if not todo:
        return
    for f in [pool.submit(_verify_piece, model, "transformers", n, limit) for n in todo]:
        f.result()


def _saved(job: PoolJob, spec: ModelSpec, group: tuple[str, ...], hashes: dict[str, str]) -> bool:
    """Whether every unit of the piece has its saved file under the current hash (nothing to run)."""
    return all(
        load_saved_unit(unit_path(job.results_dir, spec.name, u), hashes[u], job.shared_key) is not None for u in group
    )


def run_models_in_pool(
    job: PoolJob, specs: Sequence[ModelSpec], pool: WorkerPool, say: Callable[[str], None]
) -> tuple[dict[str, Any], list[str]]:
    """Every model's units, piece by piece on the pool's processes (pieces already saved are
    read here, no process started); one `ModelRun` per model, its cells in the units' order,
    and a note per model that would not load (its cells say why; the base model's failure is
    raised: no base, no matrix)."""
    groups = unit_groups()
    order = {d: i for i, u in enumerate(UNITS) for d in u.detectors}
    parts: dict[str, list[Any]] = {s.name: [] for s in specs}
    failed: dict[str, str] = {}
    t0 = time.perf_counter()
    todo = []
    for s in specs:
        hashes = unit_hashes(s, job.sizes, job.seed, job.probe_hash)
        for g in groups:
            if _saved(job, s, g, hashes):
                parts[s.name].append(_units_piece(job, s, g))
            else:
                todo.append((s, g))
    if todo:
        say(f"  {len(todo)} piece(s) of {len(specs)} model(s) on {pool.workers} one-thread worker process(es)")
        pending: dict[Future, Any] = {pool.submit(_units_piece, job, s, g): s for s, g in todo}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                spec = pending.pop(f)
                try:
                    parts[spec.name].append(f.result())
                except LiedarError as exc:
                    if spec.is_base:
                        raise
                    failed.setdefault(spec.name, str(exc))
    out: dict[str, Any] = {}
    notes = [f"{name}: {why}" for name, why in failed.items()]
    for spec in specs:
        if spec.name in failed:
            out[spec.name] = unloaded_run(failed[spec.name])
            continue
        run = ModelRun()
        for part in parts[spec.name]:
            run.cells += part.cells
            run.cached += part.cached
            run.statuses.update(part.statuses)
            run.seconds += part.seconds
            for k, n in part.call_cache.items():
                run.call_cache[k] = run.call_cache.get(k, 0) + n
        run.cells.sort(key=lambda c: order.get(c.detector, len(order)))
        out[spec.name] = run
    if todo:
        say(f"  validation units done in {time.perf_counter() - t0:.0f} s")
    return out, notes
