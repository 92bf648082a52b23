"""Benchmark: scoring and extraction tokens/s on qwen2.5-coder-1.5b, against smollm2-135m.

For each backend (llama.cpp on the GGUF, transformers on the dequantized copy at the
model's default dtype: bfloat16 for the 1.5B where the CPU computes it natively, float32
otherwise and for smollm2-135m), in one run on the same machine:

* **scoring**: ``score_options`` on MCQ bank items (cloze over the four option texts);
  tokens = the prompt's tokens plus every option's tokens, per item;
* **extraction**: ``hidden_states`` (last token, three layers) on the same items'
  questions; tokens = the rendered inputs' tokens.

Each figure is the median of ``--repeats`` timed passes after one warm-up item. Prints
tokens/s per model and backend, the 1.5B's ratio to smollm2-135m measured in the same run
(the baseline), and the CPU's flags (and any ISA cap: run it once natively and once with
``ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2``).

    flock /tmp/liedar-cpu.lock .venv/bin/python scripts/bench_capable.py --threads 2 \
        --record docs/records/bench-capable-native.json
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path

import capable_record

CAPABLE, BASELINE = "qwen2.5-coder-1.5b", "smollm2-135m"


def items(n: int) -> list:
    from liedar.behavioral.items.mcq import load_mcq_bank

    bank = load_mcq_bank()
    return [bank[(i * len(bank)) // n] for i in range(n)]


def timed(fn, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def measure(model: str, backend: str, bank: list, threads: int, repeats: int) -> dict:
    from liedar import models

    t0 = time.perf_counter()
    lm = models.load(model, backend=backend, n_threads=threads)
    loaded = time.perf_counter() - t0
    prompts = [f"Question: {it.question}\nAnswer:" for it in bank]
    score_tokens = sum(
        len(lm.encode(p).ids) + sum(len(lm.tokenize(" " + o)[0]) for o in it.options) for p, it in zip(prompts, bank)
    )
    questions = [it.question for it in bank]
    extract_tokens = sum(len(lm.encode(q).ids) for q in questions)
    third = lm.n_layers // 3
    layers = [third, 2 * third, 3 * third]
    lm.score_options(prompts[0], [" " + o for o in bank[0].options])  # warm-up
    lm.hidden_states(questions[:1], layers, "last")
    score_s = timed(
        lambda: [lm.score_options(p, [" " + o for o in it.options]) for p, it in zip(prompts, bank)], repeats
    )
    extract_s = timed(lambda: lm.hidden_states(questions, layers, "last"), repeats)
    row = {
        "model": model,
        "backend": backend,
        "dtype": getattr(lm, "dtype_name", "gguf"),
        "load_s": round(loaded, 2),
        "items": len(bank),
        "score_tokens": score_tokens,
        "score_s": round(score_s, 3),
        "score_tok_s": round(score_tokens / score_s, 1),
        "extract_tokens": extract_tokens,
        "extract_s": round(extract_s, 3),
        "extract_tok_s": round(extract_tokens / extract_s, 1),
    }
    return row  # the model is freed when this frame ends


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=24, help="MCQ items (default 24)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--backends", default="llamacpp,transformers")
    ap.add_argument("--record", type=Path, help="write the record JSON here")
    args = ap.parse_args()
    cpu = capable_record.cpu()
    print(f"CPU: {cpu['model']}, {cpu['cores']} cores, flags {' '.join(cpu['flags'])}; {cpu['mode']} {cpu['isa_caps']}")
    bank = items(args.n)
    rows = []
    for backend in args.backends.split(","):
        for model in (CAPABLE, BASELINE):
            rows.append(measure(model, backend, bank, args.threads, args.repeats))
            gc.collect()
            r = rows[-1]
            print(
                f"{model:<20} {backend:<12} {r['dtype']:<9} load {r['load_s']:6.1f} s  "
                f"scoring {r['score_tok_s']:8.1f} tok/s  extraction {r['extract_tok_s']:8.1f} tok/s",
                flush=True,
            )
    ratios = []
    for backend in args.backends.split(","):
        cap, base = (next(r for r in rows if r["model"] == m and r["backend"] == backend) for m in (CAPABLE, BASELINE))
        for task in ("score", "extract"):
            ratios.append(
                {"backend": backend, "task": task, "ratio": round(cap[f"{task}_tok_s"] / base[f"{task}_tok_s"], 4)}
            )
            print(f"{backend:<12} {task:<8} 1.5B / smollm2-135m tokens/s = {ratios[-1]['ratio']:.3f}")
    if args.record:
        body = {"threads": args.threads, "repeats": args.repeats, "rows": rows, "ratios": ratios}
        print(f"record: {capable_record.write(args.record, body)}")


if __name__ == "__main__":
    main()
