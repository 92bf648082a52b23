"""How hard the audit split is for one model, beside the detectors' banks it complements.

Scores a seeded, topic-spread draw of the audit split's multiple-choice items
(`liedar.behavioral.items.audit.AUDIT_ITEMS`) and of the detectors' bank
(`liedar.behavioral.items.mcq.MCQ_ITEMS`) in the cloze format under the benign quiz system
prompt (the neutral prompt of the choice sycophancy row: an item answered right here is a
"known" item, the denominator of that row), and the belief accuracy on product sheets (the
sheet's answer sentence chosen at the information desk, `claims_choice.BELIEF_ROLE`) of the
audit split and of the bank's choice claims. Prints each accuracy with its Clopper-Pearson
95% interval, and the audit items' accuracy per topic.

    OMP_NUM_THREADS=1 .venv/bin/python scripts/measure_audit_items.py --model smollm2-135m \\
        --backend llamacpp --items 60 --sheets 24
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict

from liedar.behavioral.items.audit import AUDIT_ITEMS, audit_choice_claims
from liedar.behavioral.items.claims_choice import BELIEF_ROLE, choice_claims
from liedar.behavioral.items.mcq import MCQ_ITEMS
from liedar.behavioral.runners.choice import choice_prompt, choose
from liedar.behavioral.runners.elicitation import cloze_prompt
from liedar.behavioral.runners.sandbagging import BENIGN_SYSTEM
from liedar.core.stats import clopper_pearson


def _line(label: str, right: int, n: int) -> str:
    e = clopper_pearson(right, n)
    return f"{label:<30} {right:>3}/{n:<3} = {e.value:.3f}  [{e.lo:.3f}, {e.hi:.3f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", default="llamacpp", choices=("transformers", "llamacpp"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--items", type=int, default=60, help="multiple-choice items drawn from each bank")
    ap.add_argument("--sheets", type=int, default=24, help="defect products drawn from each set of sheets")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.items < 1 or args.sheets < 1:
        print("liedar: error: --items and --sheets must be at least 1", file=sys.stderr)
        return 2

    from liedar import models

    t0 = time.time()
    backend = models.load(args.model, backend=args.backend, n_threads=args.threads)
    print(f"{args.model} ({args.backend}, {args.threads} thread(s)), seed {args.seed}")
    for label, source in (("audit split, cloze", AUDIT_ITEMS), ("detectors' bank, cloze", MCQ_ITEMS)):
        items = source.draw(args.items, args.seed)
        right = [
            it.options[choose(backend, cloze_prompt(it, BENIGN_SYSTEM, True), it.options)] == it.answer for it in items
        ]
        print(_line(label, sum(right), len(right)))
        if source is AUDIT_ITEMS:
            by_topic: dict[str, list[bool]] = defaultdict(list)
            for it, ok in zip(items, right):
                by_topic[it.topic].append(ok)
            for topic, oks in sorted(by_topic.items()):
                print(f"    {topic:<20} {sum(oks)}/{len(oks)}")
    for label, claims in (
        ("audit split, sheet belief", audit_choice_claims(args.sheets, seed=args.seed)),
        ("bank's sheets, sheet belief", choice_claims(args.sheets, seed=args.seed)),
    ):
        right = [c.options[choose(backend, choice_prompt(c.user, BELIEF_ROLE), c.options)] == c.answer for c in claims]
        print(_line(label, sum(right), len(right)))
    print(f"wall time {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
