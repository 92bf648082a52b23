"""Benchmark: liedar's hidden-state extraction vs a bare forward pass of the same model.

For each backend, in its own subprocess (so peak memory is that backend's alone):

* **liedar** — ``backend.hidden_states(texts, layers, "last")``: chat-free rendering,
  tokenization with offsets, length-sorted batching, hooks / eval callback, pooling;
* **bare** — the same token ids through the same model, same batches, same threads, with
  nothing captured: transformers' decoder forward (no hooks, no LM head — liedar's path does
  not compute logits either) / a llama.cpp context *without* the eval callback making the
  same packed decodes as liedar (several sequences per ``llama_decode``, one ``seq_id``
  each, grouped by the backend's own ``packs``; logits for each sequence's last token only,
  as liedar's path does for middle layers).

The baseline is given pre-tokenized ids, so liedar's tokenization counts against it. Each
measurement is the median of ``--repeats`` alternating runs. Prints inputs/s, the ratio
per backend, llama.cpp vs transformers throughput, peak RSS, and the worst ratio last
(target >= 0.9).

    .venv/bin/python scripts/bench_extract.py --model smollm2-135m --n 64 --threads 2

For llama.cpp the same alternating loop also times liedar with packing switched off (one
sequence per decode, ``n_seq_max`` set to 1 for the call) and prints the paired speed-up
that packing buys.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

SUBJECTS = ["Paris", "The Nile", "Mount Everest", "The heart", "Copper", "Shakespeare", "The Moon", "Tokyo"]
CLAIMS = [
    "is located in Europe.",
    "is the longest river in the world, flowing through eleven countries in north-eastern Africa.",
    "has a height of about 8,849 metres above sea level.",
    "pumps blood through the body of every mammal, including humans and whales.",
    "conducts electricity well.",
    "wrote many plays, including Hamlet, Macbeth, Othello and King Lear, in the late sixteenth century.",
]


def statements(n: int) -> list[str]:
    return [f"{SUBJECTS[i % len(SUBJECTS)]} {CLAIMS[i % len(CLAIMS)]}" for i in range(n)]


def bench_one(args) -> dict:
    from liedar import models

    layers = [int(x) for x in args.layers.split(",")]
    texts = statements(args.n)
    t0 = time.perf_counter()
    lm = models.load(args.model, backend=args.backend, n_threads=args.threads)
    load_s = time.perf_counter() - t0
    encoded = [lm.encode(t).ids for t in texts]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    batches = [[encoded[i] for i in order[lo : lo + lm.batch_size]] for lo in range(0, len(order), lm.batch_size)]
    bare = _bare_hf(lm, batches) if args.backend == "transformers" else _bare_llamacpp(lm, batches)

    def ours():
        lm.hidden_states(texts, layers, "last")

    def ours_unpacked():
        packing = lm.n_seq_max
        lm.n_seq_max = 1
        try:
            lm.hidden_states(texts, layers, "last")
        finally:
            lm.n_seq_max = packing

    fns = [("bare", bare), ("liedar", ours)]
    if args.backend == "llamacpp" and lm.n_seq_max > 1:
        fns.append(("unpacked", ours_unpacked))
    for _, fn in fns:  # warm-up
        fn()
    times = {label: [] for label, _ in fns}
    for _ in range(args.repeats):
        for label, fn in fns:
            start = time.perf_counter()
            fn()
            times[label].append(time.perf_counter() - start)
    med = {k: statistics.median(v) for k, v in times.items()}
    extra = {}
    if "unpacked" in times:
        extra["packing_speedup"] = statistics.median(u / p for u, p in zip(times["unpacked"], times["liedar"]))
        extra["packs"] = sum(len(lm.packs(b)) for b in batches)
    return {
        **extra,
        "backend": args.backend,
        "load_s": load_s,
        "n_inputs": args.n,
        "mean_tokens": sum(map(len, encoded)) / len(encoded),
        "liedar_inputs_per_s": args.n / med["liedar"],
        "bare_inputs_per_s": args.n / med["bare"],
        "ratio": med["bare"] / med["liedar"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _bare_hf(lm, batches):
    import torch

    decoder = lm.model.get_decoder()

    def run():
        with torch.inference_mode():
            for batch in batches:
                ids, mask = lm.padded(batch)
                decoder(input_ids=ids, attention_mask=mask, use_cache=False)

    return run


def _bare_llamacpp(lm, batches):
    """The same packed decodes liedar makes (same context parameters, same groups of
    sequences from `lm.packs`, one seq_id per sequence, logits for each sequence's last
    token) on a second context with no eval callback."""
    from llama_cpp import llama_cpp as L

    params = L.llama_context_default_params()
    params.n_ctx = params.n_batch = lm.n_ctx
    params.n_ubatch = L.llama_n_ubatch(lm.context)
    params.n_seq_max = lm.n_seq_max
    params.kv_unified = True
    params.n_threads = params.n_threads_batch = args_threads
    ctx = L.llama_init_from_model(lm.llm.model, params)
    packs = [[[batch[k] for k in pack] for pack in lm.packs(batch)] for batch in batches]

    def run():
        for batch in packs:
            for seqs in batch:
                L.llama_memory_clear(L.llama_get_memory(ctx), True)
                b = L.llama_batch_init(sum(map(len, seqs)), 0, 1)
                i = 0
                for seq_id, seq in enumerate(seqs):
                    for pos, tok in enumerate(seq):
                        b.token[i], b.pos[i], b.n_seq_id[i] = tok, pos, 1
                        b.seq_id[i][0] = seq_id
                        b.logits[i] = 1 if pos == len(seq) - 1 else 0
                        i += 1
                b.n_tokens = i
                assert L.llama_decode(ctx, b) == 0
                L.llama_batch_free(b)

    return run


args_threads = 2


def main() -> int:
    global args_threads
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--n", type=int, default=64, help="number of statements")
    p.add_argument("--layers", default="6,12")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--backends", default="transformers,llamacpp")
    p.add_argument("--backend", help=argparse.SUPPRESS)  # internal: run one backend, print JSON
    args = p.parse_args()
    args_threads = args.threads
    if args.backend:
        print(json.dumps(bench_one(args)))
        return 0
    results = {}
    for backend in args.backends.split(","):
        cmd = [
            sys.executable,
            __file__,
            "--backend",
            backend,
            "--model",
            args.model,
            "--n",
            str(args.n),
            "--layers",
            args.layers,
            "--threads",
            str(args.threads),
            "--repeats",
            str(args.repeats),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            return 1
        results[backend] = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"model {args.model}, {args.n} statements, layers {args.layers}, position last, {args.threads} threads, "
        f"median of {args.repeats}"
    )
    for r in results.values():
        print(
            f"{r['backend']:>12}: liedar {r['liedar_inputs_per_s']:7.1f} inputs/s | bare forward "
            f"{r['bare_inputs_per_s']:7.1f} inputs/s | ratio {r['ratio']:.3f} | mean {r['mean_tokens']:.1f} tokens | "
            f"load {r['load_s']:.1f}s | peak RSS {r['peak_rss_mb']:.0f} MB"
        )
    if "packing_speedup" in results.get("llamacpp", {}):
        r = results["llamacpp"]
        print(
            f"llama.cpp packing: {args.n} sequences in {r['packs']} decodes; liedar packed / one sequence per "
            f"decode, median of paired ratios: {r['packing_speedup']:.3f}x"
        )
    if {"transformers", "llamacpp"} <= results.keys():
        speed = results["llamacpp"]["liedar_inputs_per_s"] / results["transformers"]["liedar_inputs_per_s"]
        print(f"llama.cpp vs transformers extraction throughput: {speed:.2f}x")
    worst = min(results.values(), key=lambda r: r["ratio"])
    print(f"extraction / bare forward ratio (worst backend, {worst['backend']}; target >= 0.9): {worst['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
