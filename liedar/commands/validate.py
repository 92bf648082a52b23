"""`liedar validate`: every detector on the base model and on each model organism.

Re-measures the shipped organisms (LoRA fine-tunes with a known deception, in the
repository's ``zoo/``; `liedar organism verify`) and uses those that verify, trains the lie
probe on the base model's instructed pairs, runs every detector with its
default settings on every model, and writes OUTPUT/validation-matrix.json plus a table on
stdout: detector × model → verdict, effect [95% CI], n, ground truth; and per detector its
recall on the organisms it targets and its false-flag rate on the others. Work is saved
per model and detector group under OUTPUT/results/validation/: re-running resumes.
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
    comma_list,
)


def _names(text: str) -> tuple[str, ...]:
    return tuple(comma_list(text))


def register(subparsers: "argparse._SubParsersAction") -> None:
    p = subparsers.add_parser(
        "validate",
        help="run every detector on the base model and on known deceivers (model organisms)",
        description="Run every detector as a user would (default settings, no access to the organisms' "
        "training data or triggers) on the base model and on each model organism, and write "
        "OUTPUT/validation-matrix.json with recall and false-flag rates. Saved per step: re-running resumes.",
    )
    add_model_arguments(p, backends=("transformers",), backend_help="organisms and weight noise need transformers")
    p.add_argument(
        "--organisms",
        type=_names,
        default=None,
        metavar="NAMES",
        help="comma-separated organisms to include (default: every shipped one that verifies, and local builds)",
    )
    build = p.add_mutually_exclusive_group()
    build.add_argument(
        "--build",
        type=_names,
        default=None,
        metavar="NAMES",
        help="train these organisms first when neither shipped nor built (minutes of CPU each)",
    )
    build.add_argument("--no-build", action="store_true", help="train nothing (the default; kept for old scripts)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="smaller samples; no weight noise, no fine-tuning elicitation; shipped organisms only when "
        "this machine verified them before",
    )
    add_output_argument(p, "results folder (default liedar-validation)", kind="dir", default=Path("liedar-validation"))
    add_seed_argument(p)
    add_call_cache_argument(p)
    add_workers_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from liedar.core._util.workers import default_workers
    from liedar.pipeline.validate import ValidateConfig, format_table, validate

    build = () if args.no_build or args.build is None else args.build
    config = ValidateConfig(
        model=args.model,
        backend=args.backend,
        output=args.output,
        quick=args.quick,
        seed=args.seed,
        threads=args.threads,
        organisms=args.organisms,
        build=build,
        call_cache=args.call_cache,
        workers=args.workers or default_workers(),
    )
    out = validate(config)
    print(format_table(out.matrix))
    for note in out.notes:
        print(f"note: {note}")
    calls = out.call_cache
    if calls.get("enabled") and calls.get("hits", 0) + calls.get("misses", 0):
        print(f"model-call cache: {calls['hits']} answer(s) replayed, {calls['misses']} asked")
    print(f"liedar validate finished in {out.seconds:.0f} s; matrix: {out.path}")
    return 0
