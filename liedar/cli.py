"""`liedar` command line.

Each subcommand lives in its own module under `liedar.commands` with a
``register(subparsers)`` function that adds its parser and sets ``func`` to a
``run(args) -> int``. Command modules import heavy packages (torch, transformers,
llama_cpp) inside ``run`` so that ``liedar --help`` stays instant.

Exit codes: 0 success, 1 a check the command performs failed (e.g. a flag raised where
the command is a gate), 2 bad input or an unavailable model (one line on stderr, no
traceback), 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

from liedar import __version__
from liedar.errors import LiedarError

TOP_LEVEL_COMMANDS = (
    "liedar.commands.demo",
    "liedar.commands.report",
    "liedar.commands.extract",
    "liedar.commands.probe",
    "liedar.commands.monitor",
)
BEHAVIORAL_COMMANDS = (
    "liedar.commands.behavioral_consistency",
    "liedar.commands.behavioral_menus",
    "liedar.commands.behavioral_instruments",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="liedar",
        description="Measure deception in small local language models: lie probes, an inline "
        "honesty monitor, behavioural detectors, and one report that puts them side by side.",
    )
    parser.add_argument("--version", action="version", version=f"liedar {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in TOP_LEVEL_COMMANDS:
        importlib.import_module(name).register(sub)
    behavioral = sub.add_parser(
        "behavioral",
        help="black-box deception instruments run on a local model",
        description="Black-box instruments: each needs only records of what the model answered.",
    )
    bsub = behavioral.add_subparsers(dest="instrument", metavar="INSTRUMENT")
    for name in BEHAVIORAL_COMMANDS:
        importlib.import_module(name).register(bsub)
    behavioral.set_defaults(func=lambda args: _missing(behavioral))
    parser.set_defaults(func=lambda args: _missing(parser))
    return parser


def _missing(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LiedarError as exc:
        print(f"liedar: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("liedar: interrupted (finished work is kept in the cache)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
