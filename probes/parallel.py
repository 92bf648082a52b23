"""Independent probe fits in parallel: joblib processes locally, Ray tasks when Ray is on.

Why only this: a layer sweep's per-layer fits and a transfer matrix's cells share nothing
but their (read-only) inputs, and each is seeded by its arguments, so running them in any
order on any worker gives the serial run's numbers exactly (pinned by tests/scale). The
helper keeps the order of its inputs; it does not start Ray (models.distributed.ray_session
does, around the whole command), it only uses a cluster that is already up.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from liedar.core.errors import InputError


def run_tasks(
    fn: Callable[..., Any], arg_tuples: Sequence[tuple], *, n_jobs: int = 1, use_ray: bool = False
) -> list[Any]:
    """``[fn(*args) for args in arg_tuples]``, on Ray tasks (``use_ray``, one CPU each), on
    ``n_jobs`` joblib worker processes (``n_jobs`` > 1 or -1 for all cores), or serially."""
    arg_tuples = list(arg_tuples)
    if use_ray:
        from liedar.core._util.extras import require

        ray = require("ray", "probe fits on Ray (--ray)")
        if not ray.is_initialized():
            raise InputError("use_ray=True needs a running Ray cluster (start one with models.distributed.ray_session)")
        remote = ray.remote(num_cpus=1, max_retries=3)(fn)
        return ray.get([remote.remote(*args) for args in arg_tuples])
    if n_jobs == 1 or len(arg_tuples) < 2:
        return [fn(*args) for args in arg_tuples]
    if n_jobs == 0 or n_jobs < -1:
        raise InputError(f"n_jobs={n_jobs}: use 1 (serial), a positive count, or -1 for every core")
    from joblib import Parallel, delayed

    return list(Parallel(n_jobs=n_jobs)(delayed(fn)(*args) for args in arg_tuples))
