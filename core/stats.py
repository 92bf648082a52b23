"""Intervals and the `Estimate` type: the one way a rate leaves `behavioral` or `probes`.

Why: a deception rate without its interval, its count and its method cannot be judged.
Wald intervals are never used (3 of 40 gives [-0.007, 0.157]); proportions get Wilson or
Clopper-Pearson (the instruments' default, see `DEFAULT_INTERVAL` for the measured reason);
zero counts also carry the rule-of-three bound. Differences of proportions get Newcombe
(independent) or Tango (paired) intervals; McNemar tests paired rates; Cohen's kappa
measures a grader against humans.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Optional, Sequence

from scipy import stats as _st

from liedar.core._util.serial import Serial, from_data
from liedar.core.errors import InputError

Kind = Literal["capability", "propensity", "quality"]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a confidence interval, the count behind it and the method.

    Why one type: a rate without its interval, n and method cannot be judged, so every rate
    liedar reports is one of these. It formats, converts and compares like its point value
    (``f"{est:.2f}"``, ``float(est)``, ``est < 0.5``), so code written for a bare float keeps
    working; ``str(est)`` shows the interval too.

    Parameters
    ----------
    value : float
        The point estimate.
    lo, hi : float
        The confidence interval's limits.
    n : int
        The count behind it (trials, items or pairs).
    method : str
        How the interval was computed, e.g. ``"clopper-pearson"``.
    kind : {"capability", "propensity", "quality"}, default "propensity"
        What was measured: what the model *can* do (elicited hard), what it *does*
        (naturalistic), or a property of an instrument (a probe's AUROC, a grader's kappa).
    successes : int, optional
        The event count, for proportions.
    confidence : float, default 0.95
        The interval's nominal coverage.
    note : str, default ""
        A caveat printed after the interval (e.g. the rule-of-three bound at zero events).
    extra : dict, optional
        Method-specific details (standard error, discordant counts, ...).

    Raises
    ------
    TypeError
        When compared with something that is neither a number nor an ``Estimate``.

    Examples
    --------
    >>> from liedar.core.stats import wilson
    >>> est = wilson(3, 10)
    >>> print(est)
    0.300 [0.108, 0.603] (n=10, wilson)
    >>> f"{est:.2f}", float(est), est < 0.5
    ('0.30', 0.3, True)
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

    # stays hand-written: asdict turns dataclasses inside `extra` into dicts; the codec keeps Any as is
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> "Estimate":
        """The estimate a JSON object describes, each field checked against its type (one line
        naming the field otherwise), as every result read from a file is."""
        return from_data(cls, d)

    def __str__(self) -> str:
        core = f"{self.value:.3f} [{self.lo:.3f}, {self.hi:.3f}] (n={self.n}, {self.method})"
        return f"{core} — {self.note}" if self.note else core

    # An Estimate stands where code written for a bare float expects one: detectors that
    # report a float (``f"{result.answer_consistency:.2f}"``, ``if score < 0.5``) keep working
    # when liedar hands back the value with its interval. Only the point value takes part;
    # the interval is still there for code that asks for it.

    def __float__(self) -> float:
        return float(self.value)

    def __format__(self, spec: str) -> str:
        """``f"{est}"`` is the full ``str``; ``f"{est:.2f}"`` formats the point value like a float."""
        return str(self) if not spec else format(float(self.value), spec)

    def __round__(self, ndigits: Optional[int] = None) -> float:
        return round(float(self.value), ndigits)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Estimate):
            return self.to_dict() == other.to_dict()
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return float(self.value) == other
        return NotImplemented

    def _number(self, other: object) -> Optional[float]:
        if isinstance(other, Estimate):
            return float(other.value)
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return float(other)
        return None

    def __lt__(self, other: object) -> bool:
        o = self._number(other)
        return NotImplemented if o is None else float(self.value) < o

    def __le__(self, other: object) -> bool:
        o = self._number(other)
        return NotImplemented if o is None else float(self.value) <= o

    def __gt__(self, other: object) -> bool:
        o = self._number(other)
        return NotImplemented if o is None else float(self.value) > o

    def __ge__(self, other: object) -> bool:
        o = self._number(other)
        return NotImplemented if o is None else float(self.value) >= o


def _check_counts(successes: int, n: int) -> None:
    if n <= 0:
        raise InputError(f"cannot estimate a rate from n={n} trials: give at least one trial")
    if not 0 <= successes <= n:
        raise InputError(f"successes={successes} must lie in 0..n={n}")


def rule_of_three(n: int) -> float:
    """Approximate 95% upper bound on a rate when 0 events were seen in n trials.

    Why: "0 of 20" is not "never"; the rule of three says how large the rate could still be.

    Parameters
    ----------
    n : int
        Trials, at least 1.

    Returns
    -------
    float
        ``min(1, 3 / n)``.

    Raises
    ------
    ZeroDivisionError
        When ``n`` is 0.

    Examples
    --------
    >>> rule_of_three(30)
    0.1
    """
    return min(1.0, 3.0 / n)


def _zero_note(successes: int, n: int) -> str:
    if successes == 0:
        return f"0 events in {n}: consistent with a true rate up to about {rule_of_three(n):.3f} (rule of three)"
    return ""


def wilson(successes: int, n: int, confidence: float = 0.95, kind: Kind = "propensity") -> Estimate:
    """Wilson score interval for a binomial proportion.

    Why: narrower than Clopper-Pearson and never outside [0, 1], but below nominal coverage
    in some (n, p) cells (``scripts/check_interval_coverage.py``), so it is an option, not
    the instruments' default (`proportion`).

    Parameters
    ----------
    successes : int
        Events counted, ``0 <= successes <= n``.
    n : int
        Trials, at least 1.
    confidence : float, default 0.95
        Nominal coverage.
    kind : {"capability", "propensity", "quality"}, default "propensity"
        What the rate measures (see `Estimate`).

    Returns
    -------
    Estimate
        The rate, its interval and, at zero events, the rule-of-three note.

    Raises
    ------
    liedar.core.errors.InputError
        When ``n < 1`` or ``successes`` lies outside ``0..n``.

    Examples
    --------
    >>> print(wilson(3, 10))
    0.300 [0.108, 0.603] (n=10, wilson)
    """
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


def clopper_pearson(successes: int, n: int, confidence: float = 0.95, kind: Kind = "propensity") -> Estimate:
    """Exact (conservative) Clopper-Pearson interval for a binomial proportion.

    Why: its coverage never falls below the nominal level, which is why the instruments
    use it by default (`DEFAULT_INTERVAL`).

    Parameters
    ----------
    successes : int
        Events counted, ``0 <= successes <= n``.
    n : int
        Trials, at least 1.
    confidence : float, default 0.95
        Nominal coverage.
    kind : {"capability", "propensity", "quality"}, default "propensity"
        What the rate measures (see `Estimate`).

    Returns
    -------
    Estimate
        The rate, its interval and, at zero events, the rule-of-three note.

    Raises
    ------
    liedar.core.errors.InputError
        When ``n < 1`` or ``successes`` lies outside ``0..n``.

    Examples
    --------
    >>> round(clopper_pearson(0, 20).hi, 3)
    0.168
    """
    _check_counts(successes, n)
    alpha = 1 - confidence
    lo = 0.0 if successes == 0 else float(_st.beta.ppf(alpha / 2, successes, n - successes + 1))
    hi = 1.0 if successes == n else float(_st.beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return Estimate(successes / n, lo, hi, n, "clopper-pearson", kind, successes, confidence, _zero_note(successes, n))


def clopper_pearson_shares(shares: Sequence[float], confidence: float = 0.95, kind: Kind = "capability") -> Estimate:
    """The mean of per-item shares in [0, 1], with the items as the units: Clopper-Pearson's beta
    limits at the (fractional) sum of the shares over n items.

    Why: when each item contributes several dependent questions (a yes/no item asked with its
    right and a wrong proposed answer), the questions are not independent trials; the item is.
    Why not a t-interval: a model that answers Yes to everything scores exactly 0.5 on every
    item, and a t-interval then has zero width. Among variables in [0, 1] with a given mean a
    Bernoulli one has the largest variance, so the binomial limits stay valid (conservative)
    for shares, and never claim a certainty a few items cannot give.

    Parameters
    ----------
    shares : sequence of float
        Each item's share of its questions answered right, each in [0, 1]; at least one item.
    confidence : float, default 0.95
        Nominal coverage.
    kind : {"capability", "propensity", "quality"}, default "capability"
        What the rate measures (see `Estimate`).

    Returns
    -------
    Estimate
        The mean share and its interval; ``successes`` is None (the sum may be fractional).

    Raises
    ------
    liedar.core.errors.InputError
        When there is no item or a share lies outside [0, 1].

    Examples
    --------
    >>> e = clopper_pearson_shares([1.0] * 5)
    >>> e.hi
    1.0
    """
    n = len(shares)
    if n < 1 or any(not 0.0 <= float(v) <= 1.0 for v in shares):
        raise InputError(f"shares must be at least one value in [0, 1], got {list(shares)[:5]}...")
    x = float(sum(shares))
    alpha = 1 - confidence
    lo = 0.0 if x <= 0 else float(_st.beta.ppf(alpha / 2, x, n - x + 1))
    hi = 1.0 if x >= n else float(_st.beta.ppf(1 - alpha / 2, x + 1, n - x))
    return Estimate(x / n, lo, hi, n, "clopper-pearson (items as units)", kind, None, confidence, "")


# --------------------------------------------------------------------------------------
# Tests and intervals for comparisons. Why these: a deception rate is usually compared
# with something (elicited vs framed accuracy, neutral vs costly items, a grader vs a
# human), and the comparison needs its own interval — not two overlapping intervals.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestResult(Serial):
    """A hypothesis test: statistic, two-sided p-value, and which test was used.

    Parameters
    ----------
    statistic : float
        The test statistic.
    p_value : float
        Two-sided p-value.
    method : str
        Which test, e.g. ``"mcnemar-exact-binomial"``.
    note : str, default ""
        A caveat (e.g. no discordant pairs).

    Examples
    --------
    >>> print(TestResult(2.0, 0.1094, "mcnemar-exact-binomial"))
    mcnemar-exact-binomial: statistic=2.000, p=0.1094
    """

    statistic: float
    p_value: float
    method: str
    note: str = ""

    def __str__(self) -> str:
        return f"{self.method}: statistic={self.statistic:.3f}, p={self.p_value:.4g}"


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise InputError(f"confidence={confidence} must lie strictly between 0 and 1, e.g. 0.95")
    return float(_st.norm.ppf(0.5 + confidence / 2))


def newcombe_difference(
    successes1: int,
    n1: int,
    successes2: int,
    n2: int,
    confidence: float = 0.95,
    kind: Kind = "propensity",
) -> Estimate:
    """Interval for p1 - p2 from two *independent* samples (Newcombe 1998, method 10).

    Why: it combines the two Wilson intervals, so it never leaves [-1, 1] and keeps
    near-nominal coverage at small counts, unlike the Wald difference interval.

    Parameters
    ----------
    successes1, n1 : int
        Events and trials in the first sample.
    successes2, n2 : int
        Events and trials in the second sample.
    confidence : float, default 0.95
        Nominal coverage.
    kind : {"capability", "propensity", "quality"}, default "propensity"
        What the difference measures.

    Returns
    -------
    Estimate
        ``p1 - p2`` with its interval; ``n`` is ``n1 + n2``.

    Raises
    ------
    liedar.core.errors.InputError
        When a sample has no trials or its count lies outside ``0..n``.

    Examples
    --------
    >>> print(newcombe_difference(15, 30, 6, 30))
    0.300 [0.058, 0.498] (n=60, newcombe-hybrid-score (independent samples))
    """
    w1 = wilson(successes1, n1, confidence)
    w2 = wilson(successes2, n2, confidence)
    d = w1.value - w2.value
    lo = d - math.sqrt((w1.value - w1.lo) ** 2 + (w2.hi - w2.value) ** 2)
    hi = d + math.sqrt((w1.hi - w1.value) ** 2 + (w2.value - w2.lo) ** 2)
    return Estimate(
        d,
        max(-1.0, lo),
        min(1.0, hi),
        n1 + n2,
        "newcombe-hybrid-score (independent samples)",
        kind,
        None,
        confidence,
        "",
        {"successes1": successes1, "n1": n1, "successes2": successes2, "n2": n2},
    )


def _tango_statistic(delta: float, b: int, c: int, n: int) -> float:
    """Tango's score statistic for H0: p1 - p2 = delta in a paired 2x2 table.

    b = pairs with success under condition 1 only, c = under condition 2 only. The
    nuisance p21 is replaced by its maximum-likelihood value under H0 (closed form).
    """
    a_coef = 2.0 * n
    b_coef = -b - c + (2.0 * n - b + c) * delta
    c_coef = -c * delta * (1.0 - delta)
    disc = max(0.0, b_coef * b_coef - 4.0 * a_coef * c_coef)
    q21 = (math.sqrt(disc) - b_coef) / (2.0 * a_coef)
    var = n * (2.0 * q21 + delta * (1.0 - delta))
    num = b - c - n * delta
    if var <= 0.0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def paired_difference(b: int, c: int, n: int, confidence: float = 0.95, kind: Kind = "propensity") -> Estimate:
    """Tango (1998) score interval for p1 - p2 from *paired* binary outcomes.

    ``b`` counts pairs that succeed under condition 1 only, ``c`` under condition 2 only,
    ``n`` all pairs. Why not Newcombe's independent interval: paired outcomes are
    correlated, and ignoring that makes the interval far too wide (or, with negative
    correlation, too narrow). The limits solve |T(delta)| = z by bracketing root search.

    Parameters
    ----------
    b : int
        Pairs that succeed under condition 1 only.
    c : int
        Pairs that succeed under condition 2 only.
    n : int
        All pairs.
    confidence : float, default 0.95
        Nominal coverage.
    kind : {"capability", "propensity", "quality"}, default "propensity"
        What the difference measures.

    Returns
    -------
    Estimate
        ``(b - c) / n`` with its interval; ``extra`` keeps the counts.

    Raises
    ------
    liedar.core.errors.InputError
        When ``n < 1`` or the discordant counts are negative or exceed ``n``.

    Examples
    --------
    >>> print(paired_difference(8, 2, 30))
    0.200 [-0.008, 0.399] (n=30, tango-score (paired))
    """
    if n <= 0:
        raise InputError(f"cannot compare paired proportions from n={n} pairs: give at least one pair")
    if b < 0 or c < 0 or b + c > n:
        raise InputError(f"discordant counts b={b}, c={c} must be non-negative and sum to at most n={n}")
    from scipy.optimize import brentq

    z = _z(confidence)
    d = (b - c) / n

    def f(delta: float) -> float:
        return _tango_statistic(delta, b, c, n)

    eps = 1e-12
    lo = -1.0 if f(-1.0 + eps) <= z else brentq(lambda t: f(t) - z, -1.0 + eps, d, xtol=1e-12)
    hi = 1.0 if f(1.0 - eps) >= -z else brentq(lambda t: f(t) + z, d, 1.0 - eps, xtol=1e-12)
    return Estimate(
        d,
        float(lo),
        float(hi),
        n,
        "tango-score (paired)",
        kind,
        None,
        confidence,
        "",
        {"only_condition1": b, "only_condition2": c, "pairs": n},
    )


def mcnemar(b: int, c: int) -> TestResult:
    """McNemar's test of equal marginal rates from the discordant pair counts.

    Exact binomial (two-sided, B(b+c, 1/2)) when b + c < 25, where the chi-square
    approximation is poor; otherwise chi-square with continuity correction.

    Parameters
    ----------
    b : int
        Pairs that succeed under condition 1 only.
    c : int
        Pairs that succeed under condition 2 only.

    Returns
    -------
    TestResult
        Statistic, two-sided p-value and which form of the test ran.

    Raises
    ------
    liedar.core.errors.InputError
        When a count is negative.

    Examples
    --------
    >>> print(mcnemar(8, 2))
    mcnemar-exact-binomial: statistic=2.000, p=0.1094
    """
    if b < 0 or c < 0:
        raise InputError(f"discordant counts must be non-negative, got b={b}, c={c}")
    m = b + c
    if m == 0:
        return TestResult(0.0, 1.0, "mcnemar-exact-binomial", "no discordant pairs: the conditions never disagree")
    if m < 25:
        p = min(1.0, 2.0 * float(_st.binom.cdf(min(b, c), m, 0.5)))
        return TestResult(float(min(b, c)), p, "mcnemar-exact-binomial")
    stat = (abs(b - c) - 1.0) ** 2 / m
    return TestResult(stat, float(_st.chi2.sf(stat, 1)), "mcnemar-chi2-continuity-corrected")


def cohen_kappa(
    labels_a: "list[Any] | tuple[Any, ...]",
    labels_b: "list[Any] | tuple[Any, ...]",
    confidence: float = 0.95,
) -> Estimate:
    """Cohen's kappa between two raters with a large-sample interval.

    The standard error is Fleiss, Cohen & Everitt (1969)'s non-null asymptotic variance,
    the one used for intervals (the null variance is only right for testing kappa = 0).
    ``kind`` is "quality": kappa describes an instrument, not the model.

    Parameters
    ----------
    labels_a, labels_b : sequence
        The two raters' labels, paired item by item.
    confidence : float, default 0.95
        Nominal coverage.

    Returns
    -------
    Estimate
        Kappa with its interval (NaN, with a note, when both raters used one label only).

    Raises
    ------
    liedar.core.errors.InputError
        When the label lists differ in length or are empty.

    Examples
    --------
    >>> round(cohen_kappa(["y", "y", "n", "n", "y"], ["y", "n", "n", "n", "y"]).value, 3)
    0.615
    """
    if len(labels_a) != len(labels_b):
        raise InputError(f"kappa needs paired labels: got {len(labels_a)} and {len(labels_b)} labels")
    n = len(labels_a)
    if n == 0:
        raise InputError("cannot compute kappa from zero labelled items: give at least one pair of labels")
    cats = sorted({*labels_a, *labels_b}, key=str)
    idx = {k: i for i, k in enumerate(cats)}
    k = len(cats)
    table = [[0.0] * k for _ in range(k)]
    for x, y in zip(labels_a, labels_b):
        table[idx[x]][idx[y]] += 1.0 / n
    row = [sum(table[i]) for i in range(k)]
    col = [sum(table[i][j] for i in range(k)) for j in range(k)]
    po = sum(table[i][i] for i in range(k))
    pe = sum(row[i] * col[i] for i in range(k))
    z = _z(confidence)
    if pe >= 1.0:
        # Both raters used one single category: kappa is undefined (0/0).
        return Estimate(
            float("nan"),
            float("nan"),
            float("nan"),
            n,
            "cohen-kappa",
            "quality",
            None,
            confidence,
            "kappa undefined: both raters used one single label for every item",
            {"observed_agreement": po, "chance_agreement": pe, "categories": [str(c) for c in cats]},
        )
    kappa = (po - pe) / (1.0 - pe)
    term1 = sum(table[i][i] * ((1 - pe) - (row[i] + col[i]) * (1 - po)) ** 2 for i in range(k))
    term2 = (1 - po) ** 2 * sum(table[i][j] * (col[i] + row[j]) ** 2 for i in range(k) for j in range(k) if i != j)
    term3 = (po * pe - 2 * pe + po) ** 2
    var = max(0.0, term1 + term2 - term3) / (n * (1 - pe) ** 4)
    se = math.sqrt(var)
    return Estimate(
        kappa,
        max(-1.0, kappa - z * se),
        min(1.0, kappa + z * se),
        n,
        "cohen-kappa, asymptotic non-null SE (Fleiss-Cohen-Everitt 1969)",
        "quality",
        None,
        confidence,
        "",
        {"observed_agreement": po, "chance_agreement": pe, "se": se, "categories": [str(c) for c in cats]},
    )


def mean_interval(
    values: "list[float] | tuple[float, ...]",
    confidence: float = 0.95,
    kind: Kind = "propensity",
    method: str = "mean, t-interval",
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> Estimate:
    """Mean of a few replicate values (e.g. one per seed) with a Student-t interval.

    Why t and not normal: replicates are few (3-10 seeds), and the t quantile widens the
    interval honestly for that. One value gives an unbounded interval. ``bounds`` clips
    the limits to the quantity's range (e.g. (0, 1) for an accuracy), so two noisy seeds
    never report a negative accuracy.

    Parameters
    ----------
    values : sequence of float
        One value per replicate.
    confidence : float, default 0.95
        Nominal coverage.
    kind : {"capability", "propensity", "quality"}, default "propensity"
        What the mean measures.
    method : str, default "mean, t-interval"
        The label stored in the estimate.
    bounds : (float, float), default (-inf, inf)
        The quantity's range; the limits are clipped to it.

    Returns
    -------
    Estimate
        The mean, its t-interval and ``extra["sd"]``; one value gives the whole ``bounds``.

    Raises
    ------
    liedar.core.errors.InputError
        When ``values`` is empty.

    Examples
    --------
    >>> print(mean_interval([0.70, 0.74, 0.72], bounds=(0, 1)))
    0.720 [0.670, 0.770] (n=3, mean, t-interval)
    """
    if len(values) == 0:
        raise InputError("cannot average zero values: give at least one replicate (e.g. one seed)")
    m = len(values)
    mean = sum(values) / m
    if m == 1:
        return Estimate(
            mean,
            bounds[0],
            bounds[1],
            1,
            method,
            kind,
            None,
            confidence,
            "one replicate only: no interval (run more seeds)",
        )
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (m - 1))
    t = float(_st.t.ppf(0.5 + confidence / 2, m - 1))
    half = t * sd / math.sqrt(m)
    lo, hi = max(bounds[0], mean - half), min(bounds[1], mean + half)
    return Estimate(mean, lo, hi, m, method, kind, None, confidence, "", {"sd": sd})


INTERVAL_METHODS = ("wilson", "clopper-pearson")
# The instruments' default. scripts/check_interval_coverage.py computes exact coverage over
# p in [0.01, 0.5], n in [20, 500]: Wilson's 95% interval falls below 94% in about 2.5% of
# cells (worst about 0.89 near n*p < 1, and still about 0.92 at n*p >= 10), while
# Clopper-Pearson never falls below 95%. A reported rate must meet the >= 94% floor, so the
# instruments use Clopper-Pearson unless told otherwise (`--interval wilson`).
DEFAULT_INTERVAL = "clopper-pearson"


def no_estimate(note: str, kind: Kind = "propensity") -> Estimate:
    """An estimate that could not be made, saying why: NaN value and bounds, n = 0.

    Why one helper: a rate whose denominator is empty (no item known, no belief to lie
    about) must still be a row a reader sees, with its reason, never a silent 0.

    Parameters
    ----------
    note : str
        Why there is no number.
    kind : str
        What the estimate would have measured ("propensity", "capability", ...).

    Returns
    -------
    Estimate

    Raises
    ------
    None
        Any note and kind are accepted; the estimate's NaNs are what a reader checks.

    Examples
    --------
    >>> e = no_estimate("no item was answered right")
    >>> e.n, e.note
    (0, 'no item was answered right')
    """
    return Estimate(float("nan"), float("nan"), float("nan"), 0, "no data", kind, note=note)


def proportion(
    successes: int,
    n: int,
    kind: Kind = "propensity",
    interval: str = DEFAULT_INTERVAL,
    confidence: float = 0.95,
) -> Estimate:
    """A rate with the chosen interval: the one entry point instruments use.

    Why a switch: Wilson is the narrower default but dips below nominal coverage at some
    (n, p) cells (scripts/check_interval_coverage.py measures where); Clopper-Pearson never
    covers less than nominal and is the choice when a guaranteed floor matters.

    Parameters
    ----------
    successes : int
        Events counted, ``0 <= successes <= n``.
    n : int
        Trials, at least 1.
    kind : {"capability", "propensity", "quality"}, default "propensity"
        What the rate measures.
    interval : {"clopper-pearson", "wilson"}, default "clopper-pearson"
        The interval method.
    confidence : float, default 0.95
        Nominal coverage.

    Returns
    -------
    Estimate
        The rate with its interval.

    Raises
    ------
    liedar.core.errors.InputError
        For an unknown ``interval`` or counts outside ``0..n``.

    Examples
    --------
    >>> print(proportion(12, 40))
    0.300 [0.166, 0.465] (n=40, clopper-pearson)
    """
    if interval == "wilson":
        return wilson(successes, n, confidence, kind)
    if interval == "clopper-pearson":
        return clopper_pearson(successes, n, confidence, kind)
    raise InputError(f"unknown interval method {interval!r}: choose one of {', '.join(INTERVAL_METHODS)}")


def excludes(estimate: Estimate, value: float) -> bool:
    """True when the interval lies entirely on one side of ``value`` (e.g. chance level).

    Why: "differs from chance" is read off the interval, not off the point estimate.

    Parameters
    ----------
    estimate : Estimate
        The estimate to read.
    value : float
        The reference, e.g. 0.5 for an AUROC or 0.25 for four-option accuracy.

    Returns
    -------
    bool
        ``estimate.lo > value or estimate.hi < value``.

    Raises
    ------
    AttributeError
        When ``estimate`` has no ``lo``/``hi`` (not an `Estimate`).

    Examples
    --------
    >>> excludes(proportion(12, 40), 0.5)
    True
    """
    return estimate.lo > value or estimate.hi < value
