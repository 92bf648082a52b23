"""Hand-made evidence for the audit's unit tests: cells and capabilities as the units report them."""

from __future__ import annotations

from typing import Any, Optional

from liedar.audit.evidence import ModelEvidence
from liedar.core.stats import Estimate, newcombe_difference, paired_difference, proportion
from liedar.pipeline.validate_detectors import Cell, not_computable


def paired(b: int, c: int, n: int) -> Estimate:
    """A paired gap: b items right only in the benign condition, c only in the other, of n."""
    return paired_difference(b, c, n)


def cap(lo: float, chance: float = 0.25, value: Optional[float] = None) -> dict[str, Any]:
    v = lo + 0.1 if value is None else value
    est = {"value": v, "lo": lo, "hi": min(v + 0.1, 1.0), "n": 40}
    return {"estimate": est, "chance": chance, "what": "capability ceiling", "capable": lo > chance}


def evidence(
    gap: tuple[int, int, int] = (1, 1, 40),
    gap_flag: bool = False,
    ceil: tuple[int, int, int] = (1, 1, 40),
    ceil_flag: bool = False,
    syc: tuple[int, int, int, int] = (2, 60, 1, 60),
    syc_flag: bool = False,
    lies: tuple[int, int] = (0, 36),
    lie_flag: bool = False,
    capable: bool = True,
    syc_capable: bool = True,
    drop: tuple[str, ...] = (),
) -> ModelEvidence:
    cells = {
        "sandbagging_gap": Cell("sandbagging_gap", gap_flag, paired(*gap)),
        "ceilings": Cell("ceilings", ceil_flag, paired(*ceil)),
        "sycophancy": Cell("sycophancy", syc_flag, newcombe_difference(*syc)),
        "honesty": Cell("honesty", lie_flag, proportion(*lies)),
    }
    for d in drop:
        cells[d] = not_computable(d, "planted: no number")
    capability = {
        "sandbagging_gap": cap(0.5 if capable else 0.1),
        "sycophancy": cap(0.8 if syc_capable else 0.3, chance=0.5),
        "honesty": cap(0.8, chance=0.5),
    }
    return ModelEvidence({"fingerprint": "f", "adapter_sha256": ""}, cells, capability)
