"""Render the report's blocks as one self-contained HTML page.

Why self-contained: the page is mailed around and opened offline; figures are embedded
as base64 PNG data URIs and the style sheet is inline — no external asset, no script.
"""

from __future__ import annotations

import base64
from html import escape

from liedar.report.document import NOT_COMPUTABLE, Block, Bullets, Figure, Heading, Para, Table

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;max-width:1100px;
margin:24px auto;padding:0 20px;color:#1d1d1f;line-height:1.45}
h1{border-bottom:2px solid #333;padding-bottom:4px}h2{margin-top:36px;border-bottom:1px solid #bbb}
h3{margin-top:26px}table{border-collapse:collapse;margin:8px 0 4px;font-size:13px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f3}tr:nth-child(even) td{background:#fafafa}
.caption{font-size:12px;color:#555;margin:2px 0 14px}.muted{color:#666;font-size:13px}
.caution{background:#fff4e0;border-left:4px solid #e69500;padding:6px 10px;margin:4px 0;list-style:none}
.info{background:#eaf3ff;border-left:4px solid #3b82f6;padding:6px 10px;margin:4px 0;list-style:none}
ul.readings{padding-left:0}figure{margin:12px 0 22px}img{max-width:100%;border:1px solid #ddd}
td.flag{font-weight:600;color:#b00020}
td:nth-child(2){white-space:nowrap}
td.nc{white-space:normal;font-style:italic;color:#7a4b00;background:#fff4e0 !important;min-width:14em}
td.warn{color:#7a4b00;background:#fff4e0 !important}
"""


def _cell_class(text: str) -> str:
    """Why classes: a FLAGGED verdict, a not-computable value and a warning must stand out
    from plain numbers (and a long not-computable reason must wrap, not widen the table)."""
    if text == "FLAGGED":
        return " class=flag"
    if text.startswith(NOT_COMPUTABLE + ":"):
        return " class=nc"
    if text.startswith("⚠"):
        return " class=warn"
    return ""


def _table(b: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in b.header)
    body = "".join("<tr>" + "".join(f"<td{_cell_class(c)}>{escape(c)}</td>" for c in row) + "</tr>" for row in b.rows)
    cap = f'<div class="caption">{escape(b.caption)}</div>' if b.caption else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{cap}"


def render_html(blocks: list[Block], figure_bytes: dict[str, bytes], title: str = "liedar report") -> str:
    """``figure_bytes`` maps a figure key (see `figure_filename`) to its PNG bytes."""
    parts: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            parts.append(f"<h{b.level}>{escape(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            parts.append(f'<p class="{b.style}">{escape(b.text)}</p>' if b.style else f"<p>{escape(b.text)}</p>")
        elif isinstance(b, Bullets):
            items = "".join(f'<li class="{s}">{escape(t)}</li>' for s, t in b.items)
            parts.append(f'<ul class="readings">{items}</ul>')
        elif isinstance(b, Table):
            parts.append(_table(b))
        elif isinstance(b, Figure):
            data = base64.b64encode(figure_bytes[b.key]).decode("ascii")
            parts.append(
                f'<figure><img alt="{escape(b.caption)}" src="data:image/png;base64,{data}">'
                f'<figcaption class="caption">{escape(b.caption)}</figcaption></figure>'
            )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )
