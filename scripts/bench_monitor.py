"""What does the inline monitor cost? Generated tokens/s with and without it, same run.

For each backend (transformers, llama.cpp) the same model, prompt, seed, thread count and
token budget are generated plainly (`backend.generate`) and monitored
(`HonestyMonitor.generate`: hidden state of the probe's layer per token + one dot
product + sentence bookkeeping), interleaved (A B, B A, ...) after one warm-up each. The
tokens/s figure is generated tokens over the wall time of the whole generate call
(prompt processing included, identical in both arms); tokens per CPU-second of this
process is printed too, because on a shared machine wall time mostly measures the other
processes. Medians over repetitions; the wall-clock ratio monitored / plain is printed
last (target >= 0.95, i.e. at most 5% slower). The monitored arm genuinely does one more
forward pass (the last token's state is read, so it is fed): 1/N of the work for N tokens.

The probe is a mass-mean probe fitted on random vectors of the model's width: the cost
of scoring does not depend on what the direction means, and the bench needs no trained
probe file. Pass ``--probe FILE`` to time a real one instead.

    .venv/bin/python scripts/bench_monitor.py --model smollm2-135m --reps 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from models.chat import Dialogue, Message  # noqa: E402

PROMPT = Dialogue.of(Message("user", "Write a long story about a salesperson who sells used cars to a family."))


def _random_probe(d_model: int, seed: int) -> Any:
    from probes.estimators import MassMeanProbe

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(64, d_model))
    y = np.r_[np.zeros(32), np.ones(32)].astype(int)
    return MassMeanProbe().fit(X, y)


def _time_generate(fn) -> tuple[float, float, int]:
    """(wall seconds, this process's CPU seconds, tokens generated)."""
    t0, c0 = time.perf_counter(), time.process_time()
    n = fn()
    return time.perf_counter() - t0, time.process_time() - c0, n


def bench_backend(kind: str, args: argparse.Namespace) -> Optional[dict[str, Any]]:
    import models
    from probes.monitor import HonestyMonitor

    try:
        backend = models.load(args.model, backend=kind, n_threads=args.threads)
    except Exception as exc:  # report and go on with the other backend
        print(f"[{kind}] skipped: {type(exc).__name__}: {exc}")
        return None
    if args.probe:
        monitor = HonestyMonitor.from_file(backend, args.probe)
    else:
        layer = args.layer if args.layer is not None else backend.n_layers // 2
        monitor = HonestyMonitor(backend, _random_probe(backend.d_model, args.seed), layer=layer)

    def plain() -> int:
        return len(backend.generate(PROMPT, max_tokens=args.tokens, seed=args.seed).token_ids)

    def monitored() -> int:
        return len(monitor.generate(PROMPT, max_tokens=args.tokens, seed=args.seed).tokens)

    plain(), monitored()  # warm-up (allocations, caches, lazy imports)
    rates: dict[str, list[float]] = {"plain": [], "monitored": []}
    cpu_rates: dict[str, list[float]] = {"plain": [], "monitored": []}
    counts: set[int] = set()
    load_before = os.getloadavg()[0]
    for rep in range(args.reps):
        order = (("plain", plain), ("monitored", monitored))
        for name, fn in order if rep % 2 == 0 else order[::-1]:
            seconds, cpu_seconds, n = _time_generate(fn)
            counts.add(n)
            rates[name].append(n / seconds)
            cpu_rates[name].append(n / cpu_seconds)
    if len(counts) != 1:
        print(f"[{kind}] warning: token counts differ between runs: {sorted(counts)}")
    med = {k: statistics.median(v) for k, v in rates.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpu_rates.items()}
    paired = [m / p for m, p in zip(rates["monitored"], rates["plain"])]
    row = {
        "backend": kind,
        "layer": monitor.layer,
        "tokens": sorted(counts),
        "plain_tok_s": med["plain"],
        "monitored_tok_s": med["monitored"],
        "ratio_of_medians": med["monitored"] / med["plain"],
        "median_paired_ratio": statistics.median(paired),
        "cpu_ratio_of_medians": cpu_med["monitored"] / cpu_med["plain"],
        "plain_runs": rates["plain"],
        "monitored_runs": rates["monitored"],
        "load_average": (load_before, os.getloadavg()[0]),
    }
    print(
        f"[{kind}] layer {monitor.layer}, {sorted(counts)} tokens, {args.threads} threads, {args.reps} reps: "
        f"plain {med['plain']:.1f} tok/s (runs {', '.join(f'{r:.1f}' for r in rates['plain'])}); "
        f"monitored {med['monitored']:.1f} tok/s (runs {', '.join(f'{r:.1f}' for r in rates['monitored'])}); "
        f"median paired ratio {row['median_paired_ratio']:.3f}; per CPU-second of this process: "
        f"plain {cpu_med['plain']:.1f}, monitored {cpu_med['monitored']:.1f} tok/s "
        f"(ratio {row['cpu_ratio_of_medians']:.3f}); 1-min load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}",
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
    p.add_argument("--reps", type=int, default=7, help="interleaved repetitions per arm (default 7)")
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
    print(
        "monitored/plain generated tokens/s (ratio of medians; target >= 0.95): "
        + "; ".join(f"{r['backend']} {r['ratio_of_medians']:.3f}" for r in rows)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
