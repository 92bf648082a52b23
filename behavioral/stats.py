"""Intervals and the `Estimate` type: the one way a rate leaves `behavioral` or `probes`.

Why: a deception rate without its interval, its count and its method cannot be judged.
Wald intervals are never used (3 of 40 gives [-0.007, 0.157]); proportions get Wilson
(default) or Clopper-Pearson; zero counts also carry the rule-of-three bound.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Optional

from scipy import stats as _st

from liedar.errors import InputError

Kind = Literal["capability", "propensity", "quality"]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a confidence interval, the count behind it and the method.

    ``kind`` says what was measured: ``capability`` (elicited hard: what the model *can*
    do), ``propensity`` (naturalistic: what it *does*), or ``quality`` (a property of an
    instrument, e.g. a probe's AUROC or a grader's kappa).
    """

    value: float
    lo: float
    hi: float
    n: int
    method: str
    kind: Kind = "propensity"
    successes: Optional[int] = None
    confidence: float = 0.95
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Estimate":
        return cls(**d)

    def __str__(self) -> str:
        core = f"{self.value:.3f} [{self.lo:.3f}, {self.hi:.3f}] (n={self.n}, {self.method})"
        return f"{core} — {self.note}" if self.note else core


def _check_counts(successes: int, n: int) -> None:
    if n <= 0:
        raise InputError(f"cannot estimate a rate from n={n} trials: give at least one trial")
    if not 0 <= successes <= n:
        raise InputError(f"successes={successes} must lie in 0..n={n}")


def rule_of_three(n: int) -> float:
    """Approximate 95% upper bound on a rate when 0 events were seen in n trials."""
    return min(1.0, 3.0 / n)


def _zero_note(successes: int, n: int) -> str:
    if successes == 0:
        return (
            f"0 events in {n}: consistent with a true rate up to about {rule_of_three(n):.3f}"
            " (rule of three)"
        )
    return ""


def wilson(successes: int, n: int, confidence: float = 0.95, kind: Kind = "propensity") -> Estimate:
    """Wilson score interval for a binomial proportion."""
    _check_counts(successes, n)
    z = _st.norm.ppf(0.5 + confidence / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    if successes == 0:
        lo = 0.0
    if successes == n:
        hi = 1.0
    return Estimate(p, lo, hi, n, "wilson", kind, successes, confidence, _zero_note(successes, n))


def clopper_pearson(
    successes: int, n: int, confidence: float = 0.95, kind: Kind = "propensity"
) -> Estimate:
    """Exact (conservative) Clopper-Pearson interval for a binomial proportion."""
    _check_counts(successes, n)
    alpha = 1 - confidence
    lo = 0.0 if successes == 0 else float(_st.beta.ppf(alpha / 2, successes, n - successes + 1))
    hi = 1.0 if successes == n else float(_st.beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return Estimate(
        successes / n, lo, hi, n, "clopper-pearson", kind, successes, confidence, _zero_note(successes, n)
    )
