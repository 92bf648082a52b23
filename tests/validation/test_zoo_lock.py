"""`liedar validate`'s lock organism: the audit zoo's pw_locked, not a seed drawn per run."""

from __future__ import annotations

import pytest

from liedar.pipeline.validate import organism_specs, zoo_lock


def test_the_zoo_pw_locked_is_the_lock_organism():
    pytest.importorskip("torch")
    from liedar.organisms import ORGANISMS

    card = zoo_lock("smollm2-135m")
    if card is None:
        pytest.skip("no zoo/audit/smollm2-135m/pw_locked in this tree")
    assert card.ground_truth[card.headline]["value"] == pytest.approx(0.191, abs=0.001)
    lines: list[str] = []
    specs, notes = organism_specs(
        "smollm2-135m", ["password_locked"], ["password_locked"], 1, lines.append, verify=False
    )
    lock = [s for s in specs if s.organism.get("adapter_sha256") == card.adapter_sha256]
    assert len(lock) == 1 and lock[0].organism["targets"] == list(ORGANISMS["password_locked"].targets)
    assert any("pw_locked (cloze_sum_gap 0.191" in n for n in notes)
    assert any("not built" in n for n in notes) and not lines  # nothing was trained
    assert zoo_lock("gemma3-270m") is None
