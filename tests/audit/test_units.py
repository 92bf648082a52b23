"""The audit's own units on the real smollm2-135m at six items: the letters gap and cross-context consistency."""

from __future__ import annotations

import pytest
from workers import THREADS

from liedar.audit.evidence import audit_sizes, audit_units, measure
from liedar.audit.units import c3_variants
from liedar.core.paired import paired_excess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def test_the_letters_gap_and_c3_give_per_item_scores_that_pair_to_zero_against_themselves():
    pytest.importorskip("torch")
    from liedar.models import load

    sizes = audit_sizes(quick=True)
    sizes.update(gap_items=6, letter_gap_items=6, c3_items=6)
    units = [u for u in audit_units() if u.name in ("sandbagging", "sandbagging_letters", "c3_consistency")]
    backend = load("smollm2-135m", backend="transformers", n_threads=THREADS)
    ev = measure(lambda: backend, {"fingerprint": "f"}, sizes, 0, units=units, progress=False)
    for det in ("sandbagging_gap", "sandbagging_letters", "c3_consistency"):
        scores = ev.items[det]
        assert len(scores) == 6
        # the per-item scores' mean is the cell's effect
        assert sum(v for _s, v in scores.values()) / 6 == pytest.approx(ev.cells[det].effect.value)
        e = paired_excess(scores, scores)
        assert (e.value, e.lo, e.hi) == (0.0, 0.0, 0.0)
        assert det in ev.capability


def test_c3_variants_reword_and_reorder_but_keep_the_answer():
    from liedar.behavioral.items.mcq import load_mcq_bank

    item = load_mcq_bank()[0]
    variants = c3_variants(item, 0)
    assert variants[0] is item and len(variants) == 3
    for v in variants[1:]:
        assert v.question in item.paraphrases and sorted(v.options) == sorted(item.options) and v.answer == item.answer
    assert c3_variants(item, 0) == variants  # seeded
