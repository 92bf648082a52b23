#!/usr/bin/env python3
"""Render a liedar report's index.html to PNG in a real headless browser (Debian chromium).

Why: the HTML page must be self-contained and readable offline; the only honest check is
to open it in a browser with networking disabled and look at the picture.

    python scripts/render_report_html.py liedar-report/index.html --out /tmp/report.png

Needs /usr/bin/chromium (`apt-get install -y chromium`). Prints the PNG path last.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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
)


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("render_report_html: chromium not found: install it with `apt-get install -y chromium`")


def render(html: Path, out: Path, width: int, height: int, timeout: float = 120.0) -> Path:
    html = html.resolve()
    if not html.is_file():
        raise SystemExit(f"render_report_html: {html} does not exist: run `liedar demo` or `liedar report` first")
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="liedar-chromium-") as profile:
        cmd = [
            find_chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--screenshot={out}",
            f"--window-size={width},{height}",
            html.as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not out.is_file():
        raise SystemExit(f"render_report_html: chromium failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", type=Path, help="the report's index.html")
    ap.add_argument("--out", type=Path, default=Path("report.png"), help="PNG to write (default report.png)")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--height", type=int, default=4000, help="page height in pixels to capture")
    args = ap.parse_args(argv)
    print(render(args.html, args.out, args.width, args.height))
    return 0


if __name__ == "__main__":
    sys.exit(main())
