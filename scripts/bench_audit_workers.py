"""Benchmark: an audit's models on worker processes against the same audit in one process.

`liedar audit --model ... --reference BASE` is run cold twice in one run: in one process on
``--threads`` threads (the baseline), and with ``--workers`` one-thread worker processes
measuring the audited models after the reference (`liedar.audit.run.gather`; the reference
runs first on ``--threads`` threads in the calling process on both sides). Each side has
its own empty ``LIEDAR_CACHE`` and evidence folder, so every model is measured on both sides.
Prints each side's seconds, the ratio, and whether the two sides gave every model the same
verdict and the same evidence cells.

    .venv/bin/python scripts/bench_audit_workers.py      # two zoo members against smollm2-135m

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

MEMBERS = ("zoo/audit/smollm2-135m/sb_wrong", "zoo/audit/smollm2-135m/syc_mid")


def _side(label: str, work: Path, args: argparse.Namespace, workers: int) -> tuple[float, dict]:
    from liedar.audit.run import AuditConfig, audit

    os.environ["LIEDAR_CACHE"] = str(work / f"cache-{label}")
    config = AuditConfig(
        models=tuple(str(ROOT / m) for m in args.models.split(",")),
        reference=args.reference,
        output=work / f"out-{label}",
        evidence_cache=work / f"evidence-{label}",
        threads=args.threads,  # the references' (in this process); the workers run on one thread each
        progress=False,
        workers=workers,
    )
    t0 = time.perf_counter()
    results, _ = audit(config, say=lambda s: print(f"  [{label}] {s}", flush=True))
    return time.perf_counter() - t0, results


def _verdicts(results: dict) -> list[tuple[str, str]]:
    return [(m["model"], m["verdict"]["verdict"]) for m in results["models"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MEMBERS), help="comma-separated models to audit")
    ap.add_argument("--reference", default="smollm2-135m")
    ap.add_argument("--threads", type=int, default=2, help="the one-process side's threads (default 2)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    work = Path(tempfile.mkdtemp(prefix="bench-audit-"))
    try:
        one, one_results = _side("one process", work, args, 1)
        pool, pool_results = _side("pool", work, args, args.workers)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(f"audited: {args.models} against {args.reference}; audit sizes; everything cold")
    print(f"one process, {args.threads} threads: {one:.1f} s")
    print(f"{args.workers} one-thread worker processes after the reference: {pool:.1f} s")
    print(f"speed-up: {one / pool:.2f}x")
    same = _verdicts(one_results) == _verdicts(pool_results)
    print(f"verdicts: {_verdicts(one_results)}; the same on both sides: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
