"""`liedar demo`: the whole toolkit on one model, one report.

Runs probes, the inline monitor, a behaviour-vs-probe cross-check and the behavioural
instruments on the default model (smollm2-135m), saving each step's results under
OUTPUT/results/ (an interrupted run resumes), and writes OUTPUT/index.html, report.md,
report.json and figures/.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def register(subparsers: "argparse._SubParsersAction") -> None:
    p = subparsers.add_parser(
        "demo",
        help="run the whole toolkit on a model and write the combined report (start here)",
        description="Run lie probes, the inline honesty monitor, the consistency detector, a menu study "
        "and the behavioural instruments on one model, then write OUTPUT/index.html, report.md, "
        "report.json and figures/. Each step is cached in OUTPUT/results/: re-running resumes.",
    )
    p.add_argument(
        "--model", default="smollm2-135m", help="built-in name, .gguf file or HF folder (default smollm2-135m)"
    )
    p.add_argument(
        "--backend",
        default="transformers",
        choices=("transformers", "llamacpp"),
        help="model backend (default transformers; weight noise needs transformers)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smaller samples for a first look; skips weight noise (see docs/report.md for sizes and times)",
    )
    p.add_argument(
        "--datasets",
        type=Path,
        default=None,
        metavar="PATH",
        help="also probe on external statement sets (e.g. ../shared/datasets)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=Path("liedar-report"),
        metavar="DIR",
        help="report folder (default liedar-report)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for every sampled choice (default 0)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model (default 2)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from liedar.errors import InputError
    from liedar.pipeline.demo import DemoConfig, run_demo

    if args.datasets is not None and not Path(args.datasets).is_dir():
        raise InputError(f"--datasets {args.datasets} is not a folder: give the folder holding truth_is_universal/")
    config = DemoConfig(args.model, args.backend, args.quick, args.datasets, args.output, args.seed, args.threads)
    outcome = run_demo(config)
    not_ok = [s for s in outcome.steps if s.status != "ok"]
    print(
        f"liedar demo finished in {outcome.seconds:.0f} s ({len(outcome.cached)} step(s) from cache"
        + (f", {len(not_ok)} not run or failed: see the report's Steps table" if not_ok else "")
        + ")"
    )
    print(f"report: {outcome.paths['html']}  (also {outcome.paths['markdown']}, {outcome.paths['json']})")
    return 0
