"""One-thread worker processes for a run's independent models.

Why one thread per process: a 135M-parameter model on a laptop CPU uses a second thread
poorly. Measured on the 2-core machines liedar is made for (smollm2-135m, transformers,
2026-12-04): six 24-token generations took 7.6 s on one thread and 6.9 s on two, while two
one-thread processes ran six each in 8.0 s (1.73x the throughput); 25 option scorings took
7.3 s, 4.7 s and 7.5-7.9 s (1.19x). The validation matrix (`liedar.pipeline.validate_pool`)
and the audit (`liedar.audit.run.gather`) cut their work into pieces for such a pool.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable, Optional


def default_workers() -> int:
    """Worker processes when none is asked for: two where there are two cores or more."""
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def max_workers() -> int:
    """The most worker processes any pool starts: twice this machine's cores (a one-thread
    process per core is the design; twice leaves room for one waiting on its disk)."""
    return 2 * (os.cpu_count() or 1)


def _init_worker() -> None:
    import torch

    torch.set_num_threads(1)


class WorkerPool:
    """``workers`` one-thread processes, started on the first piece that needs one and kept
    for the rest of the run, so every piece after the first reuses a worker's loaded model (a
    start costs an interpreter, torch and a model load). A run with nothing left to
    compute starts none. Use as a context manager: the processes end with the block.

    It never starts more than `max_workers` processes, nor more than ``pieces`` (the
    independent pieces the caller has, e.g. the models of an audit) when it is given: a worker
    with nothing to do would cost a start for nothing.
    """

    def __init__(self, workers: int, pieces: Optional[int] = None) -> None:
        self.workers = max(1, min(workers, max_workers(), workers if pieces is None else pieces))
        self._executor: Optional[ProcessPoolExecutor] = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        if self._executor is None:
            # spawn: a fresh interpreter per worker (torch's thread pools do not survive a fork)
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_init_worker)
        return self._executor.submit(fn, *args)

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
