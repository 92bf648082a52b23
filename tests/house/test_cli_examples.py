"""Every `--help` ends with an example that the real parser accepts; `liedar --version` works."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from liedar import __version__
from liedar.cli import build_parser, main
from liedar.commands.examples import example_for, walk

COMMANDS = [path for path, _ in walk(build_parser())]


def test_the_walk_reaches_every_command():
    assert "liedar probe train" in COMMANDS and "liedar behavioral from-inspect" in COMMANDS
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize("path", COMMANDS)
def test_help_names_an_example(path: str, capsys):
    assert main([*path.split()[1:], "--help"]) == 0
    out = capsys.readouterr().out
    assert "example" in out.lower(), f"`{path} --help` shows no example"
    lines = [ln.strip() for ln in out.splitlines() if ln.strip().startswith(path + " ") or ln.strip() == path]
    assert lines, f"`{path} --help` shows no command line starting with {path!r}"


INPUT_SUFFIXES = (".npz", ".jsonl", ".csv", ".eval")


@pytest.mark.parametrize("path", COMMANDS)
def test_every_example_parses(path: str, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples' input files exist (empty) so argparse's path checks pass
    parser = build_parser()
    examples = example_for(path)
    if not examples:  # the command's own epilog holds its example: take it from the help text
        sub = dict(walk(parser))[path]
        examples = tuple(ln.strip() for ln in (sub.epilog or "").splitlines() if ln.strip().startswith("liedar "))
    assert examples, path
    for line in examples:
        words = shlex.split(line)
        for before, word in zip(words, words[1:]):
            if word.endswith(INPUT_SUFFIXES) and before != "--output":
                (tmp_path / word).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / word).touch()
        args = parser.parse_args(shlex.split(line)[1:])  # a bad flag exits 2 here
        assert callable(args.func), line


def test_version_prints_the_package_version():
    out = subprocess.run(
        [sys.executable, "-m", "liedar.cli", "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == f"liedar {__version__}"
