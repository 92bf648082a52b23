"""`liedar` command line.

Each subcommand lives in its own module under `liedar.commands` with a
``register(subparsers)`` function that adds its parser and sets ``func`` to a
``run(args) -> int``; the modules are imported here by name, so the dependency graph is
plain to read (and checked by tests/house/test_layers.py). Arguments shared by several
commands (``--model``, ``--backend``, ``--threads``, ``--output``, ``--interval``,
``--seed``) and every value check live in `liedar.commands.args`. Command modules import
heavy packages (torch, transformers, llama_cpp) inside ``run`` so that ``liedar --help``
stays instant.

Exit codes: 0 success, 1 a check the command performs failed (e.g. a flag raised where
the command is a gate), 2 bad input or an unavailable model (one line on stderr, no
traceback), 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from liedar import __version__
from liedar.commands import (
    audit,
    behavioral,
    demo,
    extract,
    from_inspect,
    monitor,
    organism,
    probe,
    report,
    validate,
)
from liedar.commands.args import OneLineParser, usage_error
from liedar.commands.examples import add_examples
from liedar.core.errors import LiedarError

TOP_LEVEL_COMMANDS = (demo, validate, audit, report, extract, probe, monitor, organism)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="liedar",
        description="Measure deception in small local language models: lie probes, an inline "
        "honesty monitor, behavioural detectors, and one report that puts them side by side.",
    )
    parser.add_argument("--version", action="version", version=f"liedar {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for command in TOP_LEVEL_COMMANDS:
        command.register(sub)
    group = sub.add_parser(
        "behavioral",
        help="black-box deception instruments (one subcommand per registered instrument)",
        description="Black-box instruments: each needs only records of what the model answered.",
    )
    bsub = group.add_subparsers(dest="instrument_name", metavar="INSTRUMENT", parser_class=OneLineParser)
    behavioral.register(bsub)
    from_inspect.register(bsub)
    group.set_defaults(func=lambda args: usage_error(group, bsub.choices))
    parser.set_defaults(func=lambda args: usage_error(parser, sub.choices))
    add_examples(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    argv = monitor.with_default_subcommand(list(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help / --version exit 0; a usage error has printed its one line
        return int(exc.code or 0)
    try:
        return int(args.func(args) or 0)
    except LiedarError as exc:
        _error_line(str(exc))
        return 2
    except KeyboardInterrupt:
        _error_line("interrupted (finished work is kept in the cache)", prefix="liedar")
        return 130


def _error_line(message: str, prefix: str = "liedar: error") -> None:
    """One line on stderr, on a line of its own even after a progress bar (tqdm leaves the
    cursor mid-line), with any newline in the message folded."""
    sys.stdout.flush()
    text = " ".join(message.split())
    lead = "\n" if sys.stderr.isatty() or _bar_open() else ""
    print(f"{lead}{prefix}: {text}", file=sys.stderr)


def _bar_open() -> bool:
    """Whether a tqdm bar is still open (the error interrupted it): tqdm writes its bar to a
    pipe or log file too, without a closing newline, so the error would join the bar's line."""
    std = sys.modules.get("tqdm.std")
    if std is None:
        return False
    return any(not getattr(bar, "disable", True) for bar in list(getattr(std.tqdm, "_instances", ())))


if __name__ == "__main__":
    sys.exit(main())
