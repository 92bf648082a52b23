"""Time cloze option scoring: the prompt run once for all options against one full sequence per option.

``score_options`` scores each option as a continuation of the prompt. When the options share
the prompt's tokens (cloze answers after "Answer:", several tokens each), the transformers
backend runs the prompt once and decodes the options as one batch over its KV cache, and
the llama.cpp backend does the same when loaded with ``reuse_prefix=True`` (the prompt kept
in the context's memory, each option decoded after it); the baseline is the generic path,
the four prompt + option sequences (``token_logprobs_of_ids``). Both run in the same process
on the same bank items, alternating item by item so a shared machine's load falls on both.
Printed: seconds per item for each, the ratio, the largest difference between the two
paths' log-probabilities, whether every argmax agrees, and the load before and after.
``--model`` takes an organism's card folder too (its adapter on the base).

    OMP_NUM_THREADS=1 .venv/bin/python scripts/bench_option_scoring.py --items 40
    .venv/bin/python scripts/bench_option_scoring.py --backend llamacpp --threads 2 --items 20 \
        --model zoo/qwen2.5-coder-1.5b/password_locked
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", choices=("transformers", "llamacpp"), default="transformers")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--items", type=int, default=40, help="MCQ bank items, four cloze options each")
    args = ap.parse_args()

    from liedar import models
    from liedar.behavioral.items.mcq import load_mcq_bank
    from liedar.behavioral.runners.elicitation import cloze_prompt
    from liedar.models.chat import render

    def full_sequences(prompt, options):
        head = render(prompt, backend.chat_template, bos_token=backend.bos_token, eos_token=backend.eos_token,
                      add_generation_prompt=True)  # fmt: skip
        seqs, starts = [], []
        for option in options:
            ids, offsets = backend.tokenize(head.text + option, head.templated)
            seqs.append(ids)
            starts.append(next(t for t, (a, b) in enumerate(offsets) if b > len(head.text)))
        return np.array([float(lp[k - 1 :].sum()) for lp, k in zip(backend.token_logprobs_of_ids(seqs), starts)])

    extra = {"reuse_prefix": True} if args.backend == "llamacpp" else {}
    backend = models.load(args.model, backend=args.backend, n_threads=args.threads, **extra)
    items = load_mcq_bank()[: args.items]
    times = {"full": 0.0, "shared": 0.0}
    worst, agree = 0.0, 0
    load0 = os.getloadavg()[0]
    backend.score_options(cloze_prompt(items[0], None, True), [" " + o for o in items[0].options])  # warm-up
    for i, item in enumerate(items):
        prompt, conts = cloze_prompt(item, None, True), [" " + o for o in item.options]
        got = {}
        for way in ("full", "shared") if i % 2 == 0 else ("shared", "full"):
            t0 = time.perf_counter()
            got[way] = full_sequences(prompt, conts) if way == "full" else backend.score_options(prompt, conts)
            times[way] += time.perf_counter() - t0
        worst = max(worst, float(np.max(np.abs(got["full"] - got["shared"]))))
        agree += int(np.argmax(got["full"]) == np.argmax(got["shared"]))
    n = len(items)
    print(f"{args.model} ({args.backend}), {n} bank items x 4 cloze options, {args.threads} thread(s), "
          f"load {load0:.2f} -> {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"  full sequences : {times['full'] / n:.3f} s / item")
    print(f"  prompt once    : {times['shared'] / n:.3f} s / item")
    print(f"  ratio          : {times['full'] / times['shared']:.2f}x")
    print(f"  largest |difference| of a log-prob: {worst:.2e}; argmax agrees on {agree}/{n} items")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
