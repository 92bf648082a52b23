"""Write docs/reference/cli.md: every ``liedar`` command's ``--help``, taken from the parser.

Why generated: the page is the parser's own text, so it cannot name a flag the command no
longer has. ``tests/house/test_cli_reference.py`` regenerates it and fails when the committed
page differs or a subcommand has no entry.

Usage: .venv/bin/python scripts/cli_reference.py [--check]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "cli.md"
WIDTH = "100"  # argparse wraps help at the terminal's width; a fixed one keeps the page stable

INTRO = """# Command line

Every `liedar` command with its `--help`, generated from the parser by
`scripts/cli_reference.py` (a test fails when this page and the parser differ). Each help
ends with an example the test suite parses with the real parser. Bad input prints one line,
`liedar: error: ...`, and exits 2 before any expensive work.

"""


def anchor(path: str) -> str:
    """The heading id mkdocs gives ``## path``: words joined by hyphens."""
    return path.replace(" ", "-").lower()


def _choices(parser: argparse.ArgumentParser) -> list:
    """The subcommands' one-line helps as argparse keeps them (it has no public accessor)."""
    return [
        choice
        for action in parser._actions  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction)  # noqa: SLF001
        for choice in action._choices_actions  # noqa: SLF001
    ]


def render() -> str:
    """The page's Markdown: a contents list, then one section per command path."""
    os.environ["COLUMNS"] = WIDTH
    from liedar.cli import build_parser
    from liedar.commands.examples import walk

    commands = list(walk(build_parser()))
    helps = {f"{path} {choice.dest}": choice.help for path, parser in commands for choice in _choices(parser)}
    lines = [INTRO, "| command | what it does |", "|---|---|"]
    for path, parser in commands:
        summary = helps.get(path) or " ".join((parser.description or "").split()).split(". ")[0]
        lines.append(f"| [`{path}`](#{anchor(path)}) | {summary.rstrip('.').replace('|', chr(92) + '|')} |")
    lines.append("")
    for path, parser in commands:
        text = parser.format_help().rstrip()
        lines += [f"## {path}", "", "```text", text, "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write the page, or with ``--check`` exit 1 when the committed one differs."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed page instead of writing it")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} differs from the parser: run scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    tmp = PAGE.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(PAGE)
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
