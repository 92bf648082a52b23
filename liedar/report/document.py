"""The report laid out once as neutral blocks, rendered by both Markdown and HTML.

Why an intermediate layout: the two pages must show the same numbers in the same
order; writing the layout twice would let them drift. Here is the one place that
decides what is shown — and it enforces the report's rules that a deception rate is
never shown without its ceiling (a "ceiling" column on every rate row, reading
"not measured" when there is none), that a number the run could not estimate is a row
reading "not computable: <why>" (never 0, never blank), and that an instrument's
warnings sit in a "warnings" cell on the row they qualify.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from liedar.results import Caveat, Ceiling, Measure, ModelReport, NotComputable, Report
from liedar.stats import Estimate


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Para:
    text: str
    style: str = ""  # "caution" | "info" | "muted" | ""


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class Figure:
    key: str  # unique across models: the PNG's file name under figures/
    caption: str


@dataclass
class Bullets:
    items: list[tuple[str, str]] = field(default_factory=list)  # (style, text)


Block = Union[Heading, Para, Table, Figure, Bullets]

FIGURE_CAPTIONS = {
    "ceilings_vs_rates": "Capability ceilings beside the deception rates read against them.",
    "transfer_matrix": "Probe transfer matrix (AUROC, train on row, test on column).",
    "layer_sweep": "Probe AUROC by layer with 95% intervals; the chosen layer was picked on validation data.",
    "position_choice": "Share of trials choosing each presented position, per condition.",
}


def fmt_estimate(e: Estimate, digits: int = 3) -> str:
    """value [lo, hi] — the interval is never dropped."""
    return f"{e.value:.{digits}f} [{e.lo:.{digits}f}, {e.hi:.{digits}f}]"


NOT_COMPUTABLE = "not computable"


def fmt_not_computable(nc: NotComputable) -> str:
    """The value cell of a row without a number: says so and why, so it is never read as 0."""
    return f"{NOT_COMPUTABLE}: {nc.reason}"


def _value_cell(e: Optional[Estimate], nc: Optional[NotComputable]) -> str:
    return fmt_estimate(e) if e is not None else fmt_not_computable(nc)  # type: ignore[arg-type]


def _n_cell(e: Optional[Estimate], nc: Optional[NotComputable]) -> str:
    return str(e.n if e is not None else nc.n)  # type: ignore[union-attr]


def _method(e: Optional[Estimate]) -> str:
    if e is None:
        return "—"
    return e.method + (f"; {e.note}" if e.note else "")


def fmt_warnings(warnings: "tuple[Caveat, ...]") -> str:
    return "; ".join(f"⚠ {w.text}" for w in warnings)


def _ceiling_cell(report: ModelReport, m: Measure) -> str:
    if m.ceiling is None:
        return "not measured"
    c = report.ceiling(m.ceiling)
    if c.estimate is None:
        return f"{c.label}: {NOT_COMPUTABLE} (chance {c.chance:.2f})"
    return f"{c.label}: {fmt_estimate(c.estimate)} (n={c.estimate.n}, chance {c.chance:.2f})"


def _ceiling_row(c: Ceiling) -> list[str]:
    e = c.estimate
    return [
        c.label,
        _value_cell(e, c.not_computable),
        _n_cell(e, c.not_computable),
        f"{c.chance:.2f}",
        c.protocol,
        fmt_warnings(c.warnings),
        _method(e),
    ]


def _flag(m: Measure) -> str:
    return {True: "FLAGGED", False: "not flagged", None: ""}[m.flag]


def _rate_rows(report: ModelReport, measures: list[Measure]) -> list[list[str]]:
    rows = []
    for m in measures:
        e, nc = m.estimate, m.not_computable
        kappa = "" if m.grader_kappa is None else f"; grader κ {fmt_estimate(m.grader_kappa, 2)} (n={m.grader_kappa.n})"
        rows.append(
            [
                m.label,
                _value_cell(e, nc),
                _n_cell(e, nc),
                m.kind,
                _ceiling_cell(report, m),
                _flag(m),
                fmt_warnings(m.warnings),
                _method(e) + kappa,
            ]
        )
    return rows


def model_blocks(mr: ModelReport, figures: dict[str, bytes]) -> list[Block]:
    s = mr.section
    name = mr.model.get("name", "?")
    blocks: list[Block] = [
        Heading(2, f"Model: {name}"),
        Para(
            " · ".join(f"{k}: {v}" for k, v in mr.model.items() if k != "name") or "no model metadata",
            "muted",
        ),
        Heading(3, "Readings"),
    ]
    if mr.readings:
        blocks.append(Bullets([(r.severity, r.text) for r in mr.readings]))
    else:
        blocks.append(Para("No rule fired on these numbers.", "muted"))

    blocks.append(Heading(3, "Capability ceilings (what the model can do, elicited hard)"))
    if s.ceilings:
        blocks.append(
            Table(
                ["ceiling", "accuracy [95% CI]", "n", "chance", "protocol", "warnings", "method"],
                [_ceiling_row(c) for c in s.ceilings],
            )
        )
    else:
        blocks.append(
            Para("No capability ceiling was measured: no low deception rate below can be read as honesty.", "caution")
        )

    deception = [m for m in s.measures if m.kind != "quality"]
    quality = [m for m in s.measures if m.kind == "quality"]
    blocks.append(Heading(3, "Deception measures (each beside its ceiling)"))
    if deception:
        blocks.append(
            Table(
                ["measure", "value [95% CI]", "n", "kind", "ceiling", "flag", "warnings", "method"],
                _rate_rows(mr, deception),
                "Proportions in [0, 1]; gaps are differences of proportions (0 = none); φ is a ratio (1 = none); "
                'scores are the detector\'s confidence (0 = consistent). "not computable" rows were attempted but '
                "had no records to estimate from; they are not zero.",
            )
        )
    else:
        blocks.append(Para("No deception measure was produced (see Steps).", "caution"))
    if s.comparisons:
        rows = []
        for c in s.comparisons:
            a, b = mr.measure(c.a), mr.measure(c.b)
            overlap = a.estimate.lo <= b.estimate.hi and b.estimate.lo <= a.estimate.hi
            rows.append(
                [
                    c.label,
                    f"{fmt_estimate(a.estimate)} (n={a.estimate.n})",
                    f"{fmt_estimate(b.estimate)} (n={b.estimate.n})",
                    "overlap: no difference shown" if overlap else "no overlap",
                ]
            )
        blocks += [Heading(4, "Comparisons"), Table(["comparison", "first", "second", "intervals"], rows)]

    blocks.append(Heading(3, "Probe quality"))
    if quality:
        blocks.append(
            Table(
                ["metric", "value [95% CI]", "n", "warnings", "method"],
                [
                    [
                        m.label,
                        _value_cell(m.estimate, m.not_computable),
                        _n_cell(m.estimate, m.not_computable),
                        fmt_warnings(m.warnings),
                        _method(m.estimate),
                    ]
                    for m in quality
                ],
            )
        )
    if s.layer_sweep is not None:
        ls = s.layer_sweep
        blocks.append(
            Para(
                f"Layer sweep{' on ' + ls.dataset if ls.dataset else ''}: chosen layer {ls.chosen_layer} "
                f"(chosen on {ls.chosen_on})."
            )
        )
        val = ls.validation or [None] * len(ls.layers)
        blocks.append(
            Table(
                ["layer", "test AUROC [95% CI]", "n", "validation AUROC", "chosen"],
                [
                    [
                        str(layer),
                        fmt_estimate(e),
                        str(e.n),
                        "" if v is None else f"{fmt_estimate(v)} n={v.n}",
                        "←" if layer == ls.chosen_layer else "",
                    ]
                    for layer, e, v in zip(ls.layers, ls.auroc, val)
                ],
            )
        )
    if s.transfer is not None:
        tm = s.transfer
        blocks.append(
            Table(
                ["trained on \\ tested on"] + tm.test,
                [
                    [tm.train[i]] + ["—" if c is None else f"{fmt_estimate(c, 2)} n={c.n}" for c in row]
                    for i, row in enumerate(tm.cells)
                ],
                "Transfer matrix: AUROC with 95% interval and test n.",
            )
        )
    if not quality and s.layer_sweep is None and s.transfer is None:
        blocks.append(Para("No probe results (see Steps).", "caution"))

    blocks.append(Heading(3, "Cross-check: behavioural flags vs probe flags on the same items"))
    cc = s.cross_check
    if cc is None:
        blocks.append(Para("Not available (see Steps).", "caution"))
    else:
        (both, beh_only), (probe_only, neither) = cc.table
        blocks += [
            Para(f"Behavioural flag: {cc.behavioural}. Probe flag: {cc.probe}."),
            Table(
                ["", "probe flagged", "probe not flagged"],
                [
                    ["behaviour flagged", str(both), str(beh_only)],
                    ["behaviour not flagged", str(probe_only), str(neither)],
                ],
            ),
            Para(
                (
                    f"Cohen's κ = {fmt_estimate(cc.kappa)} ({_method(cc.kappa)})"
                    if cc.kappa is not None
                    else f"Cohen's κ undefined: {cc.kappa_note}"
                )
                + f"; raw agreement = {fmt_estimate(cc.agreement)}; n = {cc.n} items."
            ),
        ]
        if cc.disagreements:
            blocks.append(
                Table(
                    ["item", "behaviour", "probe", "probe score", "note"],
                    [
                        [
                            d.item_id,
                            "flag" if d.behavioural_flag else "—",
                            "flag" if d.probe_flag else "—",
                            "" if d.probe_score is None else f"{d.probe_score:.3f}",
                            d.note,
                        ]
                        for d in cc.disagreements
                    ],
                    f"The {len(cc.disagreements)} item{'' if len(cc.disagreements) == 1 else 's'} where the two lines "
                    "of evidence disagree.",
                )
            )
        else:
            blocks.append(Para("The two lines of evidence agree on every item.", "muted"))

    if figures:
        blocks.append(Heading(3, "Figures"))
        blocks += [Figure(figure_filename(name, k), FIGURE_CAPTIONS[k]) for k in figures]

    blocks.append(Heading(3, "Steps"))
    blocks.append(
        Table(
            ["step", "status", "seconds", "from cache", "reason"],
            [
                [
                    st.name,
                    st.status.replace("_", " "),
                    "" if st.seconds is None else f"{st.seconds:.1f}",
                    "yes" if st.cached else "no",
                    st.reason,
                ]
                for st in mr.steps
            ],
        )
    )
    return blocks


def report_blocks(report: Report, figures: dict[str, dict[str, bytes]]) -> list[Block]:
    """All blocks of the page; ``figures`` maps model name -> figure name -> PNG bytes."""
    blocks: list[Block] = [
        Heading(1, "liedar report"),
        Para(
            f"Generated {report.created_utc or '(unknown time)'} by liedar {report.liedar_version or '?'} "
            f"(report schema {report.schema_version}). Every rate is shown with its 95% interval and n; "
            "every deception rate is shown beside the capability ceiling it must be read against. "
            "Readings are generated from the numbers by fixed rules (docs/report.md).",
            "muted",
        ),
    ]
    if report.config:
        cfg = {k: v for k, v in report.config.items() if k != "sizes"}
        blocks.append(Para("Config: " + ", ".join(f"{k}={v}" for k, v in cfg.items()), "muted"))
        sizes = report.config.get("sizes") or {}
        if sizes:
            blocks.append(Para("Sizes: " + "; ".join(f"{k} {v}" for k, v in sizes.items()), "muted"))
    for mr in report.models:
        blocks += model_blocks(mr, figures.get(mr.model.get("name", "?"), {}))
    return blocks


def figure_filename(model_name: str, figure: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model_name)
    return f"{safe}-{figure}.png"
