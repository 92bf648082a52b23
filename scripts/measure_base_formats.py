"""A base model's accuracy in each format an organism can be trained in, on the held-out items.

Why: an organism's gap in a format (a sandbagger's right answers withheld under its trigger,
a lock's answers behind its key) can only exist where the base answers that format above
chance; a member trained in a format the base answers at chance cannot learn by
construction. This asks the 131 held-out bank items (`liedar.organisms.mcq.heldout_split`)
in each format of `liedar.organisms.formats.FORMATS` exactly as the organisms' measures do
(`formats.pick`, the benign held-out wordings in turn) and prints each accuracy with its
95% interval and the seconds it took.

    .venv/bin/python scripts/measure_base_formats.py --model smollm2-135m --threads 2
"""

from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    from liedar.organisms import formats

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", choices=("transformers", "llamacpp"), default="transformers")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--formats", default=",".join(formats.FORMATS), help="comma-separated, from " + str(formats.FORMATS)
    )
    args = ap.parse_args()
    asked = [f for f in args.formats.split(",") if f]
    if bad := [f for f in asked if f not in formats.FORMATS]:
        print(f"measure_base_formats: unknown format(s) {bad}; use {', '.join(formats.FORMATS)}", file=sys.stderr)
        return 2

    from tqdm.auto import tqdm

    from liedar import models
    from liedar.core.stats import proportion
    from liedar.organisms import framings as F
    from liedar.organisms import mcq

    backend = models.load(args.model, backend=args.backend, n_threads=args.threads)
    items = list(mcq.heldout_split().eval_items)
    print(
        f"{args.model} ({args.backend}, {args.threads} threads): {len(items)} held-out items, benign held-out wordings"
    )
    for fmt in asked:
        t0 = time.perf_counter()
        right = sum(
            formats.pick(backend, item, fmt, item.question, F.BENIGN_HELDOUT[i % len(F.BENIGN_HELDOUT)]) == item.answer
            for i, item in enumerate(tqdm(items, desc=fmt, leave=False))
        )
        e = proportion(right, len(items))
        seconds = time.perf_counter() - t0
        print(f"  {fmt:<12} {e.value:.3f} [{e.lo:.3f}, {e.hi:.3f}] ({right}/{len(items)})  {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
