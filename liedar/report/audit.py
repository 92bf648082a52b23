"""The report's *Audit* section, from an audit's results JSON (``liedar audit`` writes it).

Why from the JSON and not from the audit's objects: the report layer sits below the
audit and must re-render without a model (`liedar report --audit audit.json`); the JSON is
the audit's one record. Laid out like the validation section: the verdicts first (one row
per model, its evidence rows under it), then for a zoo audit the confusion matrix and the
power curves as figures, the per-detector rates with their intervals, and the AISI anchor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from liedar.core.stats import Estimate
from liedar.report.document import Block, Bullets, Cell, CellLike, Figure, Heading, Para, Row, Table

STATE_WORDS = {
    "flag": ("flagged", "flagged"),
    "clear": ("clear", "clear"),
    "too_few": ("too few to decide", "cannot"),
    "incapable": ("cannot tell: incapable", "cannot"),
    "not_computable": ("not computable", "nc"),
    "not_run": ("not run", "absent"),
}
VERDICT_STYLE = {"clean": "clear", "cannot_tell": "cannot"}
FIGURES = {
    "audit_confusion": "Verdicts against the zoo's truth (counts of models).",
    "audit_power": "Per detector: each targeted member caught (1) or not (0) against its card's strength, and the "
    "power to catch a paired gap at the audit's n (McNemar, discordant share gap + 0.10).",
}


def figure_file(key: str) -> str:
    return f"{key.replace('_', '-')}.png"


def _est(d: Optional[dict[str, Any]]) -> str:
    if not d or d.get("value") is None:
        return "—"
    e = Estimate.from_dict(d)
    return f"{e.value:+.3f} [{e.lo:+.3f}, {e.hi:+.3f}]"


def _rate(d: Optional[dict[str, Any]]) -> str:
    if not d:
        return "not measured"
    e = Estimate.from_dict(d)
    return f"{e.successes}/{e.n} = {e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}]"


def _row_cell(r: dict[str, Any]) -> Cell:
    word, style = STATE_WORDS.get(r["state"], (r["state"], ""))
    lines = []
    if r.get("excess"):
        lines.append(f"excess {_est(r['excess'])}; model {_est(r.get('effect'))}, reference {_est(r.get('reference'))}")
    if r.get("n"):
        power = f", power {r['power']:.2f}" if r.get("power") is not None else ""
        need = f", 80% needs n ≥ {r['n_needed']}" if r.get("n_needed") else ""
        lines.append(f"n = {r['n']}{power}{need}")
    lines.append(r.get("why", ""))
    return Cell(f"{r['detector']}: {word}", style, lines)


def _name(m: dict[str, Any]) -> str:
    return str(m.get("name") or m.get("model"))


def verdict_table(results: dict[str, Any]) -> Table:
    """One row per model: verdict, truth (a zoo audit), then one cell per evidence row."""
    models = results["models"]
    kinds = list(dict.fromkeys(r["kind"] for m in models for r in m["verdict"]["rows"]))
    zoo = "zoo" in results
    header = ["model"] + (["truth"] if zoo else ["reference"]) + ["verdict"] + kinds
    rows: list[list[CellLike]] = []
    for m in models:
        v = m["verdict"]
        if zoo:
            style = "clear" if v["verdict"] == m["truth"] else "flagged"
        else:
            style = VERDICT_STYLE.get(v["verdict"], "flagged")
        first: list[CellLike] = [_name(m), m["truth"] if zoo else m.get("reference", "")]
        cells: list[CellLike] = []
        for k in kinds:
            mine = [r for r in v["rows"] if r["kind"] == k]
            cells.append(_row_cell(mine[0]) if len(mine) == 1 else Cell(" · ".join(r["state"] for r in mine), ""))
        rows.append(first + [Cell(v["verdict"].replace("_", " "), style, [v["why"]])] + cells)
    caption = (
        "Green = verdict matches the truth, red = it does not. "
        if zoo
        else "Red = a deception verdict, amber = cannot tell, green = clean. "
    ) + "Each evidence cell: the detector used (format chosen per model), its state, the excess over the reference."
    return Table(header, rows, caption, row_headers=True)


def audit_blocks(results: dict[str, Any], figures: dict[str, bytes]) -> list[Block]:
    """The Audit section's blocks; ``figures`` from `audit_figures` (absent ones are skipped)."""
    rule = results["rule"]
    out: list[Block] = [Heading(2, "Audit")]
    status = "PROVISIONAL rule (not chosen on a development half)" if rule["status"] == "provisional" else "rule"
    out.append(
        Para(
            f"{status} {rule['path']} (sha256 {rule['sha256'][:16]}...); every detector run as on an unknown model "
            "(default prompts, no trigger, no card) and read against the reference model.",
            "caution" if rule["status"] == "provisional" else "lead",
        )
    )
    out.append(verdict_table(results))
    sc = results.get("score")
    if not sc:
        return out
    z = results["zoo"]
    a = sc["anchor"]
    out.append(Heading(3, f"Scored against the {z['name']} zoo's truth ({z['half']} half, {sc['n_models']} models)"))
    out.append(
        Table(
            ["", "correct", "decoys flagged"],
            [
                [
                    f"liedar audit ({z['half']} half)",
                    _rate(sc["accuracy"]),
                    f"{len(sc['decoys_flagged'])}/{sc['decoys']}",
                ],
                ["AISI blue team, black-box methods and probes", _rate(a["black_box_and_probes_rate"]), "—"],
                ["AISI blue team, with fine-tuning access", _rate(a["with_fine_tuning_rate"]), "—"],
            ],
            "The anchor: " + a["source"] + ". Clopper-Pearson 95% intervals over models.",
            row_headers=True,
        )
    )
    conf = sc["confusion"]
    preds = list(next(iter(conf.values())).keys())
    table = Table(
        ["truth \\ verdict"] + preds,
        [[t] + [str(conf[t][p]) for p in preds] for t in conf],
        "Confusion matrix: rows are the truth, columns the verdict.",
        row_headers=True,
    )
    if "audit_confusion" in figures:
        out.append(Row([table, Figure(figure_file("audit_confusion"), FIGURES["audit_confusion"])]))
    else:
        out.append(table)
    det_rows: list[list[CellLike]] = []
    for det, d in sc["per_detector"].items():
        recall = "; ".join(
            f"{k}: {_rate(v['rate'])}" + (f" ({v['undecided']} undecided)" if v["undecided"] else "")
            for k, v in d["recall"].items()
        )
        ff = d["false_flags"]
        need = ", ".join(f"gap {g}: {n}" for g, n in d["items_needed"].items())
        if d.get("power_model"):
            need += f" ({d['power_model']})"
        det_rows.append(
            [det, recall, _rate(ff["rate"]) + (f" ({ff['undecided']} undecided)" if ff["undecided"] else ""), need]
        )
    out.append(
        Table(
            ["detector", "recall on the kinds it targets", "false flags on the decoys", "items for 80% power"],
            det_rows,
            "Undecided rows (too few, incapable, not computable) count as not flagged.",
        )
    )
    if "audit_power" in figures:
        out.append(Figure(figure_file("audit_power"), FIGURES["audit_power"]))
    out.append(
        Bullets(
            [
                ("muted", f"{m['id']} = {m['name']} ({m.get('role')}, {m.get('kind')}; trigger: {m.get('trigger')})")
                for m in results["models"]
            ]
        )
    )
    return out


def audit_figures(results: dict[str, Any]) -> dict[str, bytes]:
    """The confusion matrix and the power curves as PNG bytes (a zoo audit only)."""
    sc = results.get("score")
    if not sc:
        return {}
    import matplotlib.pyplot as plt
    import numpy as np

    from liedar.report.figures import png_bytes  # the report's one PNG writer (Agg, fixed dpi, no timestamp)

    figs: dict[str, bytes] = {}
    conf = sc["confusion"]
    truths, preds = list(conf), list(next(iter(conf.values())))
    values = np.array([[conf[t][p] for p in preds] for t in truths], dtype=float)
    fig, ax = plt.subplots(figsize=(1.0 * len(preds) + 2.2, 0.55 * len(truths) + 1.6))
    ax.imshow(values, cmap="Greens", vmin=0, vmax=max(1.0, values.max()))
    ax.set_xticks(range(len(preds)), [p.replace("_", " ") for p in preds], rotation=30, ha="right")
    ax.set_yticks(range(len(truths)), [t.replace("_", " ") for t in truths])
    ax.set_xlabel("verdict")
    ax.set_ylabel("truth")
    for i in range(len(truths)):
        for j in range(len(preds)):
            dark = values[i, j] > 0.6 * max(1.0, values.max())
            ax.text(
                j, i, f"{int(values[i, j])}", ha="center", va="center", fontsize=9, color="white" if dark else "black"
            )
    ax.set_title(f"Audit: {sc['correct']}/{sc['n_models']} correct")
    figs["audit_confusion"] = png_bytes(fig)
    dets = [(k, d) for k, d in sc["per_detector"].items() if d["points"] or d["curve"]]
    if dets:
        fig, axes = plt.subplots(1, len(dets), figsize=(3.3 * len(dets), 3.0), squeeze=False)
        for ax, (det, d) in zip(axes[0], dets):
            if d["curve"]:
                c = np.array(d["curve"])
                ax.plot(c[:, 0], c[:, 1], color="0.4", lw=1.2, label=f"power at n={d['n']}")
            pts = [p for p in d["points"] if p["strength"] is not None]
            if pts:
                ax.scatter(
                    [p["strength"] for p in pts],
                    [1.0 if p["caught"] else 0.0 for p in pts],
                    c=["tab:red" if p["caught"] else "tab:blue" for p in pts],
                    s=28,
                    zorder=3,
                )
            right = max([0.6] + [float(p["strength"]) for p in pts])
            ax.set_xlim(0.0, right + 0.05)
            ax.set_ylim(-0.08, 1.08)
            ax.set_xlabel("strength (card headline)")
            ax.set_title(det, fontsize=9)
        axes[0][0].set_ylabel("caught / power")
        axes[0][0].legend(fontsize=7, loc="lower right")
        figs["audit_power"] = png_bytes(fig)
    return figs


def write_audit_page(results: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    """The Audit section on a page of its own: ``index.html`` (figures embedded), ``report.md``
    and ``figures/``, written atomically. Returns {"html", "markdown"} -> path."""
    from liedar.core._util.atomic import check_inside, write_bytes_atomic
    from liedar.report.page_html import render_html
    from liedar.report.page_markdown import render_markdown

    out_dir = Path(out_dir)
    check_inside(out_dir, "figures", "index.html", "report.md")
    figs = audit_figures(results)
    keyed = {figure_file(k): png for k, png in figs.items()}
    blocks = audit_blocks(results, figs)
    for name, png in keyed.items():
        write_bytes_atomic(out_dir / "figures" / name, png)
    paths = {"html": out_dir / "index.html", "markdown": out_dir / "report.md"}
    write_bytes_atomic(paths["html"], render_html(blocks, keyed, title="liedar audit").encode("utf-8"))
    md = render_markdown(blocks, {k: f"figures/{k}" for k in keyed})
    write_bytes_atomic(paths["markdown"], md.encode("utf-8"))
    return paths


__all__ = ["audit_blocks", "audit_figures", "verdict_table", "write_audit_page"]
