"""`liedar report --from RESULTS_DIR`: re-render the report from saved results.

Why a separate command: re-rendering (after a liedar upgrade, or to change the output
folder) must not reload a model. This path imports only `liedar.report` (numpy,
matplotlib, scipy) — never torch, `models` or `probes`; a test checks sys.modules.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: "argparse._SubParsersAction") -> None:
    p = subparsers.add_parser(
        "report",
        help="re-render the combined report (HTML, Markdown, JSON) from saved results, without a model",
        description="Re-render index.html, report.md, report.json and figures/ from a results "
        "directory written by `liedar demo` (default: liedar-report/results). Loads no model.",
    )
    p.add_argument(
        "--from",
        dest="results",
        type=Path,
        required=True,
        metavar="RESULTS_DIR",
        help="results directory written by `liedar demo` (e.g. liedar-report/results)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to write the report (default: the parent of RESULTS_DIR)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from liedar.report.build import build_report
    from liedar.report.render import write_report

    results = Path(args.results)
    out = Path(args.output) if args.output is not None else results.resolve().parent
    paths = write_report(build_report(results), out)
    print(f"report written: {paths['html']} (also {paths['markdown'].name}, {paths['json'].name}, figures/)")
    return 0
