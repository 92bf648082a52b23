"""`liedar report --from RESULTS_DIR [--from RESULTS_DIR ...]`: re-render the report from saved results.

Why a separate command: re-rendering (after a liedar upgrade, or to change the output
folder) must not reload a model. This path imports only `liedar.report` (numpy,
matplotlib, scipy) — never torch, `models` or `probes`; a test checks sys.modules.
Several ``--from`` put several runs (models, organisms, sizes) side by side on one page.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from liedar.commands.args import input_file


def register(subparsers: "argparse._SubParsersAction") -> None:
    p = subparsers.add_parser(
        "report",
        help="re-render the combined report (HTML, Markdown, JSON) from saved results, without a model",
        description="Re-render index.html, report.md, report.json and figures/ from results directories "
        "written by `liedar demo` (default: liedar-report/results). Loads no model. Give --from once per run "
        "to put several runs side by side (one verdict column per model).",
    )
    p.add_argument(
        "--from",
        dest="results",
        type=Path,
        action="append",
        default=None,
        metavar="RESULTS_DIR",
        help="results directory written by `liedar demo` (e.g. liedar-report/results); repeat for several runs",
    )
    p.add_argument(
        "--audit",
        type=input_file,
        default=None,
        metavar="AUDIT_JSON",
        help="an audit's results (audit.json from `liedar audit`): adds the Audit section; alone, a page of it",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to write the report (default: the parent of the first RESULTS_DIR)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from liedar.core.errors import InputError
    from liedar.report.build import build_report
    from liedar.report.render import write_report
    from liedar.report.store import missing_steps

    audit = None
    audit_path = getattr(args, "audit", None)  # a Namespace built by hand (the library's callers) may lack it
    if audit_path is not None:
        from liedar.report.audit import write_audit_page
        from liedar.report.audit_record import read_record

        audit = read_record(audit_path)
        if not args.results:
            out = Path(args.output) if args.output is not None else Path(audit_path).resolve().parent / "report"
            page = write_audit_page(audit, out)
            print(f"audit page written: {page['html']} (also {page['markdown'].name}, figures/)")
            return 0
    if not args.results:
        raise InputError("give --from RESULTS_DIR (once per run) or --audit AUDIT_JSON")
    results = args.results if isinstance(args.results, list) else [args.results]
    dirs = [Path(r) for r in results]
    for d in dirs:
        for name in missing_steps(d):
            print(f"liedar: warning: {d}: step {name!r} is listed in run.json but its result file is missing; "
                  "its row says so and its category reads not measured", file=sys.stderr)  # fmt: skip
    out = Path(args.output) if args.output is not None else dirs[0].resolve().parent
    paths = write_report(build_report(dirs), out, audit=audit)
    print(f"report written: {paths['html']} (also {paths['markdown'].name}, {paths['json'].name}, figures/)")
    return 0
