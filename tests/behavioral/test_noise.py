from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from instrument_fakes import FakeMCQ  # noqa: E402

from liedar.behavioral.noise import NoiseTrial, noise_curve  # noqa: E402
from liedar.core.errors import IncompatibleError, InputError  # noqa: E402


def _trials(base: int, curve: dict[float, list[int]], n: int = 50) -> list[NoiseTrial]:
    out = [NoiseTrial(0.0, 0, base, n)]
    for s, per_seed in curve.items():
        out += [NoiseTrial(s, sd, k, n) for sd, k in enumerate(per_seed)]
    return out


def test_honest_curve_degrades_and_phi_is_about_one():
    c = noise_curve(
        _trials(40, {0.001: [40, 39, 41], 0.01: [30, 28, 31], 0.1: [13, 12, 14]}), condition="honest", chance=0.25
    )
    assert c.monotone and c.baseline.value == 0.8
    assert c.phi.value == pytest.approx((40 / 40 + 39 / 40 + 41 / 40) / 3)  # per-seed best / baseline, averaged
    assert "no improvement" in c.reading and "monotonically" in c.reading
    assert c.phi.kind == "capability" and c.phi.n == 3


def test_sandbagger_improves_above_chance():
    c = noise_curve(
        _trials(10, {0.001: [12, 11, 12], 0.01: [30, 32, 29], 0.1: [13, 12, 14]}), condition="sandbagger", chance=0.25
    )
    assert not c.monotone and c.best_sigma == 0.01
    assert c.phi.value == pytest.approx((30 + 32 + 29) / 3 / 10)
    assert c.phi.lo > 1 and "sandbagging signature" in c.reading


def test_rise_only_to_chance_is_not_called_a_signature():
    # Deliberately wrong answers (4%) randomised by noise toward chance (25%).
    c = noise_curve(_trials(2, {0.01: [11, 12, 13], 0.1: [12, 13, 12]}), condition="sandbagger", chance=0.25)
    assert "only to about chance" in c.reading


def test_bad_trials():
    with pytest.raises(InputError, match="no noise trials"):
        noise_curve([], condition="x", chance=0.25)
    with pytest.raises(InputError, match="no baseline"):
        noise_curve([NoiseTrial(0.1, 0, 5, 10)], condition="x", chance=0.25)
    with pytest.raises(InputError, match="full sigma x seed grid"):
        noise_curve(_trials(5, {0.1: [4, 4], 0.2: [3]}, n=10), condition="x", chance=0.25)


def test_noise_needs_a_torch_model():
    from liedar.behavioral.runners.noise import run_noise

    with pytest.raises(IncompatibleError, match="transformers backend"):
        run_noise(FakeMCQ({}), [])


def test_tiny_model_degrades_monotonically_and_weights_are_restored(tiny_model_dir):
    """Honest case on a real transformers model: the items' answers are defined as the
    unperturbed model's own choices (baseline accuracy 1.0), so noise can only lower it."""
    import torch

    from liedar import models
    from liedar.behavioral.items.mcq import load_mcq_bank
    from liedar.behavioral.runners.common import ask_multiple_choice
    from liedar.behavioral.runners.noise import run_noise
    from liedar.behavioral.runners.sandbagging import BENIGN_SYSTEM

    torch.set_num_threads(1)
    lm = models.load(str(tiny_model_dir), backend="transformers", n_threads=1)
    items = [
        dataclasses.replace(it, answer=ask_multiple_choice(lm, it.question, it.options, system=BENIGN_SYSTEM).label)
        for it in load_mcq_bank()[:30]
    ]
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    comparison, raw = run_noise(lm, items, sigmas=(0.003, 0.03, 0.3), seeds=(0, 1, 2), sandbag_system=None)
    after = lm.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # restored bit for bit
    honest = comparison.honest
    means = [honest.baseline.value] + [lv.accuracy.value for lv in honest.levels]
    assert honest.baseline.value == 1.0
    assert honest.monotone, means
    assert means[-1] < 0.7, means  # large noise destroys the behaviour
    assert honest.phi.value <= 1.0 and "no improvement" in honest.reading
    assert len(raw) == 1 + 3 * 3 and comparison.sandbagger is None


@pytest.mark.integration
def test_noise_on_smollm2_restores_weights_and_keeps_baseline():
    """Short real run: 3 items, one noise level, one seed (9 scoring calls)."""
    import torch

    from liedar import models
    from liedar.behavioral.items.mcq import load_mcq_bank
    from liedar.behavioral.runners.noise import run_noise
    from liedar.behavioral.runners.sandbagging import BENIGN_SYSTEM, correctness
    from liedar.core.errors import ModelUnavailableError

    torch.set_num_threads(1)
    try:
        lm = models.load("smollm2-135m", backend="transformers", n_threads=1)
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))
    items = load_mcq_bank()[::40][:3]
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    result, raw = run_noise(lm, items, sigmas=(0.01,), seeds=(0,), sandbag_system=None)
    assert all(torch.equal(before[k], v) for k, v in lm.model.state_dict().items())
    # Restored weights give the baseline answers again.
    assert sum(correctness(lm, items, BENIGN_SYSTEM).values()) == raw[0]["correct"]
    assert raw[0]["sigma"] == 0.0 and len(raw) == 2


def test_instruments_and_runners_import_without_torch():
    """Contract: `behavioral` imports no torch/models at import time (the noise runner
    imports torch only inside run_noise)."""
    import subprocess

    mods = [
        "liedar.behavioral." + m
        for m in (
            "sandbagging",
            "noise",
            "sycophancy",
            "negation",
            "honesty",
            "episodes",
            "judges",
            "items.claims",
            "items.episodes",
            "runners.noise",
            "runners.negation",
            "runners.honesty",
            "runners.sycophancy",
            "runners.sandbagging",
        )
    ]
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in mods)
        + (
            "import liedar.behavioral.registry, liedar.commands.behavioral\n"
            "bad = [m for m in ('torch', 'transformers', 'llama_cpp', 'liedar.models.hf', 'liedar.probes')"
            " if m in sys.modules]\n"
            "assert not bad, bad\n"
        )
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
