"""Every elicitation protocol's MCQ accuracy on one model, and the winner's-curse-free ceiling.

Scores the MCQ bank (`behavioral/items/mcq.py`) under the benign quiz system prompt with
each protocol of `behavioral.runners.elicitation`, chooses the protocol on a seeded
selection split (a third of the items, stratified by topic) and reports its accuracy on the
disjoint evaluation split (Clopper-Pearson 95%). Also prints every protocol's accuracy on
both splits and on all scored items (descriptive only: the best of those is biased up).
The k-shot examples come from a seeded 8-item pool carved off the bank when every item is
scored (`default_shot_pool`). Prints the ceiling last.

    .venv/bin/python scripts/measure_ceilings.py --model smollm2-135m --threads 1 [--limit 60] [--output out.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.behavioral.runners.elicitation import DEFAULT_PROTOCOLS, DEFAULT_SHOTS, measure_ceiling
from liedar.behavioral.runners.sandbagging import BENIGN_SYSTEM
from liedar.core._util.atomic import write_json_atomic
from liedar.core.stats import clopper_pearson


def _spread(items: list, n: int) -> list:
    """``n`` items at evenly spaced positions of the topic-ordered bank."""
    return list(items) if n >= len(items) else [items[(i * len(items)) // n] for i in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", default="transformers", choices=("transformers", "llamacpp"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="score N items spread over the topics (default all)")
    ap.add_argument("--k", type=int, default=DEFAULT_SHOTS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--protocols", default=",".join(DEFAULT_PROTOCOLS))
    ap.add_argument("--output", type=Path, default=None)
    args = ap.parse_args()

    from liedar import models

    t0 = time.time()
    backend = models.load(args.model, backend=args.backend, n_threads=args.threads)
    bank = load_mcq_bank()
    items = _spread(bank, args.limit) if args.limit else bank
    run = measure_ceiling(
        backend,
        items,
        system=BENIGN_SYSTEM,
        protocols=args.protocols.split(","),
        k=args.k,
        seed=args.seed,
        progress=True,
    )
    c = run.ceiling
    all_ids = sorted(set(c.selection_ids) | set(c.evaluation_ids))
    print(
        f"{args.model} ({args.backend}, {args.threads} thread(s)): {len(all_ids)} items scored "
        f"({len(c.selection_ids)} selection, {len(c.evaluation_ids)} evaluation), "
        f"shot pool {len(run.context.shot_pool)}, k={run.context.k}, seed {args.seed}; chance {c.chance:.2f}"
    )
    print(f"{'protocol':<20} {'selection':>22} {'evaluation':>22} {'all scored items':>22}")
    fmt = lambda e: f"{e.value:.3f} [{e.lo:.3f}, {e.hi:.3f}] n={e.n}"  # noqa: E731
    table = []
    for s in c.scores:
        k_all = sum(run.per_item[s.name][i] for i in all_ids)
        whole = clopper_pearson(k_all, len(all_ids), kind="capability")
        table.append({**s.to_dict(), "all_items": whole.to_dict()})
        print(f"{s.name:<20} {fmt(s.selection) if s.selection else '-':>22} {fmt(s.evaluation):>22} {fmt(whole):>22}")
    seconds = time.time() - t0
    if args.output:
        write_json_atomic(
            args.output,
            {
                "model": args.model,
                "backend": args.backend,
                "threads": args.threads,
                "seconds": seconds,
                "run": run.to_dict(),
                "table": table,
            },
        )
    print(f"score_options calls {run.score_calls}; wall {seconds:.0f} s (machine shared with other jobs)")
    print(
        f"ceiling: {c.chosen} {fmt(c.estimate)} on the evaluation split (chosen on the selection split), "
        f"chance {c.chance:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
