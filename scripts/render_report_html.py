#!/usr/bin/env python3
"""Render a liedar report's index.html in a real headless browser (Debian chromium): a PNG
screenshot at a given width, or a check of the page's layout, contrast and headings.

Why: the HTML page must be self-contained and readable offline, on a laptop and on a
phone; the only honest check is to open it in a browser with networking disabled, look at
the picture, and measure the laid-out page.

    python scripts/render_report_html.py liedar-report/index.html --out /tmp/report.png --width 1280
    python scripts/render_report_html.py liedar-report/index.html --out /tmp/phone.png --width 390
    python scripts/render_report_html.py liedar-report/index.html --check --width 390

How widths below Chromium's minimum window (500 px) are honoured: the report is loaded in
an iframe of exactly that width inside a wrapper page (media queries apply to the iframe's
viewport), and the screenshot is cropped to it. ``--check`` loads the same wrapper with a
script (in the wrapper only; the report itself stays script-free) that opens every
`<details>`, then measures, for the collapsed and the expanded page: whether anything
forces the page to scroll sideways, the WCAG contrast of every element that holds text
against its effective background, the heading outline, and any external reference. It
prints the findings as JSON; the exit code is 1 when a check fails.

Needs /usr/bin/chromium (`apt-get install -y chromium`; scripts/bootstrap.sh installs it).
"""

from __future__ import annotations

import argparse
import html as _html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--allow-file-access-from-files",  # the wrapper reads the report's DOM from its iframe
)

CHECK_SCRIPT = Path(__file__).with_name("report_check.js")  # runs in the wrapper page, after the report loads


def find_chromium() -> Optional[str]:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _require_chromium() -> str:
    path = find_chromium()
    if path is None:
        raise SystemExit("render_report_html: chromium not found: install it with `apt-get install -y chromium`")
    return path


def _wrapper(report: Path, width: int, height: int, script: str = "") -> str:
    src = _html.escape(report.resolve().as_uri(), quote=True)
    tag = f"<script>{script}</script>" if script else ""
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">'
        f'<iframe id="report" src="{src}" style="border:0;display:block;width:{width}px;height:{height}px"></iframe>'
        f"{tag}</body></html>"
    )


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="liedar-chromium-") as profile:
        cmd = [_require_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def _check_input(html: Path) -> Path:
    html = Path(html).resolve()
    if not html.is_file():
        raise SystemExit(f"render_report_html: {html} does not exist: run `liedar demo` or `liedar report` first")
    return html


def check(html: Path, width: int, timeout: float = 120.0) -> dict[str, Any]:
    """Lay the page out at ``width`` px in Chromium and measure it (see the module docstring)."""
    html = _check_input(html)
    with tempfile.TemporaryDirectory(prefix="liedar-check-") as tmp:
        wrapper = Path(tmp) / "wrapper.html"
        wrapper.write_text(_wrapper(html, width, 900, CHECK_SCRIPT.read_text(encoding="utf-8")), encoding="utf-8")
        proc = _run([f"--window-size={max(width, 500) + 20},900", "--dump-dom", wrapper.as_uri()], timeout)
    m = re.search(r'<pre id="liedar-check">(.*?)</pre>', proc.stdout, re.S)
    if m is None:
        raise SystemExit(f"render_report_html: chromium gave no check result ({proc.returncode}): {proc.stderr[-500:]}")
    return json.loads(_html.unescape(m.group(1)))


def problems(result: dict[str, Any]) -> list[str]:
    """The failed checks of a `check` result, one line each (empty: the page passes)."""
    out = []
    for state in ("collapsed", "expanded"):
        r = result[state]
        if r["page_scrolls"] or r["offenders"]:
            out.append(f"{state}: page scrolls sideways ({r['scroll_width']} > {r['viewport']} px): {r['offenders']}")
    c = result["contrast"]
    if c["n_failures"]:
        out.append(f"{c['n_failures']} text elements below WCAG AA contrast, e.g. {c['failures'][:3]}")
    levels = [lvl for lvl, _ in result["headings"]]
    if not levels or levels[0] != 1 or levels.count(1) != 1:
        out.append(f"the page needs exactly one h1, first: {levels[:3]}")
    jumps = [(a, b) for a, b in zip(levels, levels[1:]) if b > a + 1]
    if jumps:
        out.append(f"heading levels skip: {jumps[:5]}")
    if result["external"] or result["scripts"]:
        out.append(f"external references {result['external'][:5]} / {result['scripts']} scripts")
    return out


def render(html: Path, out: Path, width: int, height: Optional[int] = None, timeout: float = 120.0) -> Path:
    """PNG of the page laid out at ``width`` px; ``height`` None = the whole page."""
    html = _check_input(html)
    if height is None:
        height = int(check(html, width, timeout)["height"])
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="liedar-shot-") as tmp:
        wrapper = Path(tmp) / "wrapper.html"
        wrapper.write_text(_wrapper(html, width, height), encoding="utf-8")
        proc = _run([f"--screenshot={out}", f"--window-size={width},{height}", wrapper.as_uri()], timeout)
    if proc.returncode != 0 or not out.is_file():
        raise SystemExit(f"render_report_html: chromium failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", type=Path, help="the report's index.html")
    ap.add_argument("--out", type=Path, default=Path("report.png"), help="PNG to write (default report.png)")
    ap.add_argument("--width", type=int, default=1280, help="layout width in CSS pixels (390 = a phone)")
    ap.add_argument("--height", type=int, default=None, help="pixels to capture (default: the whole page)")
    ap.add_argument("--check", action="store_true", help="measure layout, contrast and headings; print JSON")
    args = ap.parse_args(argv)
    if args.check:
        result = check(args.html, args.width)
        bad = problems(result)
        print(json.dumps({"width": args.width, "problems": bad, **result}, indent=1))
        return 1 if bad else 0
    print(render(args.html, args.out, args.width, args.height))
    return 0


if __name__ == "__main__":
    sys.exit(main())
