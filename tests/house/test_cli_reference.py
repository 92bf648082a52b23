"""docs/reference/cli.md is the parser's own help, and every subcommand has its entry."""

from __future__ import annotations

import subprocess
import sys

from package_dirs import ROOT

from liedar.cli import build_parser
from liedar.commands.examples import walk

PAGE = ROOT / "docs" / "reference" / "cli.md"


def test_every_subcommand_has_a_reference_entry():
    text = PAGE.read_text(encoding="utf-8")
    headings = {line[3:].strip() for line in text.splitlines() if line.startswith("## ")}
    missing = [path for path, _ in walk(build_parser()) if path not in headings]
    assert not missing, f"no entry in {PAGE.name} for {missing}: run scripts/cli_reference.py"


def test_the_page_equals_what_the_parser_prints():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_check_fails_on_a_stale_page(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import cli_reference
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    stale = tmp_path / "cli.md"
    stale.write_text(PAGE.read_text(encoding="utf-8").replace("## liedar probe train\n", ""), encoding="utf-8")
    monkeypatch.setattr(cli_reference, "PAGE", stale)
    assert cli_reference.main(["--check"]) == 1
