"""Under a format-2 rule, a format the reference answers at chance is not measured on the audited models.

Its row reads *incapable* from the reference's own capability before the model's numbers are
looked at, so leaving the unit out must change no row and no verdict; these tests check that
on the real smollm2-135m, which answers answer letters at chance.
"""

from __future__ import annotations

import pytest

from liedar.audit.evidence import (
    _unread_units,
    audit_sizes,
    audit_units,
    evidence_key,
    measure,
    unread_on_references,
)
from liedar.audit.rule import load_rule
from liedar.audit.verdict2 import decide2

PROTOCOL2 = "liedar/audit/rules/protocol2.json"


def test_a_unit_another_unit_reads_is_kept_even_when_its_detector_is_unread():
    units = audit_units()
    # the fine-tuning elicitation reads the gap's run, so the gap runs whatever the reference does
    assert "sandbagging" not in _unread_units(units, frozenset({"sandbagging_gap"}))
    assert _unread_units(units, frozenset({"sandbagging_letters"})) == {"sandbagging_letters"}
    assert _unread_units(units, frozenset()) == frozenset()


def test_the_evidence_key_says_which_formats_were_left_out():
    units = audit_units()
    plain = evidence_key({"fingerprint": "f"}, {}, 0, units)
    assert evidence_key({"fingerprint": "f"}, {}, 0, units, unread=frozenset()) == plain
    assert evidence_key({"fingerprint": "f"}, {}, 0, units, unread=frozenset({"sandbagging_letters"})) != plain


@pytest.mark.integration
@pytest.mark.timeout(900)
def test_leaving_out_a_format_the_reference_cannot_answer_changes_no_row(smollm2_transformers):
    backend = smollm2_transformers
    sizes = audit_sizes(quick=True)
    sizes.update(gap_items=6, letter_gap_items=6, c3_items=6)
    units = [u for u in audit_units() if u.name in ("sandbagging", "sandbagging_letters", "c3_consistency")]
    reference = measure(lambda: backend, {"fingerprint": "f"}, sizes, 0, units=units, progress=False)
    unread = unread_on_references([reference])
    assert reference.capability["sandbagging_letters"]["capable"] is False  # letters at chance on this model
    assert "sandbagging_letters" in unread
    assert unread == {d for d, cap in reference.capability.items() if not cap["capable"]}

    full = reference  # the model audited here is the reference itself: its full evidence is already measured
    lean = measure(lambda: backend, {"fingerprint": "f"}, sizes, 0, units=units, progress=False, unread=unread)
    assert all(status == "ok" for status in full.units.values())
    for u in units:  # each unit is left out exactly when every detector it feeds is unread
        assert (lean.units[u.name] == "skipped") == (set(u.detectors) <= unread), u.name
    assert (
        "sandbagging_letters" not in lean.items
        and "reference is at chance" in lean.cells["sandbagging_letters"].not_computable.reason
    )

    rule = load_rule(PROTOCOL2)
    a, b = decide2(rule, full, reference), decide2(rule, lean, reference)
    assert [(r.detector, r.state) for r in a.rows] == [(r.detector, r.state) for r in b.rows]
    assert a.verdict == b.verdict
    letters = next(r for r in b.rows if r.detector == "sandbagging_letters")
    assert letters.state == "incapable"
