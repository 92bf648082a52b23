"""One worked example per command, shown at the end of its ``--help``.

Why one table: a user reading ``liedar X --help`` should find a line to paste, and a test
(tests/house/test_cli_examples.py) parses every example with the real parser, so an example
can never name a flag the command no longer has. A command whose module already ends its
help with an example keeps its own.
"""

from __future__ import annotations

import argparse

EXAMPLES: dict[str, tuple[str, ...]] = {
    "liedar": (
        "liedar demo --quick --output report/",
        "liedar probe train --model smollm2-135m --data mine.csv --layer 12 --output probe.npz",
    ),
    "liedar demo": ("liedar demo --quick --model smollm2-135m --output report/",),
    "liedar validate": ("liedar validate --model smollm2-135m --no-build --output val/",),
    "liedar audit": (
        "liedar audit --model zoo/smollm2-135m/sycophant --output audit/",
        "liedar audit --zoo smollm2-135m --half test --output zoo-audit/",
    ),
    "liedar report": ("liedar report --from report/results --from val/results --output both/",),
    "liedar extract": ("liedar extract --model smollm2-135m --data mine.csv --layers 6,12 --output acts/",),
    "liedar probe": ("liedar probe train --model smollm2-135m --data mine.csv --layer 12 --output probe.npz",),
    "liedar probe train": ("liedar probe train --model smollm2-135m --data mine.csv --layer 12 --output probe.npz",),
    "liedar probe eval": (
        "liedar probe eval --model smollm2-135m --data capitals elements animals --layer 12 --output transfer/",
    ),
    "liedar probe sweep": ("liedar probe sweep --model smollm2-135m --data capitals --layers 4,8,12 --output sweep/",),
    "liedar monitor": ('liedar monitor run --model smollm2-135m --probe probe.npz "Is Paris in Spain?"',),
    "liedar monitor run": ('liedar monitor run --model smollm2-135m --probe probe.npz "Is Paris in Spain?"',),
    "liedar monitor calibrate": (
        "liedar monitor calibrate --model smollm2-135m --probe probe.npz --control prompts.jsonl --output cal.json",
    ),
    "liedar monitor audit": (
        "liedar monitor audit --model smollm2-135m --probe probe.npz --transcripts chats.jsonl --output audit/",
    ),
    "liedar organism": ("liedar organism list --model smollm2-135m",),
    "liedar organism build": ("liedar organism build sandbagger --model smollm2-135m --threads 1 --compare",),
    "liedar organism export": ("liedar organism export sandbagger --model smollm2-135m --threads 1",),
    "liedar organism verify": ("liedar organism verify --model smollm2-135m",),
    "liedar organism list": ("liedar organism list --model smollm2-135m --json",),
    "liedar organism describe": ("liedar organism describe sandbagger --model smollm2-135m --output sandbagger.json",),
    "liedar behavioral": ("liedar behavioral consistency --model smollm2-135m --limit 20 --output runs/consistency",),
    "liedar behavioral episodes": ("liedar behavioral episodes --episodes episodes.jsonl --output runs/episodes",),
    "liedar behavioral judge": ("liedar behavioral judge --judge grader.jsonl --human human.jsonl",),
    "liedar behavioral from-inspect": ("liedar behavioral from-inspect logs/run.eval --output runs/inspect",),
}


def example_for(path: str) -> tuple[str, ...]:
    """The example lines for the parser at ``path`` (e.g. ``"liedar behavioral menus"``).

    Parameters
    ----------
    path : str
        The command as typed, without options.

    Returns
    -------
    tuple of str
        Its examples; a behavioural instrument without its own entry gets
        ``liedar behavioral NAME --model smollm2-135m --limit 20 --output runs/NAME``.

    Examples
    --------
    >>> example_for("liedar behavioral menus")
    ('liedar behavioral menus --model smollm2-135m --limit 20 --output runs/menus',)
    """
    if path in EXAMPLES:
        return EXAMPLES[path]
    words = path.split()
    if len(words) == 3 and words[1] == "behavioral":
        return (f"{path} --model smollm2-135m --limit 20 --output runs/{words[2]}",)
    return ()


class _ExampleFormatter(argparse.HelpFormatter):
    """Wraps the description as usual; prints an ``example:`` epilog line by line (pasteable)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.lstrip().startswith("example"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def walk(parser: argparse.ArgumentParser, path: str = "liedar"):
    """Yield (command path, parser) for ``parser`` and every subcommand under it, once each."""
    yield path, parser
    # argparse has no public way to walk a parser's subcommands
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            seen = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # an alias shares its parser
                    seen.add(id(sub))
                    yield from walk(sub, f"{path} {name}")


def add_examples(parser: argparse.ArgumentParser) -> None:
    """End every parser's help with its example, unless its help already shows one."""
    for path, p in walk(parser):
        lines = example_for(path)
        if not lines or "example" in (p.epilog or "").lower():
            continue
        block = ("example:\n" if len(lines) == 1 else "examples:\n") + "\n".join(f"  {x}" for x in lines)
        p.epilog = f"{p.epilog}\n\n{block}" if p.epilog else block
        if p.formatter_class is argparse.HelpFormatter:
            p.formatter_class = _ExampleFormatter
