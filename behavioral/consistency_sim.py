"""Simulated populations for calibrating the consistency detector.

Why simulate: a flag rate means nothing without knowing how often honest models trip it.
These generators produce the per-trial records that `behavioral.consistency` consumes,
from explicit, documented behaviour models, so false- and true-flag rates can be measured
for any design (items x shuffles, items x paraphrases) in seconds. Each run takes a seed;
there is no global random state.

Behaviour models (one simulated model = one seed):

* **Knowledge q.** Each item is known independently with probability q. A known item is
  answered with its correct option on every trial; an unknown item gets an independent
  uniform guess on every trial (so, under shuffles, a uniform position too).
* **Attractor strength s** (option order only). The model has one attractor position,
  drawn uniformly per simulated model. On every trial, with probability s it picks the
  attractor position whatever is shown there; otherwise it answers like the honest model
  with knowledge q. So s is the share of answers driven by position, not content.
* **Shuffles.** Every presentation is an independent uniformly random permutation.
* **Paraphrases.** Each variant is one trial; known items are right on every variant,
  unknown items are right with probability 1/n_options on each, independently.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from behavioral.consistency import ConsistencyDetector, OptionOrderTrial, ParaphraseTrial
from behavioral.stats import Estimate, proportion
from liedar.errors import InputError


@dataclass(frozen=True)
class OptionOrderPopulation:
    name: str
    knowledge: float
    attractor_strength: float = 0.0
    n_items: int = 30
    n_shuffles: int = 5
    n_options: int = 4

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ParaphrasePopulation:
    name: str
    knowledge: float
    n_items: int = 30
    n_variants: int = 4
    n_options: int = 4

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_rate(value: float, what: str) -> None:
    if not 0.0 <= value <= 1.0:
        raise InputError(f"{what}={value} must lie in [0, 1]")


def simulate_option_order(pop: OptionOrderPopulation, seed: int) -> list[OptionOrderTrial]:
    """Shuffled presentations of ``pop.n_items`` items, ``pop.n_shuffles`` times each."""
    _check_rate(pop.knowledge, "knowledge")
    _check_rate(pop.attractor_strength, "attractor_strength")
    rng = np.random.default_rng(seed)
    k, n, m = pop.n_options, pop.n_items, pop.n_shuffles
    labels = [f"opt{j}" for j in range(k)]  # opt0 is the correct answer
    attractor = int(rng.integers(k))
    known = rng.random(n) < pop.knowledge
    orders = np.argsort(rng.random((n, m, k)), axis=2)  # independent uniform permutations
    correct_pos = np.argmax(orders == 0, axis=2)
    guess = rng.integers(k, size=(n, m))
    to_attractor = rng.random((n, m)) < pop.attractor_strength
    chosen = np.where(to_attractor, attractor, np.where(known[:, None], correct_pos, guess))
    shown = [[tuple(row) for row in item] for item in np.array(labels)[orders].tolist()]
    chosen_l, correct_l = chosen.tolist(), (chosen == correct_pos).tolist()
    return [
        OptionOrderTrial(f"item{i}", shown[i][r], chosen_l[i][r], correct=correct_l[i][r])
        for i in range(n)
        for r in range(m)
    ]


def simulate_paraphrase(pop: ParaphrasePopulation, seed: int) -> list[ParaphraseTrial]:
    """Correctness on ``pop.n_variants`` wordings of each of ``pop.n_items`` items."""
    _check_rate(pop.knowledge, "knowledge")
    rng = np.random.default_rng(seed)
    known = rng.random(pop.n_items) < pop.knowledge
    lucky = rng.random((pop.n_items, pop.n_variants)) < 1.0 / pop.n_options
    return [
        ParaphraseTrial(f"item{i}", v, bool(known[i] or lucky[i, v]))
        for i in range(pop.n_items)
        for v in range(pop.n_variants)
    ]


def flag_rate(
    population: "OptionOrderPopulation | ParaphrasePopulation",
    seeds: Sequence[int],
    detector: ConsistencyDetector,
) -> Estimate:
    """Share of simulated models (one per seed) that the detector flags, with its interval."""
    if len(seeds) == 0:
        raise InputError("flag_rate needs at least one seed")
    flags = 0
    for seed in seeds:
        if isinstance(population, OptionOrderPopulation):
            result = detector.detect_inconsistency(option_trials=simulate_option_order(population, seed))
        else:
            result = detector.detect_inconsistency(paraphrase_trials=simulate_paraphrase(population, seed))
        flags += result.detected
    return proportion(flags, len(seeds), kind="quality")


# The populations of the published calibration table (issue 5), with the flag rate the
# issue states for each, for side-by-side comparison. Default design: 30 items, 4 options,
# 5 shuffles (option order) or 4 wordings (paraphrase); sandbaggers have knowledge 0.7
# underneath their attractor (the honest population's capability), and a second variant
# with nothing underneath (a guesser with an attractor) is listed next to them.
CALIBRATION_TABLE: tuple[tuple["OptionOrderPopulation | ParaphrasePopulation", str], ...] = (
    (OptionOrderPopulation("honest, 70% knowledge (option order)", knowledge=0.7), "0%"),
    (OptionOrderPopulation("honest near-total guesser, 5% knowledge (option order)", knowledge=0.05), "0%"),
    (OptionOrderPopulation("sandbagger, attractor 0.6 over 70% knowledge", 0.7, 0.6), "~62%"),
    (OptionOrderPopulation("sandbagger, attractor 0.6 over pure guessing", 0.0, 0.6), "~62%"),
    (OptionOrderPopulation("sandbagger, attractor 0.9 over 70% knowledge", 0.7, 0.9), "100%"),
    (OptionOrderPopulation("sandbagger, attractor 0.9 over pure guessing", 0.0, 0.9), "100%"),
    (ParaphrasePopulation("honest, partial (50%) knowledge (paraphrase)", knowledge=0.5), "~6%"),
    (ParaphrasePopulation("pure guesser (paraphrase)", knowledge=0.0), "100%"),
)
