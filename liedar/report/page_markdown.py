"""Render the report's blocks as Markdown (figures linked from figures/)."""

from __future__ import annotations

from liedar.report.document import Block, Bullets, Figure, Heading, Para, Table

_MARK = {"caution": "⚠ ", "info": "ℹ ", "muted": "", "": ""}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(blocks: list[Block], figure_paths: dict[str, str]) -> str:
    """``figure_paths`` maps a figure key (see `figure_filename`) to its relative path."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"{'#' * b.level} {b.text}\n")
        elif isinstance(b, Para):
            text = f"*{b.text}*" if b.style == "muted" else _MARK[b.style] + b.text
            out.append(text + "\n")
        elif isinstance(b, Bullets):
            out.append("\n".join(f"- {_MARK[style]}{text}" for style, text in b.items) + "\n")
        elif isinstance(b, Table):
            lines = ["| " + " | ".join(_cell(h) for h in b.header) + " |", "|" + "---|" * len(b.header)]
            lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in b.rows]
            if b.caption:
                lines.append(f"\n*{b.caption}*")
            out.append("\n".join(lines) + "\n")
        elif isinstance(b, Figure):
            out.append(f"![{b.caption}]({figure_paths[b.key]})\n\n*{b.caption}*\n")
    return "\n".join(out)
