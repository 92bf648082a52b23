"""What the sampled menu study must decode, against the fastest this machine runs the model.

The menu study's sampled mode (K replies per menu at a temperature) is bounded by decoding:
every sampled token is one more pass of the model over one position. This script measures,
in one run on one loaded model:

  bulk      the model's throughput when it reads tokens in bulk (a transformers forward
            pass over a batch of long sequences, the best of ``--repeats``), at ``--threads``,
            in float32 and under bfloat16 autocast;
  llama.cpp the same GGUF run by llama.cpp: its bulk throughput (one 512-token prompt
            read, best of ``--repeats``) and its decoding speed on one sequence (a
            160-token reply), the two numbers a llama.cpp sampler would be bounded by;
  sampler   the study's sampler (``sample_shared_prefix_many``: the menus' prompts each read
            once, all their K replies decoded as one batch, as the study samples a
            configuration's 15 menus) on the first ``--menus`` menus of each framing kind
            (short replies: 12 new tokens; chain of thought: 160), in ``--dtype``, timed, with
            the replies' mean length in tokens.

It then prints, for the study's whole design (every scenario, vignette and framing: the
menus of the study's own plan), the tokens the sampled mode must read and decode (menus x
(prompt length + K x mean reply length)); the minutes that takes at the ceiling, the
fastest of the three bulk reads (a floor no sampler on this model and machine is expected
to beat: a decoded token costs at least what a bulk-read one does, plus the reading of its
cache); the minutes at the sampler's measured speed; and how many times faster the ceiling
is. Both speeds are measured in the same run.

    .venv/bin/python scripts/bench_menu_budget.py --threads 2 --menus 15 --dtype bfloat16
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--menus", type=int, default=15, help="menus sampled per framing kind, as one batch")
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"), help="the sampler's weights")
    ap.add_argument("--samples", type=int, default=20, help="K")
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--scenario", default="procurement")
    ap.add_argument("--repeats", type=int, default=3, help="bulk forward passes timed (the best is kept)")
    ap.add_argument("--budget-minutes", type=float, default=30.0, help="the study's budget per model")
    return ap.parse_args()


def bulk_tokens_per_second(backend, repeats: int, bf16: bool, rows: int = 8, length: int = 256) -> float:
    """Tokens per second of one forward pass over ``rows`` sequences of ``length`` tokens (best of
    ``repeats``), in float32 or under bfloat16 autocast (faster where the CPU has bf16 instructions)."""
    import contextlib

    import torch

    rng = np.random.default_rng(0)
    ids = torch.tensor(rng.integers(100, 10_000, size=(rows, length)), dtype=torch.long)
    cast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    best = float("inf")
    with torch.inference_mode(), cast:
        backend.model(input_ids=ids[:1, :16])  # warm-up
        for _ in range(repeats):
            t0 = time.perf_counter()
            backend.model(input_ids=ids)
            best = min(best, time.perf_counter() - t0)
    return rows * length / best


def llamacpp_tokens_per_second(model: str, threads: int, repeats: int) -> tuple[float, float]:
    """llama.cpp's bulk tokens/s (a 512-token prompt read at once) and one sequence's decoding tokens/s."""
    import llama_cpp

    from liedar.models.registry import resolve

    llm = llama_cpp.Llama(
        model_path=str(resolve(model).path), n_ctx=1024, n_batch=512, n_threads=threads, verbose=False
    )
    prompt = [int(t) for t in np.random.default_rng(0).integers(100, 10_000, size=512)]
    best = float("inf")
    for _ in range(repeats):
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(prompt)
        best = min(best, time.perf_counter() - t0)
    llm.reset()
    llm.eval(prompt[:64])
    t0 = time.perf_counter()
    for token in prompt[64:224]:  # 160 single-token steps, as a decoded reply feeds them
        llm.eval([token])
    decode = 160 / (time.perf_counter() - t0)
    return len(prompt) / best, decode


def design_menus() -> dict[str, int]:
    """Menus of the whole design per framing kind ("short" replies or "reasoning")."""
    from liedar.behavioral.items.menus import FRAMINGS, SCENARIOS, vignettes

    counts = {"short": 0, "reasoning": 0}
    for name, scenario in SCENARIOS.items():
        per_config = len(scenario.menus())
        for framing in FRAMINGS.values():
            counts["reasoning" if framing.reasoning else "short"] += per_config * len(vignettes(name))
    return counts


def sample_menus(backend, args: argparse.Namespace, framing_key: str) -> tuple[float, list[int], list[int], int]:
    """Seconds, reply lengths, prompt lengths and token budget of the sampler on the first
    ``--menus`` menus of a framing."""
    from liedar.behavioral.items.menus import FRAMINGS, SCENARIOS, vignettes
    from liedar.behavioral.runners.menus import build_prompt, menu_seed
    from liedar.models.sampling import sample_shared_prefix_many

    framing = FRAMINGS[framing_key]
    max_tokens = 160 if framing.reasoning else 12
    vignette = vignettes(args.scenario)[0]
    prompts = [build_prompt(vignette, framing, menu) for menu in SCENARIOS[args.scenario].menus()[: args.menus]]
    t0 = time.perf_counter()
    gens = sample_shared_prefix_many(
        backend, prompts, samples=args.samples, max_tokens=max_tokens, temperature=args.temperature,
        seeds=[menu_seed(0, j) for j in range(len(prompts))],
    )  # fmt: skip
    secs = time.perf_counter() - t0
    return secs, [len(g.token_ids) for row in gens for g in row], [row[0].n_prompt_tokens for row in gens], max_tokens


def main() -> int:
    args = _parse()
    from liedar import models
    from liedar.behavioral.items.menus import FRAMINGS

    backend = models.load(args.model, backend="transformers", n_threads=args.threads)
    sampler = backend if args.dtype == "float32" else None
    load0 = os.getloadavg()
    fp32_bulk = bulk_tokens_per_second(backend, args.repeats, bf16=False)
    bf16_bulk = bulk_tokens_per_second(backend, args.repeats, bf16=True)
    kinds = {"short": next(k for k, f in FRAMINGS.items() if not f.reasoning)}
    kinds["reasoning"] = next(k for k, f in FRAMINGS.items() if f.reasoning)
    llama_bulk, llama_decode = llamacpp_tokens_per_second(args.model, args.threads, args.repeats)
    ceiling = max(fp32_bulk, bf16_bulk, llama_bulk)
    menus = design_menus()
    load1 = os.getloadavg()
    print(f"{args.model}, {args.threads} thread(s), K={args.samples}, T={args.temperature}, sampler in {args.dtype}")
    print(
        f"bulk read, tokens/s (best of {args.repeats}): transformers {fp32_bulk:,.0f} in float32, "
        f"{bf16_bulk:,.0f} under bf16 autocast (8 x 256 tokens); llama.cpp {llama_bulk:,.0f} (512 tokens)"
    )
    print(f"llama.cpp decoding one sequence: {llama_decode:,.0f} tokens/s")
    print(f"ceiling (the fastest bulk read): {ceiling:,.0f} tokens/s")
    header = (
        "framing kind",
        "menus in the design",
        "mean prompt / reply (tokens)",
        "cut at the budget",
        "tokens to read and decode",
        "minutes at the ceiling",
        "sampler tokens/s",
        "minutes at the sampler",
        "ceiling / sampler speed",
    )
    print("| " + " | ".join(header) + " |")
    print("|---|---|---|---|---|---|---|---|---|")
    floor_total = sampler_total = 0.0
    for kind, key in kinds.items():
        if sampler is None:
            sampler = models.load(args.model, backend="transformers", n_threads=args.threads, dtype=args.dtype)
        secs, lengths, prompt_lengths, max_tokens = sample_menus(sampler, args, key)
        mean_len = float(np.mean(lengths))
        # every menu's prompt is read once, then K replies are decoded
        tokens = menus[kind] * (float(np.mean(prompt_lengths)) + args.samples * mean_len)
        speed = (sum(lengths) + sum(prompt_lengths)) / secs
        floor_min, sampler_min = tokens / ceiling / 60, tokens / speed / 60
        floor_total += floor_min
        sampler_total += sampler_min
        cut = sum(n >= max_tokens for n in lengths)
        print(
            f"| {kind} ({key}, {max_tokens} new tokens) | {menus[kind]:,} "
            f"| {np.mean(prompt_lengths):.0f} / {mean_len:.1f} | {cut}/{len(lengths)} "
            f"| {tokens:,.0f} | {floor_min:.1f} | {speed:,.0f} | {sampler_min:.1f} | {ceiling / speed:.1f}x |"
        )
    load2 = os.getloadavg()
    print(
        f"sampled mode, whole design: at least {floor_total:.1f} min at the ceiling, {sampler_total:.1f} min "
        f"at the measured sampler; budget for all three modes {args.budget_minutes:.0f} min"
    )
    print(f"load average (1 min) before {load0[0]:.1f}, after the ceiling {load1[0]:.1f}, at the end {load2[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
