"""`liedar demo`: the whole toolkit on one model, one report.

Runs probes, the inline monitor, a behaviour-vs-probe cross-check and the behavioural
instruments on the default model (smollm2-135m), saving each step's results under
OUTPUT/results/ (an interrupted run resumes), and writes OUTPUT/index.html, report.md,
report.json and figures/.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from liedar.commands.args import (
    add_call_cache_argument,
    add_model_arguments,
    add_output_argument,
    add_seed_argument,
    add_workers_argument,
    input_dir,
)


def register(subparsers: "argparse._SubParsersAction") -> None:
    p = subparsers.add_parser(
        "demo",
        help="run the whole toolkit on a model and write the combined report (start here)",
        description="Run lie probes, the inline honesty monitor, the consistency detector, a menu study "
        "and the behavioural instruments on one model, then write OUTPUT/index.html, report.md, "
        "report.json and figures/. Each step is cached in OUTPUT/results/: re-running resumes.",
    )
    add_model_arguments(p, backend_help="weight noise needs transformers", hidden_states_for="demo")
    p.add_argument(
        "--quick",
        action="store_true",
        help="smaller samples for a first look; skips weight noise (see docs/report.md for sizes and times)",
    )
    p.add_argument(
        "--datasets",
        type=input_dir,
        default=None,
        metavar="PATH",
        help="also probe on external statement sets (e.g. ../shared/datasets)",
    )
    add_output_argument(p, "report folder (default liedar-report)", kind="dir", default=Path("liedar-report"))
    add_seed_argument(p)
    add_call_cache_argument(p)
    add_workers_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from liedar.core.errors import InputError
    from liedar.pipeline.demo import DemoConfig, run_demo

    if args.quick and args.datasets is not None:
        # quick mode samples no external statements (tiu_per_topic=0), so the folder would be
        # recorded as used without one line of it read
        raise InputError(
            f"--quick probes only the built-in statement sets and never reads --datasets {args.datasets}; "
            "drop --quick to probe on it, or drop --datasets"
        )
    from liedar.core._util.workers import default_workers

    config = DemoConfig(
        args.model,
        args.backend,
        args.quick,
        args.datasets,
        args.output,
        args.seed,
        args.threads,
        args.call_cache,
        args.workers or default_workers(),
    )
    outcome = run_demo(config)
    not_ok = [s for s in outcome.steps if s.status != "ok"]
    print(
        f"liedar demo finished in {outcome.seconds:.0f} s ({len(outcome.cached)} step(s) from cache"
        + (f", {len(not_ok)} not run or failed: see the report's Steps table" if not_ok else "")
        + ")"
    )
    calls = outcome.call_cache
    if calls.get("enabled") and calls.get("hits", 0) + calls.get("misses", 0):
        print(
            f"model-call cache: {calls['hits']} answer(s) replayed, {calls['misses']} asked"
            + (f", {calls['corrupt']} damaged entr(y/ies) recomputed" if calls.get("corrupt") else "")
            + " (--no-call-cache to ask every question again)"
        )
    print(f"report: {outcome.paths['html']}  (also {outcome.paths['markdown']}, {outcome.paths['json']})")
    return 0
