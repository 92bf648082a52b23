"""Report rows of the white-box instruments: probe quality (transfer matrix, layer sweep,
AUROC/recall metrics) and the inline monitor's flag rate and calibrated false-positive rate.

Why here: the probe evaluation already speaks the report's types (`liedar.core.results`
TransferMatrix and LayerSweep), so these rows need no conversion; the report only renders.
"""

from __future__ import annotations

from typing import Optional, Sequence

from liedar.core.results import Caveat, LayerSweep, Section, TransferMatrix
from liedar.core.rows import add_measure, add_quality_metric
from liedar.core.stats import DEFAULT_INTERVAL, Estimate, proportion


def probe_section(
    transfer: Optional[TransferMatrix] = None,
    sweep: Optional[LayerSweep] = None,
    metrics: Sequence[tuple[str, str, Estimate]] = (),
) -> Section:
    """The transfer matrix, the layer sweep and (id, label, Estimate) quality metrics."""
    s = Section(transfer=transfer, layer_sweep=sweep)
    for mid, label, est in metrics:
        add_quality_metric(s, mid, label, est, "probe")
    return s


def monitor_section(
    flags: Sequence[bool], achieved_fpr: Estimate, threshold: float, layer: int, note: str = ""
) -> Section:
    """Monitored generations -> probe-flagged rate, plus the calibration's held-out FPR
    (``note``: the calibration's own caveat, e.g. too few controls for the target FPR)."""
    s = Section()
    add_measure(
        s,
        id="monitor_flag_rate",
        label="Probe-flagged rate on monitored generations",
        instrument="monitor",
        scale="proportion",
        estimate=proportion(sum(bool(f) for f in flags), len(flags), "propensity", DEFAULT_INTERVAL),
        higher_is_deceptive=True,
        details={"threshold": threshold, "layer": layer},
    )
    add_quality_metric(
        s,
        "monitor_fpr",
        "Monitor FPR on held-out honest controls",
        achieved_fpr,
        "monitor",
        "no held-out honest controls were scored",
        (Caveat("calibration_note", note),) if note else (),
        {"threshold": threshold},
    )
    return s
