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

from typing import Any, Optional, Sequence

from liedar.behavioral.items.menus import vignettes
from liedar.behavioral.runners.menus import (
    ConfigResult,
    MenuStudyResult,
    StudySettings,
    check_study_arguments,
    run_configs,
    study_jobs,
    study_result,
)
from liedar.core._util.workers import WorkerPool
from liedar.core.errors import InputError

_LOADED: dict[str, Any] = {}  # a worker's model, loaded for its first piece


def _run_piece(
    model: str, backend: str, load_kwargs: dict[str, Any], jobs: list[tuple[str, str]], settings: StudySettings
) -> tuple[list[ConfigResult], dict[str, int]]:
    """In a worker: the configurations ``jobs`` (vignette id, framing key) on ``model``."""
    key = repr((model, backend, sorted(load_kwargs.items())))
    if key not in _LOADED:
        from liedar import models

        _LOADED[key] = models.load(model, backend=backend, **{**load_kwargs, "n_threads": 1})
    by_id = {v.vignette_id: v for v in vignettes()}
    return run_configs(_LOADED[key], [(by_id[v], f) for v, f in jobs], settings)


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
    if backend not in ("transformers", "llamacpp"):
        raise InputError(f"a pooled menu study loads a local model in each worker: backend {backend!r} is not one")
    if workers < 1:
        raise InputError(f"workers must be at least 1 (got {workers})")
    settings = settings or StudySettings()
    check_study_arguments(settings.mode, settings.samples, settings.temperature, scenarios, tiers, framings)
    jobs = [(v.vignette_id, f) for v, f in study_jobs(scenarios, tiers, framings)]
    from liedar.core._util.progress import progress as step_progress

    configs: list[ConfigResult] = []
    ways: dict[str, int] = {}
    with WorkerPool(workers) as pool:
        futures = [pool.submit(_run_piece, model, backend, dict(load_kwargs or {}), [job], settings) for job in jobs]
        for future in step_progress(futures, desc=f"menus ({settings.mode}, {workers} workers)", disable=not progress):
            got, piece_ways = future.result()
            configs += got
            for way, n in piece_ways.items():
                ways[way] = ways.get(way, 0) + n
    return study_result(model, settings, configs, ways)
