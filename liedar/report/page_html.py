"""Render the report's blocks as one self-contained HTML page.

Why self-contained: the page is mailed around and opened offline; figures are embedded
as base64 PNG data URIs and the style sheet is inline — no external asset, no script.
Collapsing uses `<details>`; tags are `<details>` too, so a caveat is one click away and
never a banner. Every colour carries a word beside it (verdicts, flags), text colours
meet WCAG AA contrast on their backgrounds (checked in a real browser by
tests/liedar/test_report_browser.py), and on a phone tables scroll inside their own box
(the verdict table becomes one card per category) so the page itself never scrolls sideways.
"""

from __future__ import annotations

import base64
from html import escape

from liedar.report.document import (
    Block,
    Bullets,
    Cell,
    CellLike,
    Details,
    Figure,
    Heading,
    Para,
    Row,
    Table,
    Tag,
    Tokens,
)

STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;max-width:1180px;
margin:24px auto;padding:0 16px;color:#1d1d1f;background:#fff;line-height:1.45;overflow-wrap:break-word}
h1{border-bottom:2px solid #333;padding-bottom:4px;font-size:1.8em}h2{margin-top:36px;border-bottom:1px solid #bbb}
h3{margin-top:26px}h4{margin:18px 0 6px}
.tw{overflow-x:auto;max-width:100%;margin:8px 0 4px}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
thead th{background:#f0f0f3}tbody th{background:#f7f7f9;font-weight:600}
td.num{white-space:nowrap}
.caption{font-size:12px;color:#555;margin:2px 0 14px}.muted{color:#595959;font-size:13px}
p.lead{font-size:15px;background:#f4f6fa;border-left:4px solid #44546a;padding:8px 12px}
.caution{background:#fff4e0;border-left:4px solid #b86e00;padding:6px 10px;margin:4px 0;list-style:none}
.info{background:#eaf3ff;border-left:4px solid #2f6fdb;padding:6px 10px;margin:4px 0;list-style:none}
ul.notes{padding-left:0}figure{margin:12px 0 22px}img{max-width:100%;height:auto;border:1px solid #ddd}
.sub{display:block;font-size:12px;color:#444;font-weight:400}
.w{font-weight:700}
td.flagged,td.flag{background:#fde7e7;color:#8a0010}td.clear{background:#e6f4ea;color:#14532d}
td.cannot{background:#fff3d6;color:#6b4200}td.absent{background:#eeeeee;color:#404040}
td.nc{white-space:normal;font-style:italic;color:#6b4200;background:#fff4e0;min-width:12em}
td.flagged .sub,td.clear .sub,td.cannot .sub,td.absent .sub{color:#1d1d1f}
details.tag{display:inline-block;margin:2px 4px 0 0;vertical-align:top;max-width:34em}
details.tag>summary{cursor:pointer;font-size:12px;border-radius:10px;padding:0 8px;list-style-position:inside;
background:#fff4e0;color:#5c3900;border:1px solid #d9a441}
details.tag.sev-info>summary{background:#eaf3ff;color:#123d7a;border-color:#8fb3ea}
details.tag>div{font-size:12px;color:#1d1d1f;background:#fff;border:1px solid #ccc;padding:4px 6px;margin-top:2px}
details.cellmore{margin-top:3px;font-size:12px}details.cellmore>summary{cursor:pointer;color:#1d1d1f}
details.cellmore ul{margin:4px 0 0;padding:4px 6px 4px 18px;background:#fff;border:1px solid #ccc;color:#1d1d1f;
max-width:40em}
details.more{margin:8px 0}details.more>summary{cursor:pointer;font-weight:600}
.row{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}.row>*{flex:1 1 360px;min-width:0}
.row figure{margin-top:8px}
.tokens{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px;line-height:1.9;
border:1px solid #ddd;padding:8px;white-space:pre-wrap;overflow-wrap:anywhere}
.tokens span.t{border-radius:2px}.tokens span.t.over{text-decoration:underline;text-decoration-thickness:2px}
.tokens span.s.flagged{outline:2px solid #8a0010;outline-offset:1px;border-radius:3px}
.legend{display:flex;flex-wrap:wrap;align-items:center;gap:6px;font-size:12px;margin:4px 0 2px}
.legend span.sw{display:inline-block;padding:0 6px;border:1px solid #ccc;color:#1d1d1f}
.legend span.th{border-left:3px solid #1d1d1f;padding-left:4px}
@media (max-width:640px){
 body{margin:12px auto;padding:0 10px}
 table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 table.stack,table.stack tbody,table.stack tr,table.stack th,table.stack td{display:block;width:100%}
 table.stack tr{margin:0 0 12px;border:1px solid #bbb}
 table.stack td::before{content:attr(data-label);display:block;font-size:11px;font-weight:700;color:#1d1d1f}
 .row>*{flex-basis:100%}
}
"""

# the token shading: white mixed with these at most this much (so dark text keeps AA contrast)
_ABOVE, _BELOW, _MAX_MIX = (215, 48, 31), (43, 108, 176), 0.5


def _mix(rgb: tuple[int, int, int], t: float) -> str:
    a = max(0.0, min(1.0, t)) * _MAX_MIX
    r, g, b = (round(255 + (c - 255) * a) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


def token_colour(score: float, threshold: float, scale: float) -> str:
    """Red above the threshold, blue below, white at it; saturation by distance / scale."""
    d = (score - threshold) / scale if scale > 0 else 0.0
    return _mix(_ABOVE, d) if d > 0 else _mix(_BELOW, -d)


def _tags(tags: list[Tag]) -> str:
    return "".join(
        f'<details class="tag sev-{escape(t.style)}"><summary>{escape(t.label)}</summary>'
        f"<div>{escape(t.text)}</div></details>"
        for t in tags
    )


def _cell(c: CellLike, label: str, tag: str = "td", scope: str = "") -> str:
    cell = c if isinstance(c, Cell) else Cell(c)
    cls = f' class="{cell.style}"' if cell.style else ""
    attrs = f'{cls} data-label="{escape(label)}"' + (f' scope="{scope}"' if scope else "")
    main = escape(cell.text)
    if cell.style in ("flagged", "clear", "cannot", "absent") and cell.text:
        main = f'<span class="w">{main}</span>'
    sub = "".join(f'<span class="sub">{escape(x)}</span>' for x in cell.lines)
    return f"<{tag}{attrs}>{main}{sub}{_tags(cell.tags)}{_more(cell)}</{tag}>"


def _more(cell: Cell) -> str:
    """A cell's readings behind one disclosure: closed, the cell is its one line."""
    if not cell.more:
        return ""
    items = "".join(f"<li><b>{escape(t.label)}</b>: {escape(t.text)}</li>" for t in cell.more)
    return f'<details class="cellmore"><summary>readings ({len(cell.more)})</summary><ul>{items}</ul></details>'


def _table(b: Table) -> str:
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in b.header)
    body = []
    for row in b.rows:
        cells = []
        for j, c in enumerate(row):
            label = b.header[j] if j < len(b.header) else ""
            if j == 0 and b.row_headers:
                cells.append(_cell(c, label, "th", "row"))
            else:
                cells.append(_cell(c, label))
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f'<div class="caption">{escape(b.caption)}</div>' if b.caption else ""
    cls = ' class="stack"' if b.stack else ""
    return (
        f'<div class="tw"><table{cls}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>{cap}'
    )


def _tokens(b: Tokens) -> str:
    t = b.transcript
    starts = {s.first_token: s for s in t.sentences}
    ends = {s.last_token for s in t.sentences}
    out = []
    for i, (text, score) in enumerate(t.tokens):
        if i in starts:
            s = starts[i]
            flag = " flagged" if s.flagged else ""
            out.append(f'<span class="s{flag}" title="sentence score {s.score:.3f}">')
        over = " over" if score > t.threshold else ""
        colour = token_colour(score, t.threshold, b.scale)
        out.append(f'<span class="t{over}" style="background:{colour}" title="{score:.3f}">{escape(text)}</span>')
        if i in ends:
            out.append("</span>")
    legend = (
        '<div class="legend" aria-hidden="true">'
        f'<span class="sw" style="background:{_mix(_BELOW, 1)}">−{b.scale:.2f}</span>'
        f'<span class="sw" style="background:{_mix(_BELOW, 0.5)}">below</span>'
        f'<span class="sw th" style="background:#fff">threshold {t.threshold:.3f}</span>'
        f'<span class="sw" style="background:{_mix(_ABOVE, 0.5)}">above</span>'
        f'<span class="sw" style="background:{_mix(_ABOVE, 1)}">+{b.scale:.2f}</span></div>'
    )
    return (
        f'<figure class="transcript"><figcaption class="caption">{escape(b.title)}</figcaption>{legend}'
        f'<div class="tokens">{"".join(out)}</div></figure>'
    )


def _block(b: Block, figure_bytes: dict[str, bytes]) -> str:
    if isinstance(b, Heading):
        return f"<h{b.level}>{escape(b.text)}</h{b.level}>"
    if isinstance(b, Para):
        return f'<p class="{b.style}">{escape(b.text)}</p>' if b.style else f"<p>{escape(b.text)}</p>"
    if isinstance(b, Bullets):
        items = "".join(f'<li class="{s}">{escape(t)}</li>' if s else f"<li>{escape(t)}</li>" for s, t in b.items)
        return f'<ul class="notes">{items}</ul>'
    if isinstance(b, Table):
        return _table(b)
    if isinstance(b, Figure):
        data = base64.b64encode(figure_bytes[b.key]).decode("ascii")
        return (
            f'<figure><img alt="{escape(b.caption)}" src="data:image/png;base64,{data}">'
            f'<figcaption class="caption">{escape(b.caption)}</figcaption></figure>'
        )
    if isinstance(b, Row):
        return '<div class="row">' + "".join(f"<div>{_block(x, figure_bytes)}</div>" for x in b.blocks) + "</div>"
    if isinstance(b, Details):
        inner = "\n".join(_block(x, figure_bytes) for x in b.blocks)
        return f'<details class="more"><summary>{escape(b.summary)}</summary>{inner}</details>'
    if isinstance(b, Tokens):
        return _tokens(b)
    raise TypeError(f"unknown block {type(b).__name__}")


def render_html(blocks: list[Block], figure_bytes: dict[str, bytes], title: str = "liedar report") -> str:
    """``figure_bytes`` maps a figure key (see `figure_filename`) to its PNG bytes."""
    parts = [_block(b, figure_bytes) for b in blocks]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body><main>\n"
        + "\n".join(parts)
        + "\n</main></body></html>\n"
    )
