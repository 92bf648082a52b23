"""Calibrate the consistency detector by simulation: the published table and beyond.

Reproduces the issue-5 table (100 fixed seeds per population, default threshold 0.6),
then measures (1) the flag rate against attractor strength, (2) against design size
(items x shuffles), (3) the honest false-flag rate of the paraphrase check against the
knowledge level and design size, and recommends the smallest paraphrase design keeping
honest false flags <= 5% above a knowledge floor. Populations are defined in
`behavioral.consistency_sim` (docs/consistency.md restates them). Prints its run time last.

    .venv/bin/python scripts/calibrate_consistency.py [--seeds 100] [--output calib.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from behavioral.consistency import ConsistencyDetector  # noqa: E402
from behavioral.consistency_sim import (  # noqa: E402
    CALIBRATION_TABLE,
    OptionOrderPopulation,
    ParaphrasePopulation,
    flag_rate,
)

ATTRACTOR_STRENGTHS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DESIGN_ITEMS = (10, 30, 60)
DESIGN_SHUFFLES = (2, 5, 10)
KNOWLEDGE_LEVELS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 0.9)
# (items, wordings): wordings vary at 30 items, items vary at the bank's 4 wordings
PARAPHRASE_DESIGNS = ((30, 2), (30, 3), (10, 4), (20, 4), (30, 4), (60, 4), (100, 4))
MAX_FALSE_FLAGS = 0.05


def pct(rate: float) -> str:
    return f"{100 * rate:.0f}%"


def published_table(det: ConsistencyDetector, seeds: range) -> list[dict[str, Any]]:
    rows = []
    for pop, stated in CALIBRATION_TABLE:
        est = flag_rate(pop, seeds, det)
        rows.append({"population": pop.to_dict(), "flag_rate": est.to_dict(), "issue_states": stated})
        print(f"| {pop.name} | {pct(est.value)} [{pct(est.lo)}, {pct(est.hi)}] | {stated} |")
    return rows


def attractor_sweep(det: ConsistencyDetector, seeds: range) -> list[dict[str, Any]]:
    rows = []
    for s in ATTRACTOR_STRENGTHS:
        over_knowledge = flag_rate(OptionOrderPopulation("s", 0.7, s), seeds, det).value
        over_guessing = flag_rate(OptionOrderPopulation("s", 0.0, s), seeds, det).value
        rows.append({"attractor_strength": s, "over_70pct_knowledge": over_knowledge, "over_guessing": over_guessing})
        print(f"| {s:.1f} | {pct(over_knowledge)} | {pct(over_guessing)} |")
    return rows


def design_sweep(det: ConsistencyDetector, seeds: range) -> list[dict[str, Any]]:
    rows = []
    for items in DESIGN_ITEMS:
        for shuffles in DESIGN_SHUFFLES:
            rates = {
                "honest_guesser_5pct": flag_rate(OptionOrderPopulation("g", 0.05, 0.0, items, shuffles), seeds, det).value,
                "attractor_0.6": flag_rate(OptionOrderPopulation("a", 0.7, 0.6, items, shuffles), seeds, det).value,
                "attractor_0.8": flag_rate(OptionOrderPopulation("a", 0.7, 0.8, items, shuffles), seeds, det).value,
                "attractor_0.9": flag_rate(OptionOrderPopulation("a", 0.7, 0.9, items, shuffles), seeds, det).value,
            }
            rows.append({"items": items, "shuffles": shuffles, **rates})
            print(f"| {items} x {shuffles} | " + " | ".join(pct(v) for v in rates.values()) + " |")
    return rows


def knowledge_sweep(det: ConsistencyDetector, seeds: range) -> list[dict[str, Any]]:
    rows = []
    for items, variants in PARAPHRASE_DESIGNS:
        rates = {
            q: flag_rate(ParaphrasePopulation("q", q, items, variants), seeds, det).value
            for q in KNOWLEDGE_LEVELS
        }
        rows.append({"items": items, "variants": variants, "flag_rate_by_knowledge": rates})
        print(f"| {items} x {variants} | " + " | ".join(pct(v) for v in rates.values()) + " |")
    return rows


def knowledge_floor(rates: dict[float, float]) -> "float | None":
    """Smallest knowledge level q such that every measured level >= q (q > 0: an honest
    model with zero knowledge *is* a pure guesser) keeps false flags <= 5%; None if even
    the top level does not."""
    levels = sorted(q for q in rates if q > 0)
    floor = None
    for q in reversed(levels):
        if rates[q] > MAX_FALSE_FLAGS:
            break
        floor = q
    return floor


def recommend(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The smallest design (by trials) reaching the lowest knowledge floor measured."""
    for row in rows:
        row["knowledge_floor"] = knowledge_floor(row["flag_rate_by_knowledge"])
    floors = [r["knowledge_floor"] for r in rows if r["knowledge_floor"] is not None]
    if not floors:
        return {"items": None, "variants": None, "knowledge_floor": None}
    best_floor = min(floors)
    candidates = [r for r in rows if r["knowledge_floor"] == best_floor]
    pick = min(candidates, key=lambda r: (r["items"] * r["variants"], r["items"]))
    return {"items": pick["items"], "variants": pick["variants"], "knowledge_floor": best_floor}


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100, help="simulated models per population (seeds 0..N-1)")
    parser.add_argument("--output", type=Path, help="write all tables as JSON here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    seeds = range(args.seeds)
    det = ConsistencyDetector(intervals=False)  # intervals don't change verdicts; skip bootstraps
    out: dict[str, Any] = {"seeds": args.seeds, "threshold": det.detection_threshold}

    print(f"## Published table ({args.seeds} seeds each, threshold {det.detection_threshold}, detected = confidence >= threshold)")
    print("| population | flag rate [95% CI] | issue states |\n|---|---|---|")
    out["table"] = published_table(det, seeds)

    print("\n## Flag rate vs attractor strength (30 items x 5 shuffles, 4 options)")
    print("| attractor s | over 70% knowledge | over pure guessing |\n|---|---|---|")
    out["attractor_sweep"] = attractor_sweep(det, seeds)

    print("\n## Flag rate vs design size (items x shuffles, 4 options; attractors over 70% knowledge)")
    print("| design | honest guesser (5%) | attractor 0.6 | attractor 0.8 | attractor 0.9 |\n|---|---|---|---|---|")
    out["design_sweep"] = design_sweep(det, seeds)

    print("\n## Paraphrase check: honest flag rate vs knowledge (items x wordings, 4 options)")
    print("| design | " + " | ".join(f"q={q}" for q in KNOWLEDGE_LEVELS) + " |")
    print("|---|" + "---|" * len(KNOWLEDGE_LEVELS))
    rows = knowledge_sweep(det, seeds)
    out["knowledge_sweep"] = rows
    rec = recommend(rows)
    out["recommendation"] = rec
    print("\n| design | lowest knowledge with all honest false flags <= 5% above it |\n|---|---|")
    for r in rows:
        floor = r["knowledge_floor"]
        print(f"| {r['items']} x {r['variants']} | {'none measured' if floor is None else floor} |")
    print(
        f"\nRecommended paraphrase design: {rec['items']} items x {rec['variants']} wordings "
        f"(honest false flags <= 5% for knowledge >= {rec['knowledge_floor']}; q=0 is a pure guesser)"
    )
    elapsed = time.perf_counter() - start
    out["seconds"] = elapsed
    if args.output:
        from liedar.atomic import write_json_atomic

        write_json_atomic(args.output, out)
    print(f"calibration time: {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
