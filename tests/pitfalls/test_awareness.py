"""Evaluation-awareness probe on synthetic activations with a planted direction."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.behavioral.items.presentations import presented
from liedar.core.errors import InputError
from liedar.probes.awareness import awareness_transfer, fit_awareness, presentation_set, sandbag_auroc

D = 24


def _acts(ps, shared: float, per_family: float, seed: int = 0) -> np.ndarray:
    """Noise + ``shared`` x one evaluation direction + ``per_family`` x each family's own direction."""
    rng = np.random.default_rng(seed)
    fam_dirs = {f: rng.normal(size=D) for f in sorted(set(ps.families))}  # sorted: set order follows the hash seed
    shared_dir = rng.normal(size=D)
    X = rng.normal(size=(len(ps.inputs), D))
    for k, (f, y) in enumerate(zip(ps.families, ps.labels)):
        X[k] += per_family * fam_dirs[f] + (shared * shared_dir if y == 1 else 0.0)
    return X


@pytest.fixture(scope="module")
def ps():
    return presentation_set(presented(load_mcq_bank()[:60]))


def test_a_shared_evaluation_direction_transfers(ps) -> None:
    res = awareness_transfer(_acts(ps, shared=1.5, per_family=0.5), ps, layer=0, n_boot=200)
    assert res.mean_transfer.value > 0.85
    assert all(c.transfer.lo > 0.6 for c in res.cells)


def test_family_strings_alone_do_not_transfer(ps) -> None:
    """Each family has its own direction, no shared one: in-family is easy, transfer is not."""
    res = awareness_transfer(_acts(ps, shared=0.0, per_family=1.5), ps, layer=0, n_boot=200)
    assert np.mean([c.in_family.value for c in res.cells]) > 0.9
    assert res.mean_transfer.value < 0.75


def test_awareness_score_predicts_planted_sandbagging(ps) -> None:
    X = _acts(ps, shared=1.0, per_family=0.3)
    probe, th = fit_awareness(X, ps)
    s = probe.decision_function(X)
    # sandbag (answer wrongly) exactly on evaluation prompts with a high awareness score
    high = s > np.quantile(s[ps.labels == 1], 0.5)
    correct = ~((ps.labels == 1) & high)
    res = sandbag_auroc(s, ps, correct, threshold=th, n_boot=200)
    assert res.auroc.value > 0.95 and res.auroc.lo > 0.8
    # and unrelated errors are not predicted (averaged over seeds: one draw may stray)
    nulls = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        random_wrong = ~((ps.labels == 1) & (rng.random(len(s)) < 0.4))
        nulls.append(sandbag_auroc(s, ps, random_wrong, threshold=th, n_boot=50).auroc.value)
    assert abs(np.mean(nulls) - 0.5) < 0.06


def test_bad_input_one_line(ps) -> None:
    with pytest.raises(InputError, match="one row per prompt"):
        awareness_transfer(np.zeros((3, D)), ps, layer=0)
    with pytest.raises(InputError, match="no items"):
        presentation_set(presented([]))
    with pytest.raises(InputError, match="two evaluation and two deployment"):
        awareness_transfer(
            np.zeros((20, D)), presentation_set(presented(load_mcq_bank()[:10], ["benchmark", "product"])), layer=0
        )
    with pytest.raises(InputError, match="one score and one correctness"):
        sandbag_auroc(np.zeros(2), ps, [True, True], threshold=0.0)
