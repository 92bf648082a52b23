"""Contamination check: is a benchmark's *original wording* unusually likely to the model?

Why this score. A model that trained on a benchmark has seen its exact strings; it finds the
original wording more probable than a rewrite that means the same (Oren et al. 2023's
exchangeability idea; the "guided rewrite" comparisons of later work), and its least likely
tokens are less unlikely (min-k% probability, Shi et al. 2023). Both are computed *relative
to the rewrites* of the same item, so a fluent or familiar topic, which raises every
wording, cancels:

* ``wording``: mean per-token log-prob of the original minus the mean over its rewrites;
* ``min_k``: the mean of the lowest k% token log-probs of the original minus the same over
  the rewrites (k = 20% by default).

Why calibrated on fresh items. How large these scores get without memorisation depends on
the templates and the model; so the thresholds are the upper quantiles of each score on a
*calibration half* of freshly generated items of the same kind, never in the benchmark (the
bank's templates with fresh operands, and facts about real entities the bank does not ask
about: `liedar.behavioral.items.fresh`), at ``false_flag / 2`` each (Bonferroni over the two scores).
The false-flag rate is then *measured* on the other, held-out half of fresh items (with its
interval), and the benchmark's flag rate is compared with it by a one-sided Fisher exact test:
a benchmark is marked contaminated only when it is flagged more often than fresh items are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from liedar.core._util.serial import Serial
from liedar.core.errors import InputError
from liedar.core.results import Caveat
from liedar.core.stats import DEFAULT_INTERVAL, Estimate, proportion

DEFAULT_K = 0.2
SCORES = ("wording", "min_k")


def min_k(logprobs: Sequence[float], k: float = DEFAULT_K) -> float:
    """Mean of the lowest ``k`` share of token log-probs (at least one token)."""
    lp = np.sort(np.asarray(logprobs, dtype=float))
    if lp.size == 0:
        raise InputError("a text produced no scored tokens: give a longer text")
    m = max(1, int(math.ceil(k * lp.size)))
    return float(lp[:m].mean())


@dataclass(frozen=True)
class ItemScore(Serial):
    """One item's scores (positive: the original wording is more likely than its rewrites)."""

    item_id: str
    source: str
    wording: float
    min_k: float
    raw_min_k: float  # min-k% of the original alone (not calibrated across formats; shown, not used)
    flagged: bool = False
    percentile: float = float("nan")  # share of calibration fresh items scoring at least as high (wording)


def score_item(
    item_id: str, source: str, original: Sequence[float], rewrites: Sequence[Sequence[float]], k: float = DEFAULT_K
) -> ItemScore:
    """Scores from per-token log-probs of the original and of each rewrite."""
    if not rewrites:
        raise InputError(f"item {item_id!r}: no rewrites to compare the original wording with")
    o = np.asarray(original, dtype=float)
    if o.size == 0 or any(len(r) == 0 for r in rewrites):
        raise InputError(f"item {item_id!r}: a wording produced no scored tokens")
    if not np.all(np.isfinite(o)) or not all(np.all(np.isfinite(r)) for r in rewrites):
        raise InputError(f"item {item_id!r}: non-finite token log-probs (the backend failed on this text)")
    wording = float(o.mean() - np.mean([np.mean(r) for r in rewrites]))
    mk = float(min_k(o, k) - np.mean([min_k(r, k) for r in rewrites]))
    return ItemScore(item_id, source, wording, mk, min_k(o, k))


@dataclass(frozen=True)
class ContaminationResult(Serial):
    flag_rate: Estimate  # benchmark items flagged
    false_flag_rate: Estimate  # held-out fresh items flagged (measured)
    fisher_p: float  # one-sided: benchmark flagged more often than held-out fresh items
    contaminated: bool
    thresholds: dict[str, float]
    nominal_false_flag: float
    items: tuple[ItemScore, ...]
    fresh: tuple[ItemScore, ...]
    n_calibration: int
    reading: str
    benchmark: str
    k: float = DEFAULT_K
    warnings: tuple[Caveat, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    instrument: ClassVar[str] = "contamination"
    key_order = (
        "instrument",
        "benchmark",
        "flag_rate",
        "false_flag_rate",
        "fisher_p",
        "contaminated",
        "thresholds",
        "nominal_false_flag",
        "n_calibration",
        "k",
        "reading",
        ...,
    )


def _flag(s: ItemScore, th: Mapping[str, float], calib_wording: np.ndarray) -> ItemScore:
    from dataclasses import replace

    flagged = s.wording > th["wording"] or s.min_k > th["min_k"]
    return replace(s, flagged=bool(flagged), percentile=float(np.mean(calib_wording >= s.wording)))


def contamination_check(
    items: Sequence[ItemScore],
    fresh: Sequence[ItemScore],
    *,
    benchmark: str = "benchmark",
    false_flag: float = 0.05,
    calibration_fraction: float = 0.5,
    alpha: float = 0.05,
    seed: int = 0,
    interval: str = DEFAULT_INTERVAL,
) -> ContaminationResult:
    """Thresholds from a calibration half of ``fresh``, false-flag rate measured on the rest,
    the benchmark's flag rate and the test between them."""
    from scipy.stats import fisher_exact

    if not items:
        raise InputError("no benchmark items to check: give at least one")
    if not 0 < false_flag < 1 or not 0 < calibration_fraction < 1:
        raise InputError("false_flag and calibration_fraction must lie strictly between 0 and 1")
    n_cal = int(round(calibration_fraction * len(fresh)))
    need = int(math.ceil(2 / false_flag))
    if n_cal < need or len(fresh) - n_cal < 10:
        raise InputError(
            f"{len(fresh)} fresh items are too few: the calibration half needs at least {need} items for a "
            f"{false_flag:g} false-flag threshold and the held-out half at least 10; generate more fresh items"
        )
    order = np.random.default_rng(seed).permutation(len(fresh))
    cal = [fresh[int(i)] for i in order[:n_cal]]
    held = [fresh[int(i)] for i in order[n_cal:]]
    q = 1 - false_flag / 2
    th = {name: float(np.quantile([getattr(s, name) for s in cal], q, method="higher")) for name in SCORES}
    cal_w = np.array([s.wording for s in cal])
    scored = tuple(_flag(s, th, cal_w) for s in items)
    held_scored = tuple(_flag(s, th, cal_w) for s in held)
    kb, nb = sum(s.flagged for s in scored), len(scored)
    kf, nf = sum(s.flagged for s in held_scored), len(held_scored)
    rate = proportion(kb, nb, "propensity", interval)
    ffr = proportion(kf, nf, "quality", interval)
    p = float(fisher_exact([[kb, nb - kb], [kf, nf - kf]], alternative="greater")[1])
    contaminated = p < alpha and rate.value > ffr.value
    warnings: list[Caveat] = []
    if ffr.lo > false_flag:
        warnings.append(
            Caveat(
                "false_flags_above_nominal",
                f"held-out fresh items are flagged at {ffr.value:.2f}, above the nominal {false_flag:.2f}",
            )
        )
    if nb < 30:
        warnings.append(Caveat("few_items", f"only {nb} benchmark items: the flag-rate interval is wide"))
    if contaminated:
        reading = (
            f"{benchmark} looks contaminated: {kb}/{nb} items ({rate.value:.2f} [{rate.lo:.2f}, {rate.hi:.2f}]) "
            f"have an original wording more likely than fresh items' ({ffr.value:.2f} false flags on {nf} "
            "held-out fresh items; "
            f"Fisher p={p:.3g}): rates measured on it may be inflated by memorisation"
        )
    else:
        reading = (
            f"no sign of contamination: {kb}/{nb} {benchmark} items flagged ({rate.value:.2f} [{rate.lo:.2f}, "
            f"{rate.hi:.2f}]), against {kf}/{nf} held-out fresh items (Fisher p={p:.3g}); the check sees verbatim "
            "memorisation of the wording, not a model that learned the answers from paraphrased copies"
        )
    return ContaminationResult(
        rate,
        ffr,
        p,
        bool(contaminated),
        th,
        false_flag,
        scored,
        held_scored,
        n_cal,
        reading,
        benchmark,
        warnings=tuple(warnings),
    )
