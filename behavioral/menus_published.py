"""The published gpt-4o-mini results of the menu study liedar's design follows, printed beside a run.

Why shipped as counts: the study (prefgraph's ``llm_benchmark/v2``, commit 2237684)
published one JSON row per configuration; liedar ships only their aggregate counts
(``items/menus_published.json``, configurations passing out of configurations, derived from
those rows) and computes every interval here with the same Wilson rule as its own rates, so
the two columns differ in the model and the design, not in the arithmetic. The designs do
differ, and the table says how: theirs has 10 vignettes a scenario (liedar's bank 8), and
their RUM verdict on the K = 20 samples is the reference library's exact test with no
allowance for sampling noise, which liedar prints as "RUM exactly consistent".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from liedar.behavioral.items.menus import PAIRS, TRIPLES
from liedar.core.errors import LiedarError
from liedar.core.stats import Estimate, wilson

PUBLISHED_FILE = Path(__file__).parent / "items" / "menus_published.json"
BY = ("scenario", "framing", "tier")
MENUS_PER_CONFIG = len(PAIRS) + len(TRIPLES)


@dataclass(frozen=True)
class Rates:
    """One published pass rate, over all configurations and by scenario, framing and tier."""

    all: Estimate
    by: dict[str, dict[str, Estimate]]


@dataclass(frozen=True)
class PublishedMenuStudy:
    """The published model's study: its temperature-0 and its K = 20 results."""

    model: str
    source: str
    design: str
    sarp_t0: Rates
    iia_reversal_configs_t0: Estimate
    iia_reversals_t0: dict[str, dict[str, int]]
    menus_answered_t0: Estimate
    sarp_modal_sampled: Rates
    rum_exact_sampled: Rates
    mixed_menus_sampled: Estimate


def _rates(raw: dict[str, Any], name: str) -> Rates:
    """Wilson intervals over ``[passed, n]`` counts, each breakdown checked to add up to the total
    (a damaged or hand-edited file is refused, not printed)."""
    total = wilson(*raw["all"])
    by = {}
    for key in BY:
        cells = raw[key]
        if [sum(c[0] for c in cells.values()), sum(c[1] for c in cells.values())] != list(raw["all"]):
            raise LiedarError(f"{PUBLISHED_FILE}: {name} by {key} does not add up to its total; reinstall liedar")
        by[key] = {k: wilson(*c) for k, c in cells.items()}
    return Rates(total, by)


@lru_cache(maxsize=1)
def published_menu_study() -> PublishedMenuStudy:
    """The published gpt-4o-mini study, read from the file liedar ships and checked on reading."""
    raw = json.loads(PUBLISHED_FILE.read_text(encoding="utf-8"))
    return PublishedMenuStudy(
        model=raw["model"],
        source=raw["source"],
        design=raw["design"],
        sarp_t0=_rates(raw["sarp_t0"], "sarp_t0"),
        iia_reversal_configs_t0=wilson(*raw["iia_reversal_configs_t0"]),
        iia_reversals_t0=raw["iia_reversals_t0"],
        menus_answered_t0=wilson(*raw["menus_answered_t0"]),
        sarp_modal_sampled=_rates(raw["sarp_modal_sampled"], "sarp_modal_sampled"),
        rum_exact_sampled=_rates(raw["rum_exact_sampled"], "rum_exact_sampled"),
        mixed_menus_sampled=wilson(*raw["mixed_menus_sampled"]),
    )


def fmt(e: Optional[Estimate]) -> str:
    """``0.84 [0.79, 0.88] (210/250)``, or an en dash for a cell this run has no data for."""
    if e is None or not e.n:
        return "–"
    return f"{e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}] ({int(e.successes or 0)}/{e.n})"


def saved_mixed_share(configs: Sequence[Mapping[str, Any]]) -> Optional[Estimate]:
    """The share of menus whose K samples were not unanimous, pooled over the menus of saved
    configurations (``ConfigResult.to_dict()`` rows) that had a parsed reply; None without any."""
    mixed = [c["mixed_menus"] for c in configs if c.get("mixed_menus") and c["mixed_menus"]["n"]]
    return wilson(sum(int(m["successes"]) for m in mixed), sum(m["n"] for m in mixed)) if mixed else None


def published_for(measure_id: str, mode: str) -> Optional[Estimate]:
    """The published number a report row of the revealed instrument is read beside: the
    temperature-0 study for the deterministic and exact modes, the K = 20 study for the
    sampled mode; None where they published nothing comparable."""
    ref = published_menu_study()
    sampled = mode == "stochastic"
    if measure_id == "sarp_pass":
        return (ref.sarp_modal_sampled if sampled else ref.sarp_t0).all
    if measure_id == "iia_reversal_configs" and not sampled:
        return ref.iia_reversal_configs_t0
    if measure_id == "mixed_menus" and sampled:
        return ref.mixed_menus_sampled
    return None


def beside_published(model: str, mode: str, configs: Sequence[Mapping[str, Any]]) -> str:
    """A markdown table of a menu study beside the published one, row by row where both
    measured the same thing: SARP by scenario, framing and tier; IIA reversals and answered
    menus (temperature 0) or RUM and mixed menus (K samples).

    ``configs`` are the study's configurations as saved (``ConfigResult.to_dict()``, or the
    rows of a record in docs/records), so a live run and a saved one print the same table.
    Rates carry Wilson 95% intervals; reversal counts are per design (theirs has 10
    vignettes a scenario, liedar's bank 8), so each carries its number of configurations."""
    ref = published_menu_study()
    sampled = mode == "stochastic"

    def rate(rows: list[bool]) -> Optional[Estimate]:
        return wilson(sum(rows), len(rows)) if rows else None

    def sarp(key: Optional[str] = None, value: str = "") -> Optional[Estimate]:
        return rate([c["sarp"]["consistent"] for c in configs if key is None or c[key] == value])

    sarp_ref = ref.sarp_modal_sampled if sampled else ref.sarp_t0
    label = "SARP pass, modal choice of K" if sampled else "SARP pass, temperature-0 choice"
    lines = [
        f"| {model} ({mode}) beside {ref.model} (theirs) | this run | {ref.model} (theirs) |",
        "|---|---|---|",
        f"| {label} | {fmt(sarp())} | {fmt(sarp_ref.all)} |",
    ]
    lines += [
        f"| {label}, {key} {value} | {fmt(sarp(key, value))} | {fmt(theirs)} |"
        for key in BY
        for value, theirs in sarp_ref.by[key].items()
    ]
    if sampled:
        rum = [c for c in configs if c.get("rum")]
        exact = ref.rum_exact_sampled
        lines.append(f"| RUM exactly consistent (no noise allowance) | "
                     f"{fmt(rate([c['rum']['exact']['consistent'] for c in rum]))} | {fmt(exact.all)} |")  # fmt: skip
        for key in ("framing", "tier"):
            for value, theirs in exact.by[key].items():
                got = rate([c["rum"]["exact"]["consistent"] for c in rum if c[key] == value])
                lines.append(f"| RUM exactly consistent, {key} {value} | {fmt(got)} | {fmt(theirs)} |")
        lines.append(f"| RUM pass, bootstrap test (liedar's) | {fmt(rate([not c['rum']['reject'] for c in rum]))} "
                     "| not published |")  # fmt: skip
        lines.append(f"| mixed menus (K samples not unanimous) | {fmt(saved_mixed_share(configs))} "
                     f"| {fmt(ref.mixed_menus_sampled)} |")  # fmt: skip
    else:
        with_reversal = rate([c["iia_reversals"] > 0 for c in configs])
        lines.append(f"| configurations with an IIA reversal | {fmt(with_reversal)} "
                     f"| {fmt(ref.iia_reversal_configs_t0)} |")  # fmt: skip
        for key in ("scenario", "framing"):
            for value, count in ref.iia_reversals_t0[key].items():
                mine = [c["iia_reversals"] for c in configs if c[key] == value]
                counted = f"{sum(mine)} in {len(mine)} configurations" if mine else "–"
                lines.append(f"| IIA reversals, {key} {value} | {counted} | {count} in "
                             f"{sarp_ref.by[key][value].n} configurations |")  # fmt: skip
        if mode == "deterministic":  # the exact law has no parse-fails: it reads letters, not replies
            menus = MENUS_PER_CONFIG * len(configs)
            answered = wilson(menus - sum(c["n_parse_fail"] for c in configs), menus) if menus else None
            lines.append(f"| menus answered on the menu | {fmt(answered)} | {fmt(ref.menus_answered_t0)} |")
    lines.append(f"\nTheirs: {ref.source}; {ref.design}.")
    return "\n".join(lines)
