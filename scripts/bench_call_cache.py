"""What the model-call cache saves: behavioural instruments run with their demo sizes on
smollm2-135m (transformers, 1 thread), three times in one process — bare (no cache), through
an empty cache (cold: every answer asked and stored), and through the now-warm cache — with
a check that all three give the same result (every field but wall-clock timings).

    .venv/bin/python scripts/bench_call_cache.py [INSTRUMENT ...]   # default: sycophancy negation

The store lives in a temporary folder (the user's cache is not touched). Prints per
instrument the wall and CPU seconds of each run, the hit / miss counts, and the ratio
warm/bare measured in the same run (robust to a shared machine); last, the load average.
"""

import os
import sys
import tempfile
import time
from pathlib import Path

TIMING_KEYS = ("seconds", "train_seconds")


def without_timings(d):
    """The result without wall-clock fields (an instrument may record how long it ran)."""
    if isinstance(d, dict):
        return {k: without_timings(v) for k, v in d.items() if k not in TIMING_KEYS}
    if isinstance(d, list):
        return [without_timings(v) for v in d]
    return d


def timed(fn, *args):
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - t, time.process_time() - c


def main(names: list[str]) -> None:
    from liedar import models
    from liedar.behavioral.registry import instruments
    from liedar.core.stats import DEFAULT_INTERVAL
    from liedar.models.call_cache import CachedBackend, CallStore

    lm = models.load("smollm2-135m", backend="transformers", n_threads=1)
    registry = instruments()
    with tempfile.TemporaryDirectory() as tmp:
        store = CallStore(Path(tmp) / "calls.sqlite")
        for name in names:
            inst = registry[name]
            opts = dict(inst.demo.full)
            limit = opts.pop("limit", None)
            items = inst.items(limit=limit, seed=0, **opts)

            def run(backend, inst=inst, items=items, opts=opts):
                return without_timings(inst.run(backend, items, interval=DEFAULT_INTERVAL, seed=0, **opts).to_dict())

            bare, t_bare, c_bare = timed(run, lm)
            cold_b = CachedBackend(lm, store)
            cold, t_cold, c_cold = timed(run, cold_b)
            warm_b = CachedBackend(lm, store)
            warm, t_warm, c_warm = timed(run, warm_b)
            same = bare == cold == warm
            print(
                f"{name}: {len(items)} items; bare {t_bare:.1f} s wall ({c_bare:.1f} cpu), "
                f"cold cache {t_cold:.1f} s ({c_cold:.1f}), warm cache {t_warm:.3f} s ({c_warm:.3f}); "
                f"cold {cold_b.stats}, warm {warm_b.stats}; warm/bare wall {t_warm / t_bare:.4f}; "
                f"identical results: {same}",
                flush=True,
            )
            if not same:
                raise SystemExit(f"{name}: cached results differ from the bare run")
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main(sys.argv[1:] or ["sycophancy", "negation"])
