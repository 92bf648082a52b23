"""The menu study on one-thread worker processes, one configuration per piece.

Why: the study's configurations are independent (each one's lettering and seeds follow its
place in the whole design, `design_index`), and a 135M-parameter model uses a second thread
poorly (`liedar.core._util.workers`), so two one-thread processes answer about twice the
menus one two-thread process does. The pooled study equals the one-process study
configuration for configuration (`tests/behavioral/test_menus_pool.py`).

Each worker loads the model once, by name, and keeps it for every piece it is given; the
model is never loaded in the calling process. Only a local model can be pooled: a served
model is one endpoint, already parallel on its server's side.
"""

from __future__ import annotations

from concurrent.futures import as_completed
from dataclasses import replace
from typing import Any, Iterator, Optional, Sequence

from liedar.behavioral.items.menus import FRAMINGS, vignettes
from liedar.behavioral.runners.menus import (
    ConfigResult,
    MenuStudyResult,
    StudySettings,
    check_study_arguments,
    run_configs,
    run_configs_whole,
    study_jobs,
    study_result,
)
from liedar.core._util.workers import WorkerPool
from liedar.core.errors import InputError

_LOADED: dict[str, Any] = {}  # a worker's model, loaded for its first piece


def _worker_backend(model: str, backend: str, load_kwargs: dict[str, Any]) -> Any:
    """In a worker: its model, loaded by name for its first piece and kept for the rest."""
    key = repr((model, backend, sorted(load_kwargs.items())))
    if key not in _LOADED:
        from liedar import models

        _LOADED[key] = models.load(model, backend=backend, **{**load_kwargs, "n_threads": 1})
    return _LOADED[key]


def _run_piece(
    model: str, backend: str, load_kwargs: dict[str, Any], jobs: list[tuple[str, str]], settings: StudySettings
) -> tuple[list[ConfigResult], dict[str, int]]:
    """In a worker: the configurations ``jobs`` (vignette id, framing key) on ``model``."""
    by_id = {v.vignette_id: v for v in vignettes()}
    return run_configs(_worker_backend(model, backend, load_kwargs), [(by_id[v], f) for v, f in jobs], settings)


def _run_whole_piece(
    model: str, backend: str, load_kwargs: dict[str, Any], jobs: list[tuple[str, str]], settings: StudySettings
) -> tuple[list[ConfigResult], list[ConfigResult], dict[str, int]]:
    """In a worker: `run_configs_whole` on the configurations ``jobs``."""
    by_id = {v.vignette_id: v for v in vignettes()}
    return run_configs_whole(_worker_backend(model, backend, load_kwargs), [(by_id[v], f) for v, f in jobs], settings)


def _longest_first(jobs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The reasoning framings first: a sampled chain-of-thought configuration takes about ten
    times a short one, and handed out last it would leave the other workers idle."""
    return sorted(jobs, key=lambda job: not FRAMINGS[job[1]].reasoning)


def _check_pool(backend: str, workers: int) -> None:
    if backend not in ("transformers", "llamacpp"):
        raise InputError(f"a pooled menu study loads a local model in each worker: backend {backend!r} is not one")
    if workers < 1:
        raise InputError(f"workers must be at least 1 (got {workers})")


def run_menu_study_pooled(
    model: str,
    *,
    backend: str = "transformers",
    workers: int = 2,
    scenarios: Optional[Sequence[str]] = None,
    tiers: Optional[Sequence[str]] = None,
    framings: Optional[Sequence[str]] = None,
    settings: Optional[StudySettings] = None,
    load_kwargs: Optional[dict[str, Any]] = None,
    progress: bool = True,
) -> MenuStudyResult:
    """`run_menu_study` on ``workers`` one-thread processes, each loading ``model`` itself.

    Parameters
    ----------
    model : str
        A local model's name or path (`liedar.models.load`), e.g. ``"smollm2-135m"``.
    backend : {"transformers", "llamacpp"}
        The local backend each worker loads.
    workers : int, default 2
        Worker processes (one thread each).
    scenarios, tiers, framings : sequence of str, optional
        As in `run_menu_study`.
    settings : StudySettings
        Mode, samples, temperature, test level and seed, as in `run_menu_study` (its defaults
        when None).
    load_kwargs : dict, optional
        More keyword arguments of `liedar.models.load` (the thread count is always 1).
    progress : bool
        Show a progress bar over the configurations.

    Returns
    -------
    MenuStudyResult
        The same result as `run_menu_study` on the model in one process.
    """
    _check_pool(backend, workers)
    settings = settings or StudySettings()
    check_study_arguments(settings.mode, settings.samples, settings.temperature, scenarios, tiers, framings)
    jobs = [(v.vignette_id, f) for v, f in study_jobs(scenarios, tiers, framings)]
    configs: list[ConfigResult] = []
    ways: dict[str, int] = {}
    desc = f"menus ({settings.mode}, {workers} workers)"
    args = (model, backend, dict(load_kwargs or {}))
    for got, piece_ways in _pooled(_run_piece, args, jobs, settings, workers, desc, progress):
        configs += got
        _add_ways(ways, piece_ways)
    return study_result(model, settings, _design_order(configs, jobs), ways)


def run_whole_study_pooled(
    model: str,
    *,
    backend: str = "transformers",
    workers: int = 2,
    scenarios: Optional[Sequence[str]] = None,
    tiers: Optional[Sequence[str]] = None,
    framings: Optional[Sequence[str]] = None,
    settings: Optional[StudySettings] = None,
    load_kwargs: Optional[dict[str, Any]] = None,
    progress: bool = True,
) -> dict[str, MenuStudyResult]:
    """The whole study, exact and sampled, on ``workers`` one-thread processes: each
    configuration's 15 prompts read once for both modes (`run_configs_whole`).

    Parameters are those of `run_menu_study_pooled`; ``settings.mode`` is not read (the
    sampled mode's checks apply: K >= 2 and a temperature > 0).

    Returns
    -------
    dict of str to MenuStudyResult
        ``"exact"`` (its argmax is the deterministic study) and ``"stochastic"``, each the
        result `run_menu_study_pooled` gives in that mode.
    """
    _check_pool(backend, workers)
    settings = settings or StudySettings()
    for mode in ("exact", "stochastic"):
        check_study_arguments(mode, settings.samples, settings.temperature, scenarios, tiers, framings)
    jobs = [(v.vignette_id, f) for v, f in study_jobs(scenarios, tiers, framings)]
    exact: list[ConfigResult] = []
    sampled: list[ConfigResult] = []
    ways: dict[str, int] = {}
    args = (model, backend, dict(load_kwargs or {}))
    desc = f"menus (exact and sampled, {workers} workers)"
    for got_exact, got_sampled, piece_ways in _pooled(_run_whole_piece, args, jobs, settings, workers, desc, progress):
        exact += got_exact
        sampled += got_sampled
        _add_ways(ways, piece_ways)
    return {
        "exact": study_result(model, replace(settings, mode="exact"), _design_order(exact, jobs), {}),
        "stochastic": study_result(model, replace(settings, mode="stochastic"), _design_order(sampled, jobs), ways),
    }


def _pooled(piece, args, jobs, settings, workers, desc, progress) -> Iterator[Any]:
    """Each job as one piece on the pool, longest first; the pieces' results as they end."""
    from liedar.core._util.progress import progress as step_progress

    with WorkerPool(workers, pieces=len(jobs)) as pool:
        futures = [pool.submit(piece, *args, [job], settings) for job in _longest_first(jobs)]
        for future in step_progress(as_completed(futures), total=len(futures), desc=desc, disable=not progress):
            yield future.result()


def _design_order(configs: list[ConfigResult], jobs: list[tuple[str, str]]) -> list[ConfigResult]:
    """The configurations in the study's own order, whatever order the pool ended them in."""
    place = {job: i for i, job in enumerate(jobs)}
    return sorted(configs, key=lambda c: place[(c.vignette_id, c.framing)])


def _add_ways(ways: dict[str, int], more: dict[str, int]) -> None:
    for way, n in more.items():
        ways[way] = ways.get(way, 0) + n
