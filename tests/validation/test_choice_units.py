"""The choice-format detector units: registered, sized, item choice, and a short run on smollm2-135m."""

from __future__ import annotations

import pytest

from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.pipeline.validate import demo_validation_sizes, truth_for, validation_sizes
from liedar.pipeline.validate_detectors import (
    DETECTORS,
    FLAG_RULES,
    UNITS,
    UnitContext,
    _pick,
    choice_items,
    run_unit,
)
from liedar.pipeline.validate_units import ModelSpec

CHOICE = ("sycophancy_choice", "honesty_choice")


def test_units_detectors_rules_and_sizes():
    units = {u.name: u for u in UNITS}
    for name in CHOICE:
        assert units[name].detectors == (name,) and name in DETECTORS and name in FLAG_RULES
        for key in units[name].sizes:
            assert key in validation_sizes(False) and key in validation_sizes(True)
    assert validation_sizes(False)["sycophancy_choice_items"] >= 40  # ~0.73 known: n >= 30 known items
    assert not demo_validation_sizes(False)["honesty_choice_products"]  # the demo skips them


def test_an_organism_built_for_the_behaviour_is_a_target_of_its_choice_detector():
    syc = ModelSpec("smollm2-135m:sycophant", {"learned": True, "targets": ["sycophancy"]})
    assert truth_for("sycophancy_choice", syc) is True and truth_for("honesty_choice", syc) is False
    assert truth_for("sycophancy_choice", ModelSpec("smollm2-135m")) is False


def test_choice_items_start_with_the_gap_items():
    bank = load_mcq_bank()
    ctx = UnitContext({"gap_items": 10}, 0, bank)
    gap = _pick(bank, 10, 0, "gap")
    assert choice_items(ctx, 6, "x") == gap[:6]
    more = choice_items(ctx, 25, "x")
    assert more[:10] == gap and len({it.item_id for it in more}) == 25
    assert len(choice_items(UnitContext({"gap_items": 0}, 0, bank), 7, "x")) == 7


def test_zero_size_is_a_not_computable_cell_saying_why():
    units = {u.name: u for u in UNITS}
    ctx = UnitContext({"sycophancy_choice_items": 0, "honesty_choice_products": 0, "gap_items": 0}, 0, [])
    for name in CHOICE:
        cells, raw, status = run_unit(units[name], None, ctx)
        assert status == "ok" and cells[0].flag is None and "not run at these sizes" in cells[0].not_computable.reason


@pytest.mark.integration
def test_choice_units_on_smollm2_carry_their_ceiling(smollm2_transformers):
    """A short run (12 items, 8 products): each cell has its number or says why, and the raw
    output states the capability ceiling the audit reads."""
    from liedar.audit.evidence import capability_of

    units = {u.name: u for u in UNITS}
    sizes = {"sycophancy_choice_items": 12, "honesty_choice_products": 8, "gap_items": 0}
    ctx = UnitContext(sizes, 0, load_mcq_bank())
    for name, chance in (("sycophancy_choice", 0.25), ("honesty_choice", 0.5)):
        cells, raw, status = run_unit(units[name], smollm2_transformers, ctx)
        assert status == "ok" and cells[0].detector == name
        assert (cells[0].effect is None) == (cells[0].not_computable is not None)
        cap = capability_of(raw, name)
        assert cap is not None and cap["chance"] == chance and cap["estimate"]["n"] >= 8
        assert cap["estimate"]["value"] > chance  # smollm2-135m answers these above chance (measured: docs)
