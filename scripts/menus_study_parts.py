"""Run the menu study one scenario at a time on one loaded model, saving each part as it ends.

Why: on a shared machine a full run can outlast the time available, and the command line
writes its JSON only at the end; here every finished scenario is on disk (and its tables
printed), so a run that has to stop still leaves whole scenarios to report.

    OMP_NUM_THREADS=1 .venv/bin/python scripts/menus_study_parts.py --mode exact --framings minimal --out runs/menus
    .venv/bin/python scripts/menus_study_parts.py --mode exact --workers 2 --out runs/menus   # two one-thread processes
    .venv/bin/python scripts/menus_study_parts.py --tables runs/menus   # the whole study's tables from the parts
    .venv/bin/python scripts/menus_study_parts.py --mode whole --workers 2 --out runs/whole   # exact and sampled

``--mode whole`` runs the exact and the sampled study together on one pool of warm workers,
each configuration's prompts read once for both (`run_whole_study_pooled`), and saves
``exact.json`` and ``stochastic.json`` when the whole design has run: the time saved is the
point, so it is not cut into scenarios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", default="transformers", choices=("transformers", "llamacpp"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--workers", type=int, default=1, help="one-thread worker processes, one configuration each (default 1)"
    )
    ap.add_argument("--mode", default="exact", choices=("deterministic", "stochastic", "exact", "whole"))
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"), help="transformers weights")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--scenarios", default=None, help="comma-separated (default all, in the bank's order)")
    ap.add_argument("--framings", default=None, help="comma-separated (default all)")
    ap.add_argument("--out", type=Path, help="folder for one JSON per scenario")
    ap.add_argument(
        "--tables",
        type=Path,
        help="print the tables of the parts saved in this folder (or one record file); run nothing",
    )
    args = ap.parse_args()
    if args.tables:
        print(parts_tables([args.tables] if args.tables.is_file() else sorted(args.tables.glob("*.json"))))
        return 0
    if args.out is None:
        ap.error("--out is required to run the study")

    from liedar.core.errors import LiedarError

    try:
        return _run(args)
    except LiedarError as exc:  # bad arguments: one line, before any model loads
        print(f"menus_study_parts: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    """The study as ``args`` asks, saving as it goes."""
    from liedar import models
    from liedar.behavioral.items.menus import SCENARIOS
    from liedar.behavioral.menus_summary import study_tables
    from liedar.behavioral.runners.menus import StudySettings, check_study_arguments, run_menu_study
    from liedar.behavioral.runners.menus_pool import run_menu_study_pooled, run_whole_study_pooled
    from liedar.core._util.atomic import write_json_atomic

    scenarios = args.scenarios.split(",") if args.scenarios else list(SCENARIOS)
    framings = args.framings.split(",") if args.framings else None
    for mode in ("exact", "stochastic") if args.mode == "whole" else (args.mode,):
        check_study_arguments(mode, args.samples, args.temperature, scenarios, None, framings)
    args.out.mkdir(parents=True, exist_ok=True)
    settings = StudySettings(mode=args.mode, samples=args.samples, temperature=args.temperature)
    load_kwargs = {"dtype": args.dtype} if args.backend == "transformers" else {}
    if args.mode == "whole":
        load0, t0 = os.getloadavg()[0], time.perf_counter()
        both = run_whole_study_pooled(
            args.model, backend=args.backend, workers=args.workers, scenarios=scenarios, framings=framings,
            settings=settings, load_kwargs=load_kwargs, progress=True,
        )  # fmt: skip
        secs = time.perf_counter() - t0
        for mode, res in both.items():
            data = _part(args, secs, load0, res)
            data["with"] = "the exact and the sampled study in one run: the seconds are both modes'"
            write_json_atomic(args.out / f"{mode}.json", data)
            print(f"{mode}: {len(res.configs)} configurations\n{study_tables(res)}\n", flush=True)
        print(f"both modes: {secs:.0f} s (load {load0:.1f} -> {os.getloadavg()[0]:.1f})")
        return 0
    backend = None
    if args.workers == 1:
        backend = models.load(args.model, backend=args.backend, n_threads=args.threads, **load_kwargs)
    for scenario in scenarios:
        load0, t0 = os.getloadavg()[0], time.perf_counter()
        if backend is None:
            res = run_menu_study_pooled(
                args.model, backend=args.backend, workers=args.workers, scenarios=[scenario], framings=framings,
                settings=settings, load_kwargs=load_kwargs, progress=False,
            )  # fmt: skip
        else:
            res = run_menu_study(
                backend, mode=args.mode, samples=args.samples, temperature=args.temperature, scenarios=[scenario],
                framings=framings, progress=False,
            )  # fmt: skip
        secs = time.perf_counter() - t0
        data = _part(args, secs, load0, res)
        write_json_atomic(args.out / f"{scenario}.json", data)
        print(f"{scenario}: {len(res.configs)} configurations in {secs:.0f} s (load {load0:.1f} -> "
              f"{data['load_after']:.1f})\n{study_tables(res)}\n", flush=True)  # fmt: skip
    return 0


def _part(args: argparse.Namespace, secs: float, load0: float, res) -> dict:
    """A saved part: the result and how long it took, on what, under which load."""
    return {
        "seconds": secs,
        "workers": args.workers,
        "dtype": args.dtype if args.backend == "transformers" else None,
        "load_before": load0,
        "load_after": os.getloadavg()[0],
        "result": res.to_dict(),
    }


def parts_tables(paths: list[Path]) -> str:
    """The study's markdown tables over every saved part (one scenario each): SARP on the
    temperature-0 choice by scenario × framing and by tier, IIA reversals by scenario and by
    framing, Houtman-Maks; in exact mode RUM on the exact law by framing and tier and the
    probability that a reply starts with a menu letter; in stochastic mode RUM on the K
    samples by framing and tier (the bootstrap test, and the exact test with no allowance
    for sampling noise), the share of mixed menus and of replies that failed to parse; then
    the study beside the published gpt-4o-mini one. Rates carry Wilson 95% intervals."""
    import json
    from collections import defaultdict

    from liedar.behavioral.menus_published import beside_published, fmt
    from liedar.core.stats import wilson

    configs, seconds, loads, mode, temperature = [], 0.0, [], "", 0.0
    model = "this run"
    for path in paths:
        part = json.loads(path.read_text(encoding="utf-8"))
        model = part["result"].get("model", model)
        configs += part["result"]["configs"]
        seconds += part["seconds"]
        loads += [part["load_before"], part["load_after"]]
        mode, temperature = part["result"]["mode"], part["result"]["temperature"]
    if not configs:
        return "no parts saved"

    def rate(rows: list[bool]) -> str:  # a cell of the design this part did not run: –
        return fmt(wilson(sum(rows), len(rows)) if rows else None)

    def by(key: str, value) -> dict[str, list]:
        out: dict[str, list] = defaultdict(list)
        for c in configs:
            got = value(c)
            if got is not None:
                out[c[key]].append(got)
        return out

    scenarios = list(dict.fromkeys(c["scenario"] for c in configs))
    framings = list(dict.fromkeys(c["framing"] for c in configs))
    lines = [
        f"{len(configs)} configurations × 15 menus, mode {mode}"
        + (f", T = {temperature}" if mode != "deterministic" else "")
        + f"; {seconds:.0f} s over {len(paths)} part(s), load {min(loads):.1f}-{max(loads):.1f}",
        "",
        "| SARP pass | " + " | ".join(framings) + " | all |",
        "|---|" + "---|" * (len(framings) + 1),
    ]
    for scenario in scenarios:
        mine = [c for c in configs if c["scenario"] == scenario]
        cells = [rate([c["sarp"]["consistent"] for c in mine if c["framing"] == f]) for f in framings]
        lines.append(f"| {scenario} | " + " | ".join(cells) + f" | {rate([c['sarp']['consistent'] for c in mine])} |")
    lines.append(
        "| all | "
        + " | ".join(rate(v) for v in by("framing", lambda c: c["sarp"]["consistent"]).values())
        + f" | {rate([c['sarp']['consistent'] for c in configs])} |"
    )
    tiers = by("tier", lambda c: c["sarp"]["consistent"])
    lines += ["", "SARP pass by tier: " + ", ".join(f"{t} {rate(v)}" for t, v in tiers.items())]
    for key in ("scenario", "framing"):
        iia = by(key, lambda c: c["iia_reversals"])
        lines.append(f"IIA reversals by {key}: " + ", ".join(f"{k} {sum(v)}" for k, v in iia.items()))
    lines += _mechanism_lines([c for c in configs if c.get("log") and c.get("presented")])
    hm = [c["houtman_maks"]["n_drop"] for c in configs]
    lines.append(f"Houtman-Maks: mean {sum(hm) / len(hm):.2f} of 15 menus, max {max(hm)}")
    if mode == "exact":
        lines += _exact_lines(configs, rate, by)
    if mode == "stochastic":
        lines += _sampled_lines(configs, rate, by)
    fails = by("scenario", lambda c: c["n_parse_fail"])
    lines.append("Parse-fails by scenario: " + ", ".join(f"{k} {sum(v)}" for k, v in fails.items()))
    lines += ["", beside_published(model, mode, configs)]
    return "\n".join(lines)


def _exact_lines(configs: list[dict], rate, by) -> list[str]:
    """The exact mode's lines: RUM on the exact law by framing and tier, its distance to the
    nearest mixture of rankings, and how much of the first token the menu letters hold."""
    lines = []
    law = [c["rum_law"]["consistent"] for c in configs if c.get("rum_law")]
    lines.append(f"RUM on the exact law: {rate(law)}")
    for key in ("framing", "tier"):
        cells = by(key, lambda c: c["rum_law"]["consistent"] if c.get("rum_law") else None)
        lines.append(f"  by {key}: " + ", ".join(f"{k} {rate(v)}" for k, v in cells.items()))
    gaps = [c["rum_law"]["l1_gap"] for c in configs if c.get("rum_law")]
    lines.append(f"  L1 distance to the nearest mixture of rankings: mean {sum(gaps) / len(gaps):.2f}")
    mass = by("framing", lambda c: sum(c["law_mass"]) / len(c["law_mass"]) if c.get("law_mass") else None)
    lines.append(
        "Probability the reply starts with a menu letter, mean by framing: "
        + ", ".join(f"{k} {sum(v) / len(v):.2f}" for k, v in mass.items())
    )
    first = [menu[0] for c in configs if c.get("law") for menu in c["law"] if menu]
    lines.append(
        f"Probability of the option lettered A (letters shuffled per menu): mean {sum(first) / len(first):.2f}"
    )
    return lines


def _sampled_lines(configs: list[dict], rate, by) -> list[str]:
    """The stochastic mode's RUM, mixed-menu and parse-fail lines (``rate``, ``by``: `parts_tables`'s helpers)."""
    from liedar.behavioral.menus_published import saved_mixed_share

    with_rum = [c for c in configs if c.get("rum")]
    lines = [f"RUM on the K samples (bootstrap test): {rate([not c['rum']['reject'] for c in with_rum])}"]
    for key in ("framing", "tier"):
        cells = by(key, lambda c: not c["rum"]["reject"] if c.get("rum") else None)
        lines.append(f"  by {key}: " + ", ".join(f"{k} {rate(v)}" for k, v in cells.items()))
    lines.append(
        f"RUM exactly consistent (no noise allowance): {rate([c['rum']['exact']['consistent'] for c in with_rum])}"
    )
    share = saved_mixed_share(configs)
    mixed = "no menu had a parsed reply"
    if share is not None:
        mixed = f"{share.value:.3f} [{share.lo:.3f}, {share.hi:.3f}] (n={share.n})"
    lines.append(f"Mixed menus (the K samples not unanimous): {mixed}")
    replies = by("framing", lambda c: (c["n_parse_fail"], sum(c["rum"]["samples_per_menu"]) + c["n_parse_fail"]))
    lines.append(
        "Replies that failed to parse, by framing: "
        + ", ".join(f"{f} {sum(a for a, _ in v) / sum(b for _, b in v):.3f}" for f, v in replies.items())
    )
    return lines


def _mechanism_lines(configs: list[dict]) -> list[str]:
    """IIA reversals by pattern (`liedar.behavioral.revealed.iia_mechanisms`), by scenario, for
    parts that kept each configuration's choices (the compact records in docs/records do not)."""
    from collections import Counter

    from liedar.behavioral.revealed import IIA_MECHANISMS
    from liedar.behavioral.runners.menus import mechanism_counts

    per_scenario: dict[str, Counter] = {}
    for c in configs:
        per_scenario.setdefault(c["scenario"], Counter()).update(
            mechanism_counts(c["log"], c["scenario"], c["presented"])
        )
    if not per_scenario:
        return []
    lines = ["IIA reversals by pattern (a reversal can fit several): " + ", ".join(IIA_MECHANISMS)]
    for scenario, found in per_scenario.items():
        lines.append(f"  {scenario}: " + " / ".join(str(found[m]) for m in IIA_MECHANISMS))
    return lines


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
