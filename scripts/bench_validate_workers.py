"""Benchmark: the validation matrix on worker processes against the same matrix in one process.

The demo's validation section (`liedar.pipeline.validate.validate` at the demo's sizes, the
organisms verified on the demo's 60 held-out items) is run cold twice in one run: in one
process on ``--threads`` threads (the baseline), and on ``--workers`` one-thread worker
processes (`liedar.pipeline.validate_pool`). Each side gets its own empty ``LIEDAR_CACHE``
(so verification, the model-call cache and the model conversion are cold on both) and a
fresh output folder holding only the base model's lie probe, trained once before either
side starts (the probe is the demo's step, not the validation section's). Prints each side's
seconds, the ratio, and whether the two matrices agree cell by cell.

    .venv/bin/python scripts/bench_validate_workers.py      # the demo's set: the base + every shipped organism

Prints the load average at start and end (the ratio, not the seconds, is the result on a
shared machine).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _side(label: str, prepared: Path, work: Path, args: argparse.Namespace, workers: int) -> tuple[float, dict]:
    from liedar.pipeline.context import DemoConfig, DemoContext
    from liedar.pipeline.validate import ValidateConfig, demo_validation_sizes, validate

    os.environ["LIEDAR_CACHE"] = str(work / f"cache-{label}")
    out = work / f"out-{label}"
    shutil.copytree(prepared, out)
    threads = args.threads if workers == 1 else 1
    config = ValidateConfig(
        args.model,
        "transformers",
        out,
        seed=0,
        threads=threads,
        organisms=tuple(args.organisms.split(",")),
        verify_limit=60,
        workers=workers,
    )
    ctx = DemoContext(DemoConfig(args.model, "transformers", False, None, out, 0, threads, True, workers))
    t0 = time.perf_counter()
    result = validate(
        config, say=lambda s: print(f"  [{label}] {s}", flush=True), demo_ctx=ctx, sizes=demo_validation_sizes()
    )
    seconds = time.perf_counter() - t0
    return seconds, result.matrix.to_dict()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument(
        "--organisms",
        default="liar,sandbagger,sandbagger_plausible,sycophant",
        help="shipped organisms beside the base",
    )
    ap.add_argument("--threads", type=int, default=2, help="the one-process side's threads (default 2, the demo's)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")

    from liedar.pipeline.context import DemoConfig, DemoContext
    from liedar.pipeline.validate import ensure_base_probe

    work = Path(tempfile.mkdtemp(prefix="bench-validate-"))
    try:
        os.environ["LIEDAR_CACHE"] = str(work / "cache-probe")
        prepared = work / "prepared"
        ensure_base_probe(DemoContext(DemoConfig(args.model, "transformers", False, None, prepared, 0, args.threads)))
        one, one_matrix = _side("one process", prepared, work, args, 1)
        pool, pool_matrix = _side("pool", prepared, work, args, args.workers)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    same = [c for c in one_matrix["cells"] if c in pool_matrix["cells"]]
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(f"models: {args.model} + {args.organisms}; demo sizes; organisms verified on 60 items; everything cold")
    print(f"one process, {args.threads} threads: {one:.1f} s")
    print(f"{args.workers} one-thread worker processes: {pool:.1f} s")
    print(f"speed-up: {one / pool:.2f}x")
    print(
        f"cells identical: {len(same)}/{len(one_matrix['cells'])} (thread counts differ: float rounding may move a few)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
