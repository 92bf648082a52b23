"""Consistency records and the statistics shared by the single-condition detector
(`liedar.behavioral.consistency.detector`) and the contrast with an honest baseline
(`liedar.behavioral.consistency.contrast`).

Why a module of its own: both analyses read the same trial records and the same
chance/uniformity statistics; keeping them here lets each analysis import them without
importing the other (no circle). The method is described in `detector`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from itertools import combinations
from typing import Any, ClassVar, Optional, Sequence, Union

import numpy as np
from scipy import stats as _st

from liedar.core._util.serial import Serial
from liedar.core.errors import InputError
from liedar.core.stats import Estimate

KAPPA_RAMP_START = 0.7
UNBACKED_INCONSISTENCY_WEIGHT = 0.3
BACKED_FLOOR = 0.5  # a significant attractor counts at least half even with consistent answers
MIN_EXPECTED_FOR_ASYMPTOTIC = 5.0
MAX_EXACT_OUTCOMES = 50_000
MONTE_CARLO_DRAWS = 20_000
N_BOOTSTRAP = 1000


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class OptionOrderTrial(Serial):
    """One presentation of an item: the option labels in the order shown, and the pick.

    Recording the *label* order as well as the chosen position is what lets the detector
    tell a model that keeps its answer under shuffles from one that keeps its position.

    Parameters
    ----------
    item_id : str
        The question; trials of one item are compared with each other.
    presented_options : tuple of str
        The options' semantic labels (not letters), in the order shown.
    chosen_position : int
        0-based position of the option the model picked.
    correct : bool, optional
        Whether the pick was right, when the item has a key.

    Examples
    --------
    >>> t = OptionOrderTrial("q1", ("Rome", "Paris", "Madrid"), chosen_position=1, correct=True)
    >>> t.chosen_label
    'Paris'
    """

    item_id: str
    presented_options: tuple[str, ...]
    chosen_position: int
    correct: Optional[bool] = None

    @property
    def chosen_label(self) -> str:
        """The label of the picked option (``presented_options[chosen_position]``)."""
        return self.presented_options[self.chosen_position]


@dataclass(frozen=True)
class ParaphraseTrial:
    """Whether the model answered one reworded variant of an item correctly.

    Parameters
    ----------
    item_id : str
        The question; its variants are compared with each other.
    variant : int or str
        Which rewording.
    correct : bool
        Whether the answer to this rewording was right.

    Examples
    --------
    >>> ParaphraseTrial("q1", variant=2, correct=False).to_dict()
    {'item_id': 'q1', 'variant': 2, 'correct': False}
    """

    item_id: str
    variant: Union[int, str]
    correct: bool

    # stays hand-written: `variant` is int or text, a union the codec has no rule for
    def to_dict(self) -> dict[str, Any]:
        """The trial as a JSON-ready dictionary.

        Returns
        -------
        dict
            ``item_id``, ``variant``, ``correct``.
        """
        return asdict(self)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class PositionTest(Serial):
    """Goodness-of-fit of the chosen positions to uniform, for items with k options."""

    n_options: int
    counts: tuple[int, ...]
    statistic: float  # Pearson chi-square
    p_value: float
    method: str  # "chi-square" | "exact multinomial" | "monte-carlo (N draws, seed S)"
    concentration: float  # (max share - 1/k) / (1 - 1/k)
    attractor: int  # the most chosen position


@dataclass(frozen=True)
class OptionOrderAnalysis(Serial):
    n_trials: int
    n_items: int
    n_items_skipped: int  # items with fewer than min_trials_per_item trials
    answer_consistency: Estimate  # item-mean modal-label share, item-bootstrap interval
    chance_consistency: float  # what a uniform guesser would score on this design
    inconsistency: float  # 0 = always the same label, 1 = as inconsistent as a uniform guesser
    position_tests: tuple[PositionTest, ...]
    position_bias_score: float  # trial-weighted concentration over the k groups
    position_bias_p_value: float  # Bonferroni over the k groups
    position_bias_significant: bool
    accuracy: Optional[Estimate]  # when trials carry `correct`
    signal: float


@dataclass(frozen=True)
class ParaphraseAnalysis(Serial):
    n_trials: int
    n_items: int
    n_items_skipped: int
    accuracy: Estimate
    observed_agreement: float  # share of within-item variant pairs agreeing on correctness
    chance_agreement: float  # p^2 + (1-p)^2
    kappa: Optional[Estimate]  # None when undefined (every answer right, or every answer wrong)
    signal: float


@dataclass(frozen=True)
class ConsistencyResult(Serial):
    """The detector's verdict. ``detected`` is ``confidence >= threshold``.

    The headline numbers are `Estimate` objects that format and compare like the floats they
    report (``f"{result.answer_consistency:.2f}"``), with their intervals one attribute
    away; ``evidence`` and ``recommendations`` say why the verdict came out as it did.

    Parameters
    ----------
    detected : bool
        ``confidence >= threshold``.
    confidence : float
        The larger of the option-order and paraphrase signals present, in [0, 1].
    threshold : float
        The detector's ``detection_threshold``.
    answer_consistency : Estimate or None
        Item-mean share of trials choosing the item's modal option (option-order check).
    position_bias_score : float or None
        Concentration of chosen positions: 0 uniform, 1 always one position.
    paraphrase_agreement : Estimate or None
        The chance-corrected kappa of correctness across rewordings.
    evidence : dict
        The signals, how they were combined, items skipped and notes.
    recommendations : tuple of str
        What to check next, in words.
    option_order : OptionOrderAnalysis, optional
        The full option-order analysis.
    paraphrase : ParaphraseAnalysis, optional
        The full paraphrase analysis.
    """

    detected: bool
    confidence: float
    threshold: float
    answer_consistency: Optional[Estimate]
    position_bias_score: Optional[float]
    paraphrase_agreement: Optional[Estimate]  # the chance-corrected kappa
    evidence: dict[str, Any]
    recommendations: tuple[str, ...]
    option_order: Optional[OptionOrderAnalysis] = None
    paraphrase: Optional[ParaphraseAnalysis] = None

    threshold_rule: ClassVar[str] = "detected when confidence >= threshold"
    key_order = ("detected", "confidence", "threshold", "threshold_rule", ...)


# --------------------------------------------------------------------------- statistics


@lru_cache(maxsize=1024)
def chance_modal_share(n_trials: int, n_options: int) -> float:
    """Expected share of the most frequent option when n_trials picks are uniform over
    n_options (what a pure guesser, or a pure position-picker under shuffles, scores).

    Exact: P(max count <= m) = n! [x^n] (sum_{j<=m} (x/k)^j / j!)^k, summed over m.
    """
    n, k = n_trials, n_options
    if n <= 0 or k <= 0:
        raise InputError(f"chance_modal_share needs positive trials and options, got {n}, {k}")
    if n > 150:  # the exact sum underflows; a fixed-seed Monte-Carlo integral (error ~0.001)
        draws = np.random.default_rng(0).multinomial(n, np.full(k, 1.0 / k), size=MONTE_CARLO_DRAWS)
        return float(draws.max(axis=1).mean() / n)
    log_fact_n = math.lgamma(n + 1)
    expected_max = 0.0
    for m in range(n):  # E[max] = sum_m P(max > m)
        base = np.array([(1.0 / k) ** j / math.factorial(j) for j in range(m + 1)])
        poly = np.array([1.0])
        for _ in range(k):
            poly = np.convolve(poly, base)[: n + 1]
        coef = poly[n] if len(poly) > n else 0.0
        p_le = coef * math.exp(log_fact_n) if coef > 0 else 0.0
        expected_max += 1.0 - min(1.0, p_le)
    return expected_max / n


def _chi_square(counts: np.ndarray) -> np.ndarray:
    """Pearson chi-square of count rows against uniform."""
    counts = np.atleast_2d(counts).astype(float)
    expected = counts.sum(axis=1, keepdims=True) / counts.shape[1]
    return ((counts - expected) ** 2 / expected).sum(axis=1)


def _compositions(n: int, k: int) -> np.ndarray:
    """Every vector of k non-negative counts summing to n (stars and bars)."""
    rows = []
    for bars in combinations(range(n + k - 1), k - 1):
        edges = (-1, *bars, n + k - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(k)])
    return np.array(rows, dtype=np.int64)


def uniformity_test(counts: Sequence[int], seed: int = 0) -> tuple[float, float, str]:
    """(chi-square, p-value, method) for counts against a uniform distribution.

    Asymptotic chi-square when every expected count is >= 5; otherwise the exact
    multinomial p-value (outcomes at least as extreme by chi-square) when there are at
    most 50,000 outcomes, else a Monte-Carlo p-value from a generator seeded by ``seed``.
    """
    c = np.asarray(counts, dtype=np.int64)
    n, k = int(c.sum()), len(c)
    stat = float(_chi_square(c)[0])
    if n / k >= MIN_EXPECTED_FOR_ASYMPTOTIC:
        return stat, float(_st.chi2.sf(stat, k - 1)), "chi-square"
    tolerance = 1e-9 * max(1.0, stat)
    if math.comb(n + k - 1, k - 1) <= MAX_EXACT_OUTCOMES:
        outcomes = _compositions(n, k)
        log_p = (
            math.lgamma(n + 1)
            - np.sum([[math.lgamma(x + 1) for x in row] for row in outcomes], axis=1)
            - n * math.log(k)
        )
        extreme = _chi_square(outcomes) >= stat - tolerance
        return stat, float(min(1.0, np.exp(log_p[extreme]).sum())), "exact multinomial"
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, np.full(k, 1.0 / k), size=MONTE_CARLO_DRAWS)
    hits = int((_chi_square(draws) >= stat - tolerance).sum())
    return stat, (hits + 1) / (MONTE_CARLO_DRAWS + 1), f"monte-carlo ({MONTE_CARLO_DRAWS} draws, seed {seed})"
