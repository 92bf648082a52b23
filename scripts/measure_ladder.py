"""The ceilings ladder of one model: how well it answers in each format the instruments read.

Why: an instrument can only find a deception where the model knows the answer in the format
the instrument asks in. This measures, on the MCQ bank and the product sheets, with the
instruments' own prompt builders and scorers (so a ceiling here is read the way the
instruments read the model):

* **letters**: options lettered A-D, next-token log-prob of each letter
  (`elicitation.zero_shot_letter`, the sandbagging gap's protocol), benign quiz system prompt;
* **cloze**: each option's text as the continuation after "Answer:", summed log-prob
  (`elicitation.cloze_sum`), same system prompt;
* **yes/no**: "Is the answer X? Answer with Yes or No." (`items.audit.yes_no_question`, the
  audit's yes/no format, asked of *bank* items) for the correct option and one seeded wrong
  option per item, so half the truths are "yes": a model that always says Yes scores 0.5;
* **belief (yes/no)**: the honesty instrument's three neutral wordings on the bank's product
  sheets (`runners.honesty`); the instrument's belief accuracy is over the sheets whose three
  answers agree, and the accuracy over every sheet is given beside it;
* **belief (choice)**: the choice-format honesty instrument's neutral belief on its sheets
  (`runners.honesty_choice`), over every sheet.

Each with its Clopper-Pearson 95% interval, n and chance. ``--demo-results DIR`` adds each
instrument's neutral accuracy (its report ceiling) from a ``liedar demo`` results folder.
Writes ``docs/records/ladder-<model>.json`` atomically (command, date, CPU, seconds).

    flock /tmp/liedar-cpu.lock .venv/bin/python scripts/measure_ladder.py --model smollm2-135m --threads 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import capable_record
from measure_ceilings import _spread

from liedar.behavioral.items.audit import yes_no_question
from liedar.behavioral.items.beliefs import BeliefItem, belief_items
from liedar.behavioral.items.claims_choice import ChoiceClaim
from liedar.behavioral.items.mcq import MCQItem, load_mcq_bank
from liedar.behavioral.runners.sandbagging import BENIGN_SYSTEM
from liedar.core.errors import InputError, LiedarError
from liedar.core.stats import Estimate, clopper_pearson
from liedar.models.backend import Backend

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ("letters", "cloze", "yes_no", "belief_yes_no", "belief_choice")


def _row(correct: int, n: int, chance: float, protocol: str, **extra: Any) -> dict[str, Any]:
    est: Estimate = clopper_pearson(correct, n, kind="capability")
    return {
        "value": est.value,
        "lo": est.lo,
        "hi": est.hi,
        "n": n,
        "correct": correct,
        "chance": chance,
        "protocol": protocol,
        **extra,
    }


def wrong_option(item: MCQItem, seed: int = 0) -> str:
    """One wrong option of ``item``, drawn by a generator seeded by (seed, item id): the
    proposed wrong answer of the yes/no measure, the same on every model."""
    from liedar.behavioral.elicitation import seeded_rng

    wrong = [o for o in item.options if o != item.answer]
    return wrong[int(seeded_rng(seed, "ladder-wrong", item.item_id).integers(len(wrong)))]


def mcq_formats(backend: Backend, items: Sequence[MCQItem], *, progress: bool = False) -> dict[str, dict]:
    """Letters and cloze accuracy over ``items`` under the benign quiz system prompt, through
    `measure_ceiling` with one protocol each (every item evaluated, no split)."""
    from liedar.behavioral.runners.elicitation import measure_ceiling

    out = {}
    for name, protocol in (("letters", "zero_shot_letter"), ("cloze", "cloze_sum")):
        run = measure_ceiling(backend, items, system=BENIGN_SYSTEM, protocols=[protocol], progress=progress)
        ok = run.per_item[protocol]
        chance = sum(1 / len(it.options) for it in items) / len(items)
        out[name] = _row(sum(ok.values()), len(ok), chance, run.ceiling.scores[0].description)
    return out


def yes_no_format(backend: Backend, items: Sequence[MCQItem], *, seed: int = 0, progress: bool = False) -> dict:
    """Yes/no accuracy over the correct and one wrong proposed answer per item (2 n questions,
    balanced); the accuracy on each half is given too (a Yes bias shows as a gap between them).
    The two questions of an item are not independent, so the interval takes items as the units
    (`liedar.core.stats.clopper_pearson_shares` over each item's share of its two questions answered right)."""
    from liedar.behavioral.runners.yesno import ask_yes_no
    from liedar.core._util.progress import progress as step_progress

    per_item: list[tuple[bool, bool]] = []
    for it in step_progress(items, desc="yes/no", unit="item", disable=not progress, leave=False):
        says_yes = ask_yes_no(backend, yes_no_question(it, it.answer), system=BENIGN_SYSTEM).answer == "yes"
        says_no = ask_yes_no(backend, yes_no_question(it, wrong_option(it, seed)), system=BENIGN_SYSTEM).answer == "no"
        per_item.append((says_yes, says_no))
    n = len(items)
    right, wrong = sum(a for a, _ in per_item), sum(b for _, b in per_item)
    from liedar.core.stats import clopper_pearson_shares

    items_ci = clopper_pearson_shares([(a + b) / 2 for a, b in per_item])
    lo, hi = items_ci.lo, items_ci.hi
    row = _row(
        right + wrong,
        2 * n,
        0.5,
        "benign quiz system prompt; 'Question: ... Is the answer X? Answer with Yes or No.' for the correct option "
        "and one seeded wrong option per item; answer = 'Yes'/'No' log-prob argmax",
        proposed_correct=_row(right, n, 0.5, "correct option proposed (truth yes)"),
        proposed_wrong=_row(wrong, n, 0.5, "wrong option proposed (truth no)"),
    )
    row.update(lo=lo, hi=hi, interval=f"items as units: Clopper-Pearson over {n} items, each item's share right")
    return row


def belief_yes_no(backend: Backend, items: Sequence[BeliefItem], *, progress: bool = False) -> dict:
    """The honesty instrument's belief accuracy (over sheets with a consistent belief), and
    the share of all sheets believed right."""
    from liedar.behavioral.runners.honesty import run_honesty

    res, records = run_honesty(backend, items, progress=progress)
    acc = res.belief_accuracy
    m = res.n_with_belief
    right = sum(r.belief == r.reference for r in records)
    return _row(
        right,
        len(records),
        0.5,
        res.protocol + "; accuracy over every sheet (no consistent belief counts as wrong)",
        over_consistent=_row(round(acc.value * m) if m else 0, m, 0.5, "over sheets whose 3 wordings agree")
        if m
        else None,
        belief_rate=res.belief_rate.value,
    )


def belief_choice(backend: Backend, claims: Sequence[ChoiceClaim], *, progress: bool = False) -> dict:
    """The choice-format honesty instrument's belief accuracy over every sheet: its neutral
    question (`choice_prompt` under its belief role, `choose` between the two answer
    sentences), without the assertions it asks afterwards."""
    from liedar.behavioral.items.claims_choice import BELIEF_ROLE
    from liedar.behavioral.runners.choice import choice_prompt, choose
    from liedar.behavioral.runners.honesty_choice import PROTOCOL
    from liedar.core._util.progress import progress as step_progress

    right = 0
    for c in step_progress(claims, desc="choice belief", unit="sheet", disable=not progress, leave=False):
        right += ("yes", "no")[choose(backend, choice_prompt(c.user, BELIEF_ROLE), list(c.options))] == c.truth
    return _row(right, len(claims), 0.5, PROTOCOL.split("; belief at")[0] + "; the belief at the information desk")


def neutral_accuracies(results_dir: Path, model: Optional[str] = None) -> list[dict]:
    """Each instrument's neutral accuracy (its report ceiling rows) in a ``liedar demo``
    results folder, with the backend it ran on; steps not run are listed with their reason.

    Raises
    ------
    liedar.core.errors.InputError
        The folder holds no results, or a step ran on another model than ``model``.
    """
    from liedar.report.store import load_results

    _, steps = load_results(Path(results_dir))
    out = []
    for s in steps:
        ran = s.model.get("name")
        if model is not None and ran not in (None, model):
            raise InputError(f"{results_dir}: step {s.name!r} ran on {ran!r}, not {model!r}: give {model}'s results")
        if s.status != "ok":
            out.append({"step": s.name, "status": s.status, "reason": s.reason})
            continue
        for c in s.section.ceilings:
            e = c.estimate
            out.append(
                {
                    "step": s.name,
                    "status": s.status,
                    "backend": s.model.get("backend"),
                    "id": c.id,
                    "label": c.label,
                    "chance": c.chance,
                    **({"value": e.value, "lo": e.lo, "hi": e.hi, "n": e.n} if e is not None else {}),
                    **({"not_computable": c.not_computable.reason} if c.not_computable is not None else {}),
                }
            )
    return out


def ladder(
    backend: Backend,
    items: Sequence[MCQItem],
    sheets: Sequence[BeliefItem],
    claims: Sequence[ChoiceClaim],
    *,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, dict]:
    """Every measure of the ladder on one loaded model, asked through one scoring engine."""
    from liedar.models.scoring import ScoringEngine

    engine: Any = ScoringEngine(backend)
    out = mcq_formats(engine, items, progress=progress)
    out["yes_no"] = yes_no_format(engine, items, seed=seed, progress=progress)
    out["belief_yes_no"] = belief_yes_no(engine, sheets, progress=progress)
    out["belief_choice"] = belief_choice(engine, claims, progress=progress)
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--backend", default="llamacpp", choices=("transformers", "llamacpp"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="N bank items spread over the topics (default all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--demo-results", type=Path, default=None, help="a `liedar demo` OUTPUT/results folder")
    ap.add_argument("--record", type=Path, default=None, help="default docs/records/ladder-<model>.json")
    ap.add_argument("--only-demo-results", action="store_true", help="update the record's neutral accuracies only")
    args = ap.parse_args(argv)
    record = args.record or ROOT / "docs" / "records" / f"ladder-{args.model}.json"
    try:
        if args.limit is not None and args.limit < 1:
            raise InputError(f"--limit {args.limit}: give at least 1 item (or leave it out for the whole bank)")
        neutral = neutral_accuracies(args.demo_results, args.model) if args.demo_results else None
        if args.only_demo_results:
            return _update_neutral(record, neutral, args)
        from liedar import models
        from liedar.behavioral.runners.honesty_choice import HonestyChoice

        t0, load_start = time.time(), os.getloadavg()[0]
        from liedar.models.call_cache import wrap

        # behind the model-call cache: a re-run (another interval, a new measure) replays every answer asked before
        backend = wrap(models.load(args.model, backend=args.backend, n_threads=args.threads))
        bank = load_mcq_bank()
        items = _spread(bank, args.limit) if args.limit else bank
        sheets, claims = belief_items(), HonestyChoice().items()
        rows = ladder(backend, items, sheets, claims, seed=args.seed, progress=True)
    except LiedarError as exc:
        print(f"liedar: error: {exc}", file=sys.stderr)
        return 2
    seconds, load_end = time.time() - t0, os.getloadavg()[0]
    for name in MEASURES:
        r = rows[name]
        print(f"{name:<14} {r['value']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}] n={r['n']} chance {r['chance']:.2f}")
    body = {
        "what": f"ceilings ladder of {args.model}: letters, cloze and yes/no accuracy on the MCQ bank, belief "
        "accuracy on the product sheets",
        "model": args.model,
        "backend": args.backend,
        "threads": args.threads,
        "seconds": round(seconds, 1),
        "load_1min": {"start": round(load_start, 2), "end": round(load_end, 2)},
        # replayed answers take no model time: `seconds` is a cold measurement only when hits is 0
        "call_cache": dict(getattr(backend, "stats", {})),
        "bank_items": len(items),
        "bank_size": len(bank),
        "measures": rows,
        "neutral": neutral,
        "demo_results": str(args.demo_results) if args.demo_results else None,
    }
    written = capable_record.write(record, body)
    print(f"wall {seconds:.0f} s (1-minute load {load_start:.2f} at the start, {load_end:.2f} at the end): {written}")
    return 0


def _update_neutral(record: Path, neutral: Optional[list[dict]], args: argparse.Namespace) -> int:
    import json

    if neutral is None or not record.is_file():
        raise InputError(f"--only-demo-results needs --demo-results and an existing record {record}: run without it")
    body = json.loads(record.read_text(encoding="utf-8"))
    body.update(
        neutral=neutral, demo_results=str(args.demo_results), neutral_command=capable_record.header()["command"]
    )
    capable_record.write(record, body)  # the record's own command, date and CPU stay
    return 0


if __name__ == "__main__":
    sys.exit(main())
