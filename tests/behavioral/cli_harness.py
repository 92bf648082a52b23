"""Run `liedar behavioral <instrument>` through this command module alone.

Why not `liedar.cli.main`: it imports every command module of the project, and the
instrument tests should not fail because another command is missing or broken. The
harness reproduces main's contract: a LiedarError prints one line and returns 2.
"""

from __future__ import annotations

import argparse
import sys

from liedar.commands import behavioral_instruments
from liedar.errors import LiedarError


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="liedar behavioral")
    behavioral_instruments.register(parser.add_subparsers(dest="instrument"))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LiedarError as exc:
        print(f"liedar: error: {exc}", file=sys.stderr)
        return 2
