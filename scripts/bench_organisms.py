"""Benchmark: what a model organism costs to load, verify, run (and train), against the base model.

Four measurements, each against a baseline measured in the same run (robust to a shared
machine: the ratios, not the seconds, are the result):

0. **verify** — `liedar organism verify` of each shipped organism of ``--model`` (inference
   on its held-out items, the cache bypassed) against the same measurement of the base
   model on the same items: seconds per organism and the ratio;
1. **training** (``--training``) — `train_lora` on the first ``--examples`` training examples of a recipe
   (LoRA on the upper blocks, cached boundary states, answer-token loss), against one plain
   inference forward pass of the full model (with its LM head) over the same examples: the
   training cost in "epochs of forward passes" (its *share of one epoch's forward passes*
   is that number divided by the epoch count);
2. **load** — ``liedar.models.load(base)`` vs ``load(base:organism)`` (card and adapter sha256
   checked, adapter merged), median of ``--repeats`` alternating loads (the shipped organism,
   else the cache's build);
3. **generation** — tokens/s of greedy generation with the adapter merged vs the base
   (transformers), and with llama.cpp's runtime LoRA vs the bare GGUF; alternating runs,
   median, ratio (target >= 0.95).

    .venv/bin/python scripts/bench_organisms.py --model smollm2-135m --organism sandbagger --threads 1

Prints the load average at start and end (the machine is shared) and the ratios last.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROMPTS = [
    "Tell me about the history of the bicycle.",
    "Explain how a refrigerator keeps food cold.",
    "Write a short note to a neighbour about a lost cat.",
]


def _bench_training(base, recipe, n_examples: int, epochs: int) -> dict:
    import torch

    from liedar.models.lora import encode_example, train_lora

    examples = list(recipe.split(base).train)[:n_examples]  # the blind-rule recipes need the base
    rows = [encode_example(base, ex[0], ex[1]) for ex in examples]
    t0 = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(rows), 8):
            chunk = [ids for ids, _ in rows[i : i + 8]]
            ids, mask = base.padded(chunk)
            base.model(input_ids=ids, attention_mask=mask, use_cache=False)
    forward_epoch = time.perf_counter() - t0
    hyper = {k: v for k, v in recipe.hyper.items() if k != "epochs"}
    adapter = train_lora(base, examples, epochs=epochs, progress=False, seed=recipe.seed, **hyper)
    m = adapter.meta
    total = m["boundary_seconds"] + m["train_seconds"]
    return {
        "examples": len(examples),
        "tokens_per_epoch": m["tokens_per_epoch"],
        "epochs": epochs,
        "forward_epoch_seconds": forward_epoch,
        "boundary_seconds": m["boundary_seconds"],
        "train_seconds": m["train_seconds"],
        "training_in_forward_epochs": total / forward_epoch,
        "share_of_one_forward_epoch_per_epoch": total / forward_epoch / epochs,
        "dtype": m["dtype"],
        "dtype_timing": m["dtype_timing"],
        "seconds_per_1k_tokens_per_epoch": total / epochs / (m["tokens_per_epoch"] / 1000),
    }


def _median_alternating(fa, fb, repeats: int) -> tuple[float, float]:
    a, b = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        fa()
        a.append(time.perf_counter() - t)
        t = time.perf_counter()
        fb()
        b.append(time.perf_counter() - t)
    return statistics.median(a), statistics.median(b)


def _gen_speed(backend, tokens: int) -> float:
    """Tokens per second over exactly ``tokens`` greedy steps per prompt (prefill included),
    end-of-turn tokens ignored (``stop_at_end=False``), so base and organism do the same work.

    Why not stop at the end token: a model that answers longer spreads its prefill over more
    tokens and reads faster. Counted that way the merged organism read 1.15-1.20x the base and
    a runtime LoRA 1.35-1.61x, ratios of answer length, not of speed."""
    n = 0
    t = time.perf_counter()
    for p in PROMPTS:
        n += len(backend.generate(p, max_tokens=tokens, stop_at_end=False).token_ids)
    return n / (time.perf_counter() - t)


def _bench_verify(model: str, threads: int, limit) -> dict:
    """Per shipped organism: verify seconds (cache bypassed) and the base model's same measurement."""
    from liedar.models import load
    from liedar.organisms.catalog import ORGANISMS
    from liedar.organisms.shipped import cards_for, spread_subset, verify

    base = load(model, backend="transformers", n_threads=threads)
    out = {}
    for card in cards_for(model, fingerprint=base.fingerprint):
        (v,) = verify(model, [card.name], threads=threads, progress=False, use_cache=False, limit=limit,
                      base_model=lambda: base)  # fmt: skip
        rec = ORGANISMS[card.name].for_base(model)
        split = spread_subset(rec.heldout(), limit)
        t = time.perf_counter()
        rec.measure(base, split)
        base_seconds = time.perf_counter() - t
        print(f"  verify {card.model_name}: {v.seconds:.1f} s ({v.status}); base, same items: {base_seconds:.1f} s")
        out[card.name] = (v.seconds, base_seconds, v.status)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--organism", default="sandbagger")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--examples", type=int, default=96, help="training examples for the training timing")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=32, help="tokens generated per prompt")
    ap.add_argument("--training", action="store_true", help="also time LoRA training (minutes)")
    ap.add_argument("--skip-verify", action="store_true")
    ap.add_argument("--verify-limit", type=int, default=None, help="held-out items per verify (default: all)")
    ap.add_argument("--skip-llamacpp", action="store_true")
    args = ap.parse_args()

    from liedar.models import load
    from liedar.organisms import ORGANISMS

    print(f"load average at start: {os.getloadavg()}")
    name = f"{args.model}:{args.organism}"
    base = load(args.model, backend="transformers", n_threads=args.threads)
    ratios = {}
    if not args.skip_verify:
        for org_name, (seconds, base_seconds, _status) in _bench_verify(
            args.model, args.threads, args.verify_limit
        ).items():
            ratios[f"verify time {org_name} / base's same measurement"] = seconds / base_seconds
    if args.training:
        tr = _bench_training(base, ORGANISMS[args.organism], args.examples, args.epochs)
        for k, v in tr.items():
            print(f"  training {k}: {v}")
        ratios["training cost in forward epochs (per training epoch)"] = tr["share_of_one_forward_epoch_per_epoch"]

    t_base, t_org = _median_alternating(
        lambda: load(args.model, backend="transformers", n_threads=args.threads),
        lambda: load(name, backend="transformers", n_threads=args.threads),
        args.repeats,
    )
    print(f"load transformers: base {t_base:.2f} s, organism {t_org:.2f} s")
    ratios["load time organism / base (transformers)"] = t_org / t_base

    organism = load(name, backend="transformers", n_threads=args.threads)
    _gen_speed(base, 4), _gen_speed(organism, 4)  # warm-up
    sb, so = [], []
    for _ in range(args.repeats):
        sb.append(_gen_speed(base, args.tokens))
        so.append(_gen_speed(organism, args.tokens))
    gb, go = statistics.median(sb), statistics.median(so)
    print(f"generation transformers: base {gb:.1f} tok/s, merged organism {go:.1f} tok/s")
    ratios["generation speed merged / base (transformers)"] = go / gb

    if not args.skip_llamacpp:
        t_base, t_org = _median_alternating(
            lambda: load(args.model, backend="llamacpp", n_threads=args.threads),
            lambda: load(name, backend="llamacpp", n_threads=args.threads),
            args.repeats,
        )
        print(f"load llama.cpp: base {t_base:.2f} s, organism {t_org:.2f} s")
        ratios["load time organism / base (llama.cpp)"] = t_org / t_base
        lb = load(args.model, backend="llamacpp", n_threads=args.threads)
        lo = load(name, backend="llamacpp", n_threads=args.threads)
        _gen_speed(lb, 4), _gen_speed(lo, 4)
        sb, so = [], []
        for _ in range(args.repeats):
            sb.append(_gen_speed(lb, args.tokens))
            so.append(_gen_speed(lo, args.tokens))
        gb, go = statistics.median(sb), statistics.median(so)
        print(f"generation llama.cpp: base {gb:.1f} tok/s, runtime-LoRA organism {go:.1f} tok/s")
        ratios["generation speed LoRA / base (llama.cpp)"] = go / gb

    print(f"load average at end: {os.getloadavg()}")
    for k, v in ratios.items():
        print(f"RATIO {k}: {v:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
