"""The report's figures as PNG bytes (matplotlib, Agg backend, no display needed).

Why bytes: the HTML page embeds them as base64 (one self-contained file that opens
offline) and the Markdown page links the same bytes written to figures/.
Each function returns None when the report lacks the data, so a skipped step leaves
no empty chart.
"""

from __future__ import annotations

import io
from typing import Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (backend must be chosen first)
import numpy as np  # noqa: E402

from liedar.results import LayerSweep, ModelReport, PositionHistogram, TransferMatrix  # noqa: E402
from liedar.stats import Estimate  # noqa: E402

DPI = 110


def _png(fig: "plt.Figure") -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def transfer_heatmap(tm: Optional[TransferMatrix]) -> Optional[bytes]:
    if tm is None:
        return None
    values = np.array([[np.nan if c is None else c.value for c in row] for row in tm.cells], dtype=float)
    fig, ax = plt.subplots(figsize=(1.1 * len(tm.test) + 2.4, 0.6 * len(tm.train) + 1.6))
    im = ax.imshow(values, vmin=0.0, vmax=1.0, cmap="RdBu_r")
    ax.set_xticks(range(len(tm.test)), tm.test, rotation=35, ha="right")
    ax.set_yticks(range(len(tm.train)), tm.train)
    ax.set_xlabel("tested on")
    ax.set_ylabel("trained on")
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            text = "—" if np.isnan(values[i, j]) else f"{values[i, j]:.2f}"
            dark = not np.isnan(values[i, j]) and abs(values[i, j] - 0.5) > 0.3
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if dark else "black")
    fig.colorbar(im, ax=ax, label="AUROC (0.5 = chance)", shrink=0.8)
    ax.set_title("Probe transfer: AUROC")
    return _png(fig)


def layer_sweep_curve(sweep: Optional[LayerSweep]) -> Optional[bytes]:
    if sweep is None:
        return None
    x = np.array(sweep.layers)
    v = np.array([e.value for e in sweep.auroc])
    lo = np.array([e.lo for e in sweep.auroc])
    hi = np.array([e.hi for e in sweep.auroc])
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    if sweep.validation:
        ax.plot(
            x,
            [e.value for e in sweep.validation],
            marker="s",
            ms=3,
            ls=":",
            color="tab:grey",
            label="validation AUROC (chooses the layer)",
        )
    ax.fill_between(x, lo, hi, alpha=0.25, label="95% interval")
    ax.plot(x, v, marker="o", ms=3, label="test AUROC")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--", label="chance")
    ax.axvline(
        sweep.chosen_layer, color="tab:red", lw=0.8, label=f"chosen layer {sweep.chosen_layer} ({sweep.chosen_on})"
    )
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("AUROC")
    ax.set_ylim(0.0, 1.02)
    ax.set_title(f"Layer sweep{': ' + sweep.dataset if sweep.dataset else ''}")
    ax.legend(fontsize=7, loc="lower right")
    return _png(fig)


def position_histogram(pos: Optional[PositionHistogram]) -> Optional[bytes]:
    if pos is None or not pos.counts:
        return None
    conds = list(pos.counts)
    width = 0.8 / len(conds)
    fig, ax = plt.subplots(figsize=(5.5, 3.0))
    x = np.arange(pos.n_options)
    for k, cond in enumerate(conds):
        counts = np.array(pos.counts[cond], dtype=float)
        share = counts / max(1.0, counts.sum())
        ax.bar(x + (k - (len(conds) - 1) / 2) * width, share, width, label=f"{cond} (n={int(counts.sum())})")
    ax.axhline(1.0 / pos.n_options, color="grey", lw=0.8, ls="--", label="uniform")
    ax.set_xticks(x, [chr(ord("A") + i) for i in range(pos.n_options)])
    ax.set_xlabel("presented position chosen")
    ax.set_ylabel("share of trials")
    ax.set_title("Position choice (option-order trials)")
    ax.legend(fontsize=7)
    return _png(fig)


def ceilings_vs_rates(report: ModelReport) -> Optional[bytes]:
    """Each deception proportion drawn directly under the ceiling it must be read against.

    A row without an estimate keeps its place with the label "(not computable)" and no
    point, so the figure shows the same rows as the tables."""
    Row = tuple[str, Optional[float], Optional[float], Optional[float], str, Optional[float]]
    rows: list[Row] = []
    by_ceiling: dict[Optional[str], list] = {}
    for m in report.section.measures:
        if m.scale == "proportion" and m.kind != "quality":
            by_ceiling.setdefault(m.ceiling, []).append(m)

    def row(label: str, e: Optional[Estimate], colour: str, chance: Optional[float] = None) -> Row:
        if e is None:
            return (f"{label} (not computable)", None, None, None, colour, chance)
        return (label, e.value, e.lo, e.hi, colour, chance)

    for c in report.section.ceilings:
        rows.append(row(f"ceiling: {c.label}", c.estimate, "tab:green", c.chance))
        for m in by_ceiling.pop(c.id, []):
            deceptive = m.higher_is_deceptive is True
            rows.append(
                row(
                    f"   {m.label}" + ("" if deceptive else " (not a deception rate)"),
                    m.estimate,
                    "tab:red" if deceptive else "tab:gray",
                )
            )
    for m in by_ceiling.pop(None, []):
        deceptive = m.higher_is_deceptive is True
        label = f"{m.label} ({'no ceiling' if deceptive else 'not a deception rate'})"
        rows.append(row(label, m.estimate, "tab:orange" if deceptive else "tab:gray"))
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7.0, 0.34 * len(rows) + 1.2))
    y = np.arange(len(rows))[::-1]
    for yi, (_label, v, lo, hi, colour, chance) in zip(y, rows):
        if v is not None and lo is not None and hi is not None:
            ax.errorbar(v, yi, xerr=[[v - lo], [hi - v]], fmt="o", color=colour, capsize=3, ms=4)
        if chance is not None:
            ax.plot([chance], [yi], marker="|", color="black", ms=12)
    ax.set_yticks(y, [r[0] for r in rows], fontsize=8)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("rate (95% interval); black tick = chance accuracy")
    ax.set_title("Ceilings (green), rates read against them (red), no ceiling (orange), other (grey)", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def all_figures(report: ModelReport) -> dict[str, bytes]:
    """name -> PNG bytes for every figure this model's data supports."""
    figs = {
        "ceilings_vs_rates": ceilings_vs_rates(report),
        "transfer_matrix": transfer_heatmap(report.section.transfer),
        "layer_sweep": layer_sweep_curve(report.section.layer_sweep),
        "position_choice": position_histogram(report.section.positions),
    }
    return {k: v for k, v in figs.items() if v is not None}
