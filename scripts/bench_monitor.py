"""What does the inline monitor cost? Generated tokens/s with and without it, same run.

For each backend the same model file, prompt, seed, thread count and token budget are
generated plainly and monitored (`HonestyMonitor.generate`: the probe layer's hidden state
per token + one dot product + sentence bookkeeping), interleaved (A B, B A, ...) after one
warm-up each. "Plain" is the backend with no capture machinery at all:

* transformers: `backend.generate` with no hook registered;
* llama.cpp: a second context loaded with ``capture="none"`` (no eval callback), i.e. bare
  llama.cpp decoding; the monitored arm uses the default C callback (models/native.py).
  ``--python-capture`` adds a third arm, monitoring through the Python callback fallback,
  to show what the C callback buys.

tokens/s = generated tokens / wall time of the whole generate call (prompt processing
included, identical in every arm). Reported per backend: median tokens/s per arm, the
median of the per-repetition paired ratios monitored/plain with a 95% bootstrap interval
(resampling repetitions), and tokens per CPU-second of this process (on a shared machine
wall time mostly measures the other processes). Target: ratio >= 0.95 (at most 5% slower).
When the budget is reached, the monitored arm feeds the last token once more to read its
state (plain generation never feeds it); that pass stops at the probe's layer.

The probe is a mass-mean probe fitted on random vectors of the model's width: the cost
of scoring does not depend on what the direction means, and the bench needs no trained
probe file. Pass ``--probe FILE`` to time a real one instead.

    .venv/bin/python scripts/bench_monitor.py --model smollm2-135m --reps 15
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from liedar.models.chat import Dialogue, Message

PROMPT = Dialogue.of(Message("user", "Write a long story about a salesperson who sells used cars to a family."))


def _random_probe(d_model: int, seed: int) -> Any:
    from liedar.probes.estimators import MassMeanProbe

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(64, d_model))
    y = np.r_[np.zeros(32), np.ones(32)].astype(int)
    return MassMeanProbe().fit(X, y)


def _time_generate(fn) -> tuple[float, float, int]:
    """(wall seconds, this process's CPU seconds, tokens generated)."""
    t0, c0 = time.perf_counter(), time.process_time()
    n = fn()
    return time.perf_counter() - t0, time.process_time() - c0, n


def _bootstrap_median(values: list[float], seed: int, n_boot: int = 4000) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    arr = np.asarray(values)
    meds = np.median(rng.choice(arr, size=(n_boot, arr.size), replace=True), axis=1)
    return float(np.quantile(meds, 0.025)), float(np.quantile(meds, 0.975))


def bench_backend(kind: str, args: argparse.Namespace) -> Optional[dict[str, Any]]:
    from liedar import models
    from liedar.probes.monitor import HonestyMonitor

    def load(**extra: Any) -> Any:
        return models.load(args.model, backend=kind, n_threads=args.threads, **extra)

    try:
        backend = load()
        bare = load(capture="none") if kind == "llamacpp" else backend
        slow = load(capture="python") if kind == "llamacpp" and args.python_capture else None
    except Exception as exc:  # report and go on with the other backend
        print(f"[{kind}] skipped: {type(exc).__name__}: {exc}")
        return None

    def monitor_for(b: Any) -> Any:
        if args.probe:
            return HonestyMonitor.from_file(b, args.probe)
        layer = args.layer if args.layer is not None else b.n_layers // 2
        return HonestyMonitor(b, _random_probe(b.d_model, args.seed), layer=layer)

    monitor = monitor_for(backend)
    arms = {
        "plain": lambda: len(bare.generate(PROMPT, max_tokens=args.tokens, seed=args.seed).token_ids),
        "monitored": lambda: len(monitor.generate(PROMPT, max_tokens=args.tokens, seed=args.seed).tokens),
    }
    if slow is not None:
        slow_monitor = monitor_for(slow)
        arms["monitored_python_callback"] = lambda: len(
            slow_monitor.generate(PROMPT, max_tokens=args.tokens, seed=args.seed).tokens
        )
    for fn in arms.values():  # warm-up (allocations, caches, lazy imports)
        fn()
    rates: dict[str, list[float]] = {name: [] for name in arms}
    cpu_rates: dict[str, list[float]] = {name: [] for name in arms}
    counts: set[int] = set()
    load_before = os.getloadavg()[0]
    names = list(arms)
    for rep in range(args.reps):
        for name in names if rep % 2 == 0 else names[::-1]:
            seconds, cpu_seconds, n = _time_generate(arms[name])
            counts.add(n)
            rates[name].append(n / seconds)
            cpu_rates[name].append(n / cpu_seconds)
    if len(counts) != 1:
        print(f"[{kind}] warning: token counts differ between runs: {sorted(counts)}")
    med = {k: statistics.median(v) for k, v in rates.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpu_rates.items()}
    row: dict[str, Any] = {
        "backend": kind,
        "capture": getattr(backend, "capture_path", "hook"),
        "layer": monitor.layer,
        "tokens": sorted(counts),
        "threads": args.threads,
        "reps": args.reps,
        "median_tok_s": med,
        "runs_tok_s": rates,
        "load_average": (load_before, os.getloadavg()[0]),
    }
    parts = [f"{name} {med[name]:.1f} tok/s" for name in names]
    for name in names[1:]:
        paired = [m / p for m, p in zip(rates[name], rates["plain"])]
        lo, hi = _bootstrap_median(paired, args.seed)
        row[f"{name}_paired_ratio"] = (statistics.median(paired), lo, hi)
        row[f"{name}_cpu_ratio"] = cpu_med[name] / cpu_med["plain"]
        parts.append(
            f"{name}/plain paired ratio {statistics.median(paired):.3f} [95% CI {lo:.3f}, {hi:.3f}] "
            f"(per CPU-second {row[f'{name}_cpu_ratio']:.3f})"
        )
    print(
        f"[{kind}] {args.model}, layer {monitor.layer}, capture {row['capture']}, {sorted(counts)} tokens, "
        f"{args.threads} threads, {args.reps} reps: "
        + "; ".join(parts)
        + f"; 1-min load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return row


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--backends", nargs="+", default=["transformers", "llamacpp"], choices=("transformers", "llamacpp"))
    p.add_argument("--probe", type=Path, help="a saved probe to time (default: random-direction probe)")
    p.add_argument("--layer", type=int, help="probe layer for the random probe (default: middle block)")
    p.add_argument("--tokens", type=int, default=64, help="tokens to generate per run (default 64)")
    p.add_argument("--reps", type=int, default=15, help="interleaved repetitions per arm (default 15)")
    p.add_argument(
        "--python-capture",
        action="store_true",
        help="llama.cpp: also time monitoring through the Python callback fallback",
    )
    p.add_argument("--output", type=Path, help="also write the rows as JSON here")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if "transformers" in args.backends:
        import torch

        torch.set_num_threads(args.threads)
    rows = [r for r in (bench_backend(k, args) for k in args.backends) if r is not None]
    if not rows:
        print("no backend could be benchmarked")
        return 1
    if args.output:
        from liedar.core._util.atomic import write_json_atomic

        write_json_atomic(args.output, rows)
    verdicts = []
    for r in rows:
        ratio, lo, hi = r["monitored_paired_ratio"]
        verdict = "met" if ratio >= 0.95 else "MISSED"
        verdicts.append(f"{r['backend']} {ratio:.3f} [{lo:.3f}, {hi:.3f}] {verdict}")
    print("monitored/plain generated tokens/s (median paired ratio, 95% CI; target >= 0.95): " + "; ".join(verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
