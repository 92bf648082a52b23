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

from liedar.core.results import LayerSweep, ModelReport, PositionHistogram, TransferMatrix, ValidationMatrix  # noqa: E402
from liedar.core.stats import Estimate  # noqa: E402

DPI = 110


def png_bytes(fig: "plt.Figure") -> bytes:
    """``fig`` as PNG bytes, the figure closed: the report's one PNG writer.

    Why one writer: every report figure (these and the audit page's) is written the same
    way: Agg, dpi `DPI`, tight bounding box, no Software tag in the PNG metadata.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A finished figure; it is closed here.

    Returns
    -------
    bytes
        The PNG file's bytes.
    """
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
    return png_bytes(fig)


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
    return png_bytes(fig)


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
    return png_bytes(fig)


Row = tuple[str, Optional[float], Optional[float], Optional[float], str, Optional[float]]


def _rate_rows(report: ModelReport) -> list[tuple[str, Row]]:
    """(row key, row) for each ceiling and each deception proportion read against it.

    A row without an estimate keeps its place with the label "(not computable)" and no
    point, so the figure shows the same rows as the tables."""
    rows: list[tuple[str, Row]] = []
    by_ceiling: dict[Optional[str], list] = {}
    for m in report.section.measures:
        if m.scale == "proportion" and m.kind != "quality":
            by_ceiling.setdefault(m.ceiling, []).append(m)

    def row(label: str, e: Optional[Estimate], colour: str, chance: Optional[float] = None) -> Row:
        if e is None:
            return (f"{label} (not computable)", None, None, None, colour, chance)
        return (label, e.value, e.lo, e.hi, colour, chance)

    for c in report.section.ceilings:
        rows.append((c.label, row(f"ceiling: {c.label}", c.estimate, "tab:green", c.chance)))
        for m in by_ceiling.pop(c.id, []):
            deceptive = m.higher_is_deceptive is True
            rows.append(
                (
                    m.label,
                    row(
                        f"   {m.label}" + ("" if deceptive else " (not a deception rate)"),
                        m.estimate,
                        "tab:red" if deceptive else "tab:gray",
                    ),
                )
            )
    for m in by_ceiling.pop(None, []):
        deceptive = m.higher_is_deceptive is True
        label = f"{m.label} ({'no ceiling' if deceptive else 'not a deception rate'})"
        rows.append((m.label, row(label, m.estimate, "tab:orange" if deceptive else "tab:gray")))
    return rows


def _draw_rows(ax: "plt.Axes", rows: list[Optional[Row]], y: "np.ndarray") -> None:
    for yi, r in zip(y, rows):
        if r is None:
            ax.text(0.5, yi, "not in this run", ha="center", va="center", fontsize=7, color="#555")
            continue
        _label, v, lo, hi, colour, chance = r
        if v is not None and lo is not None and hi is not None:
            ax.errorbar(v, yi, xerr=[[v - lo], [hi - v]], fmt="o", color=colour, capsize=3, ms=4)
        elif v is None:
            ax.text(0.5, yi, "not computable", ha="center", va="center", fontsize=7, color="#555")
        if chance is not None:
            ax.plot([chance], [yi], marker="|", color="black", ms=12)
    ax.set_xlim(-0.02, 1.02)
    ax.grid(axis="x", alpha=0.3)


def ceilings_vs_rates(report: ModelReport) -> Optional[bytes]:
    """Each deception proportion drawn directly under the ceiling it must be read against."""
    rows = [r for _, r in _rate_rows(report)]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7.0, 0.34 * len(rows) + 1.2))
    y = np.arange(len(rows))[::-1]
    _draw_rows(ax, list(rows), y)
    ax.set_yticks(y, [r[0] for r in rows], fontsize=8)
    ax.set_xlabel("rate (95% interval); black tick = chance accuracy")
    ax.set_title("Ceilings (green), rates read against them (red), no ceiling (orange), other (grey)", fontsize=10)
    return png_bytes(fig)


def ceilings_vs_rates_models(reports: list[ModelReport], names: list[str]) -> Optional[bytes]:
    """The same rows for every model, one column (panel) per model sharing the row labels,
    so a ceiling and its rates can be compared across models at a glance."""
    per_model = [dict(_rate_rows(mr)) for mr in reports]
    keys: list[str] = []
    labels: dict[str, str] = {}
    for mr in reports:
        for k, r in _rate_rows(mr):
            if k not in labels:
                keys.append(k)
                labels[k] = r[0].replace(" (not computable)", "")
    if not keys:
        return None
    k = len(reports)
    fig, axes = plt.subplots(1, k, figsize=(3.2 + 2.6 * k, 0.34 * len(keys) + 1.4), sharey=True, squeeze=False)
    y = np.arange(len(keys))[::-1]
    for j, (ax, rows, name) in enumerate(zip(axes[0], per_model, names)):
        _draw_rows(ax, [rows.get(key) for key in keys], y)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("rate (95% CI)", fontsize=8)
        if j == 0:
            ax.set_yticks(y, [labels[key] for key in keys], fontsize=8)
    fig.suptitle("Ceilings (green), rates read against them (red), no ceiling (orange); | = chance", fontsize=10)
    return png_bytes(fig)


def validation_heatmap(vm: Optional[ValidationMatrix]) -> Optional[bytes]:
    """Detector × model, coloured by the verdict against ground truth, effect [95% CI] written in each cell."""
    if vm is None or not vm.cells:
        return None
    detectors = list(dict.fromkeys([d.detector for d in vm.detectors] + [c.detector for c in vm.cells]))
    labels = {d.detector: d.label for d in vm.detectors}
    # 0 = correct, 1 = wrong (false flag or miss), 0.5 = no verdict / no ground truth, nan = not run
    grid = np.full((len(detectors), len(vm.models)), np.nan)
    text = [["not run"] * len(vm.models) for _ in detectors]
    for i, d in enumerate(detectors):
        for j, m in enumerate(vm.models):
            c = vm.cell(d, m)
            if c is None:
                continue
            word = {True: "FLAG", False: "clear", None: "no verdict"}[c.flag]
            if c.flag is None and c.note.startswith("too few to decide"):
                word = "too few"
            if c.truth is not None and c.flag is not None:
                grid[i, j] = 0.0 if c.flag == c.truth else 1.0
            else:
                grid[i, j] = 0.5
            e = c.effect
            num = "not computable" if e is None else f"{e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}]\nn={e.n}"
            truth = {True: "has it", False: "lacks it", None: "truth ?"}[c.truth]
            power = f"\npower {c.power['value']:.2f}" if c.power and c.power.get("value") is not None else ""
            text[i][j] = f"{word} ({truth})\n{num}{power}"
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap(["#b7e1c1", "#ffe3a3", "#f4a6a6"]).with_extremes(bad="#e6e6e6")
    fig, ax = plt.subplots(figsize=(1.5 * len(vm.models) + 1.8, 0.75 * len(detectors) + 1.0))
    ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(vm.models)), vm.models, rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(len(detectors)), [labels.get(d, d) for d in detectors], fontsize=8)
    for i in range(len(detectors)):
        for j in range(len(vm.models)):
            ax.text(j, i, text[i][j], ha="center", va="center", fontsize=8, color="black")
    ax.set_title("Verdict vs ground truth\n(green correct, red wrong, amber no verdict)", fontsize=9)
    return png_bytes(fig)


def all_figures(report: ModelReport) -> dict[str, bytes]:
    """name -> PNG bytes for every per-model figure this model's data supports (the
    ceilings-vs-rates figure spans models: `report_figures`)."""
    figs = {
        "transfer_matrix": transfer_heatmap(report.section.transfer),
        "layer_sweep": layer_sweep_curve(report.section.layer_sweep),
        "position_choice": position_histogram(report.section.positions),
        "validation_matrix": validation_heatmap(report.section.validation),
    }
    return {k: v for k, v in figs.items() if v is not None}


def report_figures(models: list[ModelReport], names: list[str]) -> dict[str, bytes]:
    """name -> PNG bytes for the figures that put models side by side."""
    png = ceilings_vs_rates(models[0]) if len(models) == 1 else ceilings_vs_rates_models(models, names)
    return {} if png is None else {"ceilings_vs_rates": png}
