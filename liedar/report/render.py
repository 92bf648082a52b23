"""Write a report's three outputs: index.html, report.md, report.json (+ figures/).

Every file is written atomically, and report.json is validated against its schema
before it is written, so a page on disk always matches its documented format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from liedar.core._util.atomic import check_inside, write_bytes_atomic, write_json_atomic
from liedar.core.results import Report
from liedar.report.document import figure_filename, model_label, report_blocks, report_figure_filename
from liedar.report.figures import all_figures, report_figures
from liedar.report.page_html import render_html
from liedar.report.page_markdown import render_markdown
from liedar.report.schema import validate_report

FIGURES_DIR = "figures"


def write_report(report: Report, out_dir: Path, audit: Optional[dict[str, Any]] = None) -> dict[str, Path]:
    """Render all outputs into ``out_dir``; returns {"html", "markdown", "json"} -> path.
    ``audit`` (an audit's results JSON) adds the Audit section after the validation section."""
    out_dir = Path(out_dir)
    check_inside(out_dir, FIGURES_DIR, "index.html", "report.md", "report.json")
    data = report.to_dict()
    validate_report(data)
    names = [model_label(mr) for mr in report.models]
    per_model = {name: all_figures(mr) for name, mr in zip(names, report.models)}
    shared = report_figures(report.models, names) if report.models else {}
    keyed = {figure_filename(model, k): png for model, figs in per_model.items() for k, png in figs.items()}
    keyed.update({report_figure_filename(k): png for k, png in shared.items()})
    audit_figs: dict[str, bytes] = {}
    extra: list = []
    if audit is not None:
        from liedar.report.audit import audit_blocks, audit_figures, figure_file

        audit_figs = audit_figures(audit)
        keyed.update({figure_file(k): png for k, png in audit_figs.items()})
        extra = audit_blocks(audit, audit_figs)
    blocks = report_blocks(report, per_model, shared, extra)

    for key, png in keyed.items():
        write_bytes_atomic(out_dir / FIGURES_DIR / key, png)
    paths = {"html": out_dir / "index.html", "markdown": out_dir / "report.md", "json": out_dir / "report.json"}
    write_bytes_atomic(paths["html"], render_html(blocks, keyed).encode("utf-8"))
    md = render_markdown(blocks, {k: f"{FIGURES_DIR}/{k}" for k in keyed})
    write_bytes_atomic(paths["markdown"], md.encode("utf-8"))
    write_json_atomic(paths["json"], data)
    return paths


def load_report_json(path: Path) -> Report:
    """Read a report.json back (for tools that post-process reports)."""
    return Report.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
