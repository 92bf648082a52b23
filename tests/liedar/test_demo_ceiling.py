"""The demo's sandbagging step: the report's Ceiling carries the chosen elicitation protocol
and its evaluation-split accuracy (fake backend, no model)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "behavioral"))
from elicitation_fakes import LetterBiasKnower  # noqa: E402

from liedar.behavioral.registry import get  # noqa: E402
from liedar.pipeline.context import DemoConfig, DemoContext  # noqa: E402
from liedar.pipeline.demo_steps import instrument_step  # noqa: E402


@pytest.mark.parametrize("quick", [True, False])
def test_demo_ceiling_names_the_chosen_protocol(tmp_path, quick: bool) -> None:
    ctx = DemoContext(DemoConfig(quick=quick, output=tmp_path))
    ctx._backend = LetterBiasKnower()  # prefers letter C; knows the answers (visible without letters)
    gap = get("gap")
    section, raw = instrument_step(gap, quick).run(ctx)
    raw = raw["result"]
    (ceiling,) = section.ceilings
    chosen = raw["extra"]["ceiling"]["chosen"]
    assert chosen != "zero_shot_letter" and chosen in ceiling.protocol and "chosen on" in ceiling.protocol
    assert ceiling.estimate.value == 1.0
    plan = gap.demo.quick if quick else gap.demo.full
    n_items = plan["limit"]
    assert ceiling.estimate.n == len(raw["extra"]["ceiling"]["evaluation_ids"]) < n_items
    assert [p["name"] for p in raw["extra"]["ceiling"]["protocols"]] == list(plan["protocols"])
    assert np.isclose(section.measures[0].estimate.value, 0.0)  # an honest fake: no gap
