"""Benchmark extraction single-process vs on Ray (1 and 2 actors), in the same run.

Each path extracts the same statements into its own empty activation cache (so everything
is computed), with the same model, dtype and threads per process; the Ray results are
checked bit for bit against the local ones. Reported per path: statements/s; for Ray also
the fixed start-up cost, split into starting the local cluster (``ray.init``, once) and a
job's own start-up (actor pool + one model load per actor + scheduling), measured as a
job whose every shard is already cached. Throughput excluding start-up is
n / (job seconds - job start-up). The ratio Ray-1-actor / local is printed last (target:
>= 0.85 on a 2,000-statement job, start-up excluded and reported).

    .venv/bin/python scripts/bench_scale.py                          # smollm2-135m, 2000 statements
    .venv/bin/python scripts/bench_scale.py --n 400 --layers 15      # quicker
    .venv/bin/python scripts/bench_scale.py --compare-dtypes --n 300 # bf16 vs fp32 on the CPU

``--compare-dtypes`` instead measures what bfloat16 does to the numbers: cosine between
bf16 and fp32 hidden states per layer (median and 5th percentile over statements), and the
5-fold group-CV AUROC of a logistic probe at each listed layer in both dtypes.

Statements are Truth-is-Universal rows when /work/shared/datasets is present (else
templated sentences). On 2 cores expect no speed-up from 2 actors: the point is that the
Ray path is correct and that its overhead is small.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def statements(n: int, datasets: Path) -> list[str]:
    try:
        from liedar.probes.datasets import load_truth_is_universal

        texts = [str(x) for x in load_truth_is_universal(datasets).inputs]
    except Exception:  # the dataset is optional here
        texts = []
    if len(texts) < n:
        texts += [f"The number {i} is {'even' if i % 2 else 'odd'} and larger than {i // 3}." for i in range(n)]
    return texts[:n]


def compare_dtypes(args, data, root) -> int:
    from threadpoolctl import threadpool_limits

    from liedar import models
    from liedar.models.cache import cached_hidden_states
    from liedar.probes.evaluation import cross_validated

    out = {}
    for dtype in ("float32", "bfloat16"):
        backend = models.load(args.model, n_threads=args.threads, dtype=dtype)
        layers = list(range(backend.n_layers + 2))
        t0 = time.perf_counter()
        out[dtype] = cached_hidden_states(backend, data.inputs, layers, root=Path(root))
        print(
            f"{dtype}: {time.perf_counter() - t0:.1f} s for {len(data)} statements x {len(layers)} layers", flush=True
        )
    a, b = out["float32"], out["bfloat16"]
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    print("| layer | cosine median | cosine 5th pct |")
    print("|---|---|---|")
    for k in range(a.shape[1]):
        print(f"| {k} | {np.median(cos[:, k]):.5f} | {np.quantile(cos[:, k], 0.05):.5f} |")
    print("\n| layer | AUROC fp32 | AUROC bf16 | difference |")
    print("|---|---|---|---|")
    with threadpool_limits(1):
        for layer in [int(x) for x in args.layers.split(",")]:
            r32 = cross_validated("logistic", a[:, layer], data, seed=0).auroc
            r16 = cross_validated("logistic", b[:, layer], data, seed=0).auroc
            print(
                f"| {layer} | {r32.value:.3f} [{r32.lo:.3f}, {r32.hi:.3f}] | {r16.value:.3f} [{r16.lo:.3f}, "
                f"{r16.hi:.3f}] | {r16.value - r32.value:+.3f} |"
            )
    return 0


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--n", type=int, default=2000, help="statements (default 2000)")
    ap.add_argument("--layers", default="15", help="comma-separated layers (default 15)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per process (default 1)")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--actors", default="1,2", help="Ray actor counts to run (default 1,2)")
    ap.add_argument("--datasets", type=Path, default=Path("/work/shared/datasets"))
    ap.add_argument("--compare-dtypes", action="store_true", help="bf16 vs fp32 numbers instead of the speed run")
    return ap.parse_args()


def _summary(rows: list, n: int, t_init: float, t_local: float) -> None:
    """The table of paths and the Ray-1-actor / local ratio, start-up excluded."""
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
    print(
        "| path | wall s | job start-up s (all shards cached) | s computing in workers | statements/s wall "
        "| statements/s per busy worker |"
    )
    print("|---|---|---|---|---|---|")
    for name, secs, start, busy, _workers in rows:
        print(f"| {name} | {secs:.1f} | {start:.1f} | {busy:.1f} | {n / secs:.1f} | {n / busy:.1f} |")
    print(f"\nray.init of the local cluster: {t_init:.1f} s (once per command)")
    one = next((r for r in rows if r[0].startswith("Ray, 1 ")), None)
    if one is not None:
        # start-up excluded two ways: wall minus the cached job's fixed cost, and the actor's own compute time
        r_wall = t_local / max(one[1] - one[2], 1e-9)
        r_busy = t_local / one[3]
        print(
            f"ratio Ray-1-actor / local statements/s, start-up excluded: {r_wall:.2f} (wall minus the job's "
            f"fixed cost), {r_busy:.2f} (actor compute time) (target >= 0.85)"
        )


def main() -> int:
    args = _parse()
    if args.compare_dtypes:
        from liedar.probes.datasets import load_truth_is_universal
        from liedar.probes.splits import cap_per_topic

        full = load_truth_is_universal(args.datasets)
        per_topic = max(2, args.n // len(set(full.topic.tolist())))
        with tempfile.TemporaryDirectory() as tmp:  # fresh activations; the model copies stay in the cache
            return compare_dtypes(args, full.subset(cap_per_topic(full.topic, full.group, per_topic, seed=0)), tmp)
    from liedar import models
    from liedar.models.cache import cached_hidden_states
    from liedar.models.distributed import ray_hidden_states, ray_session

    layers = [int(x) for x in args.layers.split(",")]
    texts = statements(args.n, args.datasets)
    kw = {"n_threads": args.threads, "dtype": args.dtype}
    print(f"{args.model}, {len(texts)} statements, layers {layers}, {args.threads} thread(s)/process, {args.dtype}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        backend = models.load(args.model, **kw)
        t0 = time.perf_counter()
        local = cached_hidden_states(backend, texts, layers, root=Path(tmp) / "local")
        t_local = time.perf_counter() - t0
        del backend
        rows.append(("local (1 process)", t_local, 0.0, t_local, 1))
        print(f"local: {t_local:.1f} s, {len(texts) / t_local:.1f} statements/s", flush=True)
        t0 = time.perf_counter()
        with ray_session(num_cpus=os.cpu_count()):
            t_init = time.perf_counter() - t0
            print(f"ray.init (local cluster): {t_init:.1f} s", flush=True)
            for k in [int(a) for a in args.actors.split(",")]:
                root = Path(tmp) / f"ray{k}"
                t0 = time.perf_counter()
                stats: dict = {}
                got = ray_hidden_states(
                    args.model, texts, layers, load_kwargs=kw, root=root, concurrency=k, stats=stats
                )
                t_job = time.perf_counter() - t0
                if not np.array_equal(got, local):
                    print(
                        f"Ray with {k} actor(s) differs from the local path: max |diff| {np.abs(got - local).max():.3g}"
                    )
                    return 1
                t0 = time.perf_counter()  # the same job again, every shard cached: the job's fixed cost
                ray_hidden_states(args.model, texts[:64], layers, load_kwargs=kw, root=root, concurrency=k)
                t_start = time.perf_counter() - t0
                busy = stats["seconds_in_actors"]
                rows.append((f"Ray, {k} actor(s)", t_job, t_start, busy, stats["workers"]))
                print(
                    f"Ray {k} actor(s): {t_job:.1f} s (job start-up {t_start:.1f} s, {busy:.1f} s computing in "
                    f"{stats['workers']} actor process(es)), bit-equal to local",
                    flush=True,
                )
    _summary(rows, len(texts), t_init, t_local)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
