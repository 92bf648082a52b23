"""The report page in a real browser (headless Chromium, scripts/render_report_html.py):
at 1280 px and at 390 px (a phone) nothing makes the page scroll sideways, collapsed or
with every `<details>` open; all text meets WCAG AA contrast on its background; the
headings form an outline (one h1, no skipped level); nothing external is loaded. A page
built to break each rule shows the checker can fail.

Chromium is a Debian package that scripts/bootstrap.sh installs (as root). The test skips
only when it truly cannot be installed here (not root, or no apt-get); a root machine with
apt-get and no chromium is a broken set-up, and the test fails saying how to fix it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from report_fixtures import ORGANISM_RESULTS, SAVED_RESULTS

from liedar.report.build import build_report
from liedar.report.render import write_report

ROOT = Path(__file__).resolve().parents[2]


def _browser() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_report_html", ROOT / "scripts" / "render_report_html.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if mod.find_chromium() is None:
        if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
            pytest.fail("chromium is missing but installable here: run `bash scripts/bootstrap.sh` (it installs it)")
        pytest.skip("chromium cannot be installed here (needs root and apt-get): the browser checks did not run")
    return mod


@pytest.fixture(scope="module")
def browser() -> ModuleType:
    return _browser()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(build_report([SAVED_RESULTS, ORGANISM_RESULTS]), tmp_path_factory.mktemp("browser"))["html"]


@pytest.mark.parametrize("width", [1280, 390])
def test_report_page_passes_the_browser_checks(browser: ModuleType, page: Path, width: int) -> None:
    result: dict[str, Any] = browser.check(page, width)
    assert browser.problems(result) == []
    for state in ("collapsed", "expanded"):
        assert result[state]["viewport"] == width  # laid out at that width, not Chromium's minimum window
        assert result[state]["tables"] >= 10 and not result[state]["page_scrolls"]
    assert result["contrast"]["elements"] > 300  # every text-holding element was measured
    assert result["details"] > 20  # tags and collapsed sections are there to be opened
    levels = [lvl for lvl, _ in result["headings"]]
    assert result["headings"][0] == [1, "liedar report"] and result["headings"][1] == [2, "Verdicts"]
    assert max(levels) <= 4


def test_phone_layout_stacks_the_verdict_table(browser: ModuleType, page: Path) -> None:
    """At 390 px the verdict table is one card per category (taller), at 1280 px a grid."""
    narrow, wide = browser.check(page, 390), browser.check(page, 1280)
    assert narrow["height"] > wide["height"]


def test_the_checker_catches_each_broken_rule(browser: ModuleType, tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"></head><body>'
        "<h2>no h1 first</h2><h4>skips h3</h4>"
        '<p style="color:#bbb">light grey text on white</p>'
        "<table><tr><td>" + "wide " * 20 + '</td><td style="white-space:nowrap">' + "x" * 400 + "</td></tr></table>"
        "</body></html>",
        encoding="utf-8",
    )
    found = browser.problems(browser.check(bad, 390))
    text = " ".join(found)
    assert "page scrolls sideways" in text
    assert "below WCAG AA contrast" in text and "light grey" in text
    assert "exactly one h1" in text and "heading levels skip" in text
