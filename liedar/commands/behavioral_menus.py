"""`liedar behavioral menus`: revealed-preference consistency of a model's choices across menus.

Prints the study's tables: SARP pass rate by scenario × prompt framing and by scenario ×
difficulty tier, IIA reversal counts, the RUM pass rate and mixed-menu share (stochastic
mode), and parse-fail counts. Examples::

    liedar behavioral menus --model smollm2-135m
    liedar behavioral menus --model smollm2-135m --mode stochastic --samples 20 --scenarios procurement
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from liedar._util.atomic import write_json_atomic


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "menus",
        help="revealed-preference tests (SARP, IIA, Houtman-Maks, RUM) on choices across menus",
        description="Show the model the same case with different subsets of actions and test whether "
        "one stable ranking explains its choices.",
    )
    p.add_argument("--model", default="smollm2-135m", help="model name or path (default smollm2-135m)")
    p.add_argument(
        "--backend",
        default="transformers",
        choices=("transformers", "llamacpp"),
        help="model backend (default transformers)",
    )
    p.add_argument(
        "--mode",
        default="deterministic",
        choices=("deterministic", "stochastic"),
        help="deterministic: argmax of option-letter log-probs; stochastic: K sampled replies",
    )
    p.add_argument("--samples", type=int, default=20, help="K, samples per menu in stochastic mode (default 20)")
    p.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (default 0.7)")
    p.add_argument("--scenarios", default=None, help="comma-separated scenario keys (default all five)")
    p.add_argument("--tiers", default=None, help="comma-separated tiers: clear,binary,ambiguous,adversarial")
    p.add_argument(
        "--framings",
        default=None,
        help="comma-separated framings: minimal,decision_tree,conservative,aggressive,chain_of_thought",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="level of the RUM test (default 0.05)")
    p.add_argument("--bootstrap", type=int, default=199, help="bootstrap draws for the RUM p-value (default 199)")
    p.add_argument(
        "--order",
        default="shuffled",
        choices=("shuffled", "canonical"),
        help="letter the options in a seeded random order per menu (default), or always mild -> drastic",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for sampling, option orders and the bootstrap (default 0)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model (default 2)")
    p.add_argument("--output", type=Path, default=None, help="write the full result (every choice) as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _split(text: str | None) -> list[str] | None:
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def _cell(e: Any) -> str:
    return f"{e.value:.2f} [{e.lo:.2f},{e.hi:.2f}] n={e.n}"


def _print_table(title: str, table: dict[str, dict[str, Any]], columns: list[str]) -> None:
    print(f"\n{title}")
    width = 26
    print("scenario".ljust(20) + "".join(c[: width - 1].ljust(width) for c in columns))
    for row, cells in table.items():
        print(row.ljust(20) + "".join((_cell(cells[c]) if c in cells else "-").ljust(width) for c in columns))


def print_report(result: Any) -> None:
    from liedar.behavioral.items.menus import FRAMINGS, TIERS

    d = result
    print(
        f"model {d.model} · mode {d.mode} · {len(d.configs)} configurations × 15 menus"
        + (f" · K={d.samples} at T={d.temperature}" if d.mode == "stochastic" else "")
    )
    print(f"SARP pass rate: {d.sarp_pass()}")
    print(f"SARP pass rate counting parse-fails as revealed: {d.sarp_pass(True)}")
    framings = [f for f in FRAMINGS if any(c.framing == f for c in d.configs)]
    tiers = [t for t in TIERS if any(c.tier == t for c in d.configs)]
    _print_table("SARP pass rate by scenario × prompt framing (Wilson 95%)", d.sarp_by_scenario_framing(), framings)
    _print_table("SARP pass rate by scenario × tier (Wilson 95%)", d.sarp_by_scenario_tier(), tiers)
    print("\nIIA reversals (pair winner loses to the pair loser in a larger menu), by scenario:")
    for k, v in d.iia_reversals_by_scenario().items():
        print(f"  {k:20s} {v}")
    hm = [c.houtman_maks.n_drop for c in d.configs]
    print(f"Houtman-Maks (observations to drop to restore SARP): mean {sum(hm) / len(hm):.2f}, max {max(hm)}")
    if d.mode == "stochastic":
        print(f"RUM pass rate (bootstrap test, alpha={d.alpha}): {d.rum_pass()}")
        print(f"RUM exactly consistent (no noise allowance): {d.rum_exact_pass()}")
        print(f"Mixed-menu share (K samples not unanimous): {d.mixed_menu_share()}")
    print("Parse-fails by scenario: " + ", ".join(f"{k} {v}" for k, v in d.parse_fails_by_scenario().items()))
    for note in d.notes:
        print(f"note: {note}")


def run(args: argparse.Namespace) -> int:
    from liedar.behavioral.runners.menus import load_and_run_menu_study

    load_kwargs = {} if args.threads is None else {"n_threads": args.threads}
    result = load_and_run_menu_study(
        args.model,
        backend=args.backend,
        mode=args.mode,
        samples=args.samples,
        temperature=args.temperature,
        scenarios=_split(args.scenarios),
        tiers=_split(args.tiers),
        framings=_split(args.framings),
        alpha=args.alpha,
        rum_bootstrap=args.bootstrap,
        seed=args.seed,
        order=args.order,
        progress=not args.quiet,
        load_kwargs=load_kwargs,
    )
    print_report(result)
    if args.output is not None:
        write_json_atomic(args.output, result.to_dict())
        print(f"wrote {args.output}")
    return 0
