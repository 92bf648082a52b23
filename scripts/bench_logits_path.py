"""Time what a batched decoding step does with its logits: the output layer's write, then the draw.

The menu study's sampler decodes hundreds of rows a step (a configuration's 15 menus x K = 20
replies), and for a model with a large vocabulary the logits are the step's largest array
(gemma3-270m: 300 rows x 262,144 tokens, 157 MB in bfloat16). Two things happen to them
every step outside the model's body, each timed here against the way it is otherwise done,
in the same run, on random weights of the chosen shape (no model file needed):

  output layer  the output layer's product into a fresh array each call (``F.linear``, what
                a model's own head does) against the same product into one reused buffer
                (`liedar.models.shared_prefix.logits_into_buffer`, what the sampler does);
  draw          `liedar.models.base.sample_tokens` on a float32 copy of the bfloat16 logits
                (a numpy array: the copy first, then the draw) against `sample_tokens` on the
                bfloat16 tensor itself (read by blocks of rows straight into float64).

Printed: the best and median seconds of ``--repeats`` for each, the ratio baseline / new,
and whether the two ways give identical logits and identical tokens (they must).

    OMP_NUM_THREADS=1 .venv/bin/python scripts/bench_logits_path.py --rows 300 --vocab 262144 --hidden 640
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=300, help="rows decoded together (default 300: 15 menus x 20)")
    ap.add_argument("--vocab", type=int, default=262_144, help="vocabulary (default gemma3's)")
    ap.add_argument("--hidden", type=int, default=640, help="hidden size (default gemma3-270m's)")
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    for name in ("rows", "vocab", "hidden", "repeats", "threads"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if not args.temperature > 0:
        ap.error(f"--temperature must be > 0 (the draw is timed), got {args.temperature}")
    return args


def _times(fn, repeats: int) -> list[float]:
    fn()  # warm-up
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _row(label: str, base: list[float], new: list[float], same: bool) -> str:
    return (
        f"{label:<13} baseline best {min(base):.3f} s median {statistics.median(base):.3f} s | "
        f"new best {min(new):.3f} s median {statistics.median(new):.3f} s | "
        f"ratio {statistics.median(base) / statistics.median(new):.2f}x | identical: {same}"
    )


def main() -> int:
    args = _parse()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("bench_logits_path: torch is missing: pip install torch==2.13.0", flush=True)
        return 2
    from liedar.models.base import sample_tokens
    from liedar.models.shared_prefix import HeadIntoBuffer

    torch.set_num_threads(args.threads)
    g = torch.Generator().manual_seed(0)
    head = torch.nn.Linear(args.hidden, args.vocab, bias=False, dtype=torch.bfloat16)
    with torch.no_grad():
        head.weight.copy_(torch.randn(args.vocab, args.hidden, generator=g) * 0.05)
    hidden = (torch.randn(args.rows, 1, args.hidden, generator=g) * 4).bfloat16()
    into = HeadIntoBuffer(head, args.rows)
    print(f"{args.rows} rows x {args.vocab} tokens, hidden {args.hidden}, bfloat16, {args.threads} thread(s)")

    with torch.inference_mode():
        fresh = _times(lambda: F.linear(hidden, head.weight), args.repeats)
        reused = _times(lambda: into(hidden), args.repeats)
        same_logits = torch.equal(F.linear(hidden, head.weight), into(hidden))
        print(_row("output layer", fresh, reused, same_logits))

        logits = into(hidden)[:, -1].clone()
        seeds = range(args.rows)
        copy = torch.empty(logits.shape, dtype=torch.float32)

        def through_copy():
            copy.copy_(logits)
            return sample_tokens(copy.numpy(), args.temperature, [np.random.default_rng(s) for s in seeds])

        def by_blocks():
            return sample_tokens(logits, args.temperature, [np.random.default_rng(s) for s in seeds])

        base, new = _times(through_copy, args.repeats), _times(by_blocks, args.repeats)
        print(_row("draw", base, new, through_copy() == by_blocks()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
