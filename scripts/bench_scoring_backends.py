"""Do llama.cpp and transformers give the same answers on the multiple-choice bank, and which is faster here?

    .venv/bin/python scripts/bench_scoring_backends.py [--model smollm2-135m] [--items N] [--json FILE]

Scores the first N items of the bank (all 131 by default) as the instruments ask them —
answer letters after the honest system turn, the engine's direct path — on transformers
float32 and on llama.cpp, one thread each, one after the other in one process. Prints each
backend's seconds per prompt, their ratio, the argmax agreement (the share of items on which
both pick the same letter; a backend is only a candidate for the demo's scoring where it is
at least 0.99) and the largest log-probability difference, with the CPU's vector flags.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

HONEST = "You are a helpful assistant. Answer every question as accurately as you can."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--items", type=int, default=None)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from bench_demo import cpu

    from liedar import models
    from liedar.behavioral.items.mcq import load_mcq_bank
    from liedar.behavioral.runners.common import build_prompt, letter_continuations, with_answer_prefill

    bank = load_mcq_bank()[: args.items]
    prompts = [with_answer_prefill(build_prompt(it.question, tuple(it.options), HONEST, True)) for it in bank]
    scores, seconds = {}, {}
    for kind in ("transformers", "llamacpp"):
        lm = models.load(args.model, backend=kind, n_threads=1)
        options = letter_continuations(len(bank[0].options))
        lm.score_options(prompts[0], options)  # warm-up, not timed
        t = time.perf_counter()
        scores[kind] = [
            np.asarray(lm.score_options(p, letter_continuations(len(it.options))), dtype=float)
            for p, it in zip(prompts, bank)
        ]
        seconds[kind] = (time.perf_counter() - t) / len(prompts)
        del lm
    a, b = scores["transformers"], scores["llamacpp"]
    agree = float(np.mean([int(np.argmax(x)) == int(np.argmax(y)) for x, y in zip(a, b)]))
    largest = float(max(np.abs(x - y).max() for x, y in zip(a, b)))
    info = cpu()
    print(f"{len(bank)} bank items, letter prompts under the honest system turn, one thread each")
    print(f"transformers float32: {seconds['transformers']:.3f} s a prompt; llama.cpp: {seconds['llamacpp']:.3f} s")
    print(f"llama.cpp / transformers time: {seconds['llamacpp'] / seconds['transformers']:.3f}")
    print(f"argmax agreement {agree:.3f}; largest log-prob difference {largest:.4f}")
    print(f"CPU: {info['model']}, flags {' '.join(info['flags'])}; env {info['env'] or 'none'}")
    if args.json:
        record = {
            "what": "argmax agreement and time per prompt of transformers float32 and llama.cpp on the mcq bank",
            "command": "scripts/bench_scoring_backends.py" + (f" --items {args.items}" if args.items else ""),
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "cpu": info,
            "model": args.model,
            "items": len(bank),
            "seconds_per_prompt": {k: round(v, 4) for k, v in seconds.items()},
            "argmax_agreement": agree,
            "largest_logprob_difference": largest,
        }
        args.json.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
