"""Render the report's blocks as Markdown (figures linked from figures/).

Markdown has no colour and no collapsing, so every tag is written out as
``⚠ label — sentence`` in its cell, a cell's readings (behind a disclosure in the HTML) go
to a "Readings" section at the end that the cell links to, and a transcript's tokens carry
their scores inline (``token⟨score⟩``): the Markdown keeps every number and sentence the HTML
shows.
"""

from __future__ import annotations

import html

from liedar.report.document import Block, Bullets, Cell, CellLike, Details, Figure, Heading, Para, Row, Table, Tokens

_MARK = {"caution": "⚠ ", "info": "ℹ ", "muted": "", "lead": "", "": ""}
_WORD_MARK = {"flagged": "🔴 ", "clear": "🟢 ", "cannot": "🟠 ", "absent": "⚪ "}


def _md(text: str) -> str:
    """Text from the run (model names, labels, transcripts) with HTML markup neutralised.

    Why: most Markdown renderers pass raw HTML through, so a model name holding
    ``<script>`` or ``<img onerror=...>`` would run in a reader's viewer; index.html escapes
    the same strings. ``&`` is escaped too, so an entity in the data shows as typed.
    """
    return html.escape(str(text), quote=False)


def _esc(text: str) -> str:
    """A table cell: markup neutralised, pipes escaped, on one line."""
    return _md(text).replace("|", "\\|").replace("\n", " ")


def _cell(c: CellLike, readings: list[Cell]) -> str:
    """A cell; one with readings links to its entry in the Readings section (``readings``
    collects them in page order)."""
    if not isinstance(c, Cell):
        return _esc(c)
    parts = []
    if c.text:
        word = f"**{c.text}**" if c.style in _WORD_MARK else c.text
        parts.append(_WORD_MARK.get(c.style, "") + word)
    parts += c.lines
    parts += [f"{_MARK.get(t.style, '⚠ ')}{t.label} — {t.text}" for t in c.tags]
    cell = "<br>".join(_esc(p) for p in parts)
    if c.more:
        readings.append(c)
        cell += f"<br>[readings ({len(c.more)})](#readings-{len(readings)})"
    return cell


def _readings(readings: list[Cell]) -> str:
    """The section at the end of report.md: each linked cell's readings in full."""
    if not readings:
        return ""
    out = ["## Readings\n", "Everything behind a cell's *readings* link, in the order the cells appear.\n"]
    for i, c in enumerate(readings, 1):
        out.append(f'<a id="readings-{i}"></a>\n**{i}. {_md(c.more_title)}**: {_md(c.text)}\n')
        out.append("\n".join(f"- {_MARK.get(t.style, '⚠ ')}{_md(t.label)} — {_md(t.text)}" for t in c.more) + "\n")
    return "\n".join(out)


def _tokens(b: Tokens) -> str:
    t = b.transcript
    flagged = {i for s in t.sentences if s.flagged for i in range(s.first_token, s.last_token + 1)}
    toks = []
    for i, (text, score) in enumerate(t.tokens):
        mark = "**" if i in flagged else ""
        toks.append(f"{mark}{_md(text)}⟨{score:.3f}⟩{mark}")
    sentences = "; ".join(
        f"tokens {s.first_token}–{s.last_token}: {s.score:.3f}{' flagged' if s.flagged else ''}" for s in t.sentences
    )
    return (
        f"*{_md(b.title)}* (threshold {t.threshold:.3f}; colour scale from −{b.scale:.2f} to +{b.scale:.2f} around it; "
        "flagged sentences in bold)\n\n"
        f"> {''.join(toks).replace(chr(10), ' ')}\n\n" + (f"Sentence scores: {sentences}\n" if sentences else "")
    )


def _block(b: Block, figure_paths: dict[str, str], readings: list[Cell]) -> str:
    if isinstance(b, Heading):
        return f"{'#' * b.level} {_md(b.text)}\n"
    if isinstance(b, Para):
        return (f"*{_md(b.text)}*" if b.style == "muted" else _MARK[b.style] + _md(b.text)) + "\n"
    if isinstance(b, Bullets):
        return "\n".join(f"- {_MARK.get(style, '')}{_md(text)}" for style, text in b.items) + "\n"
    if isinstance(b, Table):
        lines = ["| " + " | ".join(_esc(h) for h in b.header) + " |", "|" + "---|" * len(b.header)]
        lines += ["| " + " | ".join(_cell(c, readings) for c in row) + " |" for row in b.rows]
        if b.caption:
            lines.append(f"\n*{_md(b.caption)}*")
        return "\n".join(lines) + "\n"
    if isinstance(b, Figure):
        return f"![{_md(b.caption)}]({figure_paths[b.key]})\n\n*{_md(b.caption)}*\n"
    if isinstance(b, Row):
        return "\n".join(_block(x, figure_paths, readings) for x in b.blocks)
    if isinstance(b, Details):
        return f"**{_md(b.summary)}**\n\n" + "\n".join(_block(x, figure_paths, readings) for x in b.blocks)
    if isinstance(b, Tokens):
        return _tokens(b)
    raise TypeError(f"unknown block {type(b).__name__}")


def render_markdown(blocks: list[Block], figure_paths: dict[str, str]) -> str:
    """``figure_paths`` maps a figure key (see `figure_filename`) to its relative path."""
    readings: list[Cell] = []
    page = "\n".join(_block(b, figure_paths, readings) for b in blocks)
    return page + ("\n" + _readings(readings) if readings else "")
