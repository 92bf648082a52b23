"""Run `liedar behavioral <instrument>` through the real command line (`liedar.cli.main`),
so the instrument tests check the same parser, error handling and exit codes users get."""

from __future__ import annotations

from liedar.cli import main


def run_cli(argv: list[str]) -> int:
    return main(["behavioral", *argv])
