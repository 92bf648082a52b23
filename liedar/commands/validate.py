"""`liedar validate`: every detector on the base model and on each model organism.

Builds the missing organisms (LoRA fine-tunes with a known deception, `liedar.organisms`),
trains the lie probe on the base model's instructed pairs, runs every detector with its
default settings on every model, and writes OUTPUT/validation-matrix.json plus a table on
stdout: detector × model → verdict, effect [95% CI], n, ground truth; and per detector its
recall on the organisms it targets and its false-flag rate on the others. Work is saved
per model and detector group under OUTPUT/results/validation/: re-running resumes.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def _names(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def register(subparsers: "argparse._SubParsersAction") -> None:
    p = subparsers.add_parser(
        "validate",
        help="run every detector on the base model and on known deceivers (model organisms)",
        description="Run every detector as a user would (default settings, no access to the organisms' "
        "training data or triggers) on the base model and on each model organism, and write "
        "OUTPUT/validation-matrix.json with recall and false-flag rates. Saved per step: re-running resumes.",
    )
    p.add_argument("--model", default="smollm2-135m", help="base model (default smollm2-135m)")
    p.add_argument(
        "--backend",
        default="transformers",
        choices=("transformers",),
        help="model backend (organisms and weight noise need transformers)",
    )
    p.add_argument(
        "--organisms",
        type=_names,
        default=None,
        metavar="NAMES",
        help="comma-separated organisms to include (default: every built one)",
    )
    build = p.add_mutually_exclusive_group()
    build.add_argument(
        "--build",
        type=_names,
        default=None,
        metavar="NAMES",
        help="organisms to build first when missing (default: those in --organisms, else every recipe)",
    )
    build.add_argument("--no-build", action="store_true", help="use only organisms already built")
    p.add_argument("--quick", action="store_true", help="smaller samples; no weight noise, no fine-tuning elicitation")
    p.add_argument(
        "--output", type=Path, default=Path("liedar-validation"), metavar="DIR", help="default liedar-validation"
    )
    p.add_argument("--seed", type=int, default=0, help="seed for every sampled choice (default 0)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model (default 2)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from liedar.errors import InputError
    from liedar.pipeline.validate import ValidateConfig, format_table, validate

    if args.threads is not None and args.threads < 1:
        raise InputError(f"--threads {args.threads}: give at least 1")
    if Path(args.output).exists() and not Path(args.output).is_dir():
        raise InputError(f"--output {args.output} is a file: give a folder")
    build = () if args.no_build else args.build
    config = ValidateConfig(
        args.model, args.backend, args.output, args.quick, args.seed, args.threads, args.organisms, build
    )
    out = validate(config)
    print(format_table(out.matrix))
    for note in out.notes:
        print(f"note: {note}")
    print(f"liedar validate finished in {out.seconds:.0f} s; matrix: {out.path}")
    return 0
