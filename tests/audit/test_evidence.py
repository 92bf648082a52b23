"""Evidence bookkeeping: capability read from a unit's output, fallback formats, the cache's checks."""

from __future__ import annotations

from audit_helpers import evidence

from liedar.audit.evidence import (
    audit_units,
    capability_of,
    evidence_key,
    fallback_formats,
    incapable_preferred,
    read_cached,
    write_cached,
)
from liedar.pipeline.validate_detectors import not_computable


def test_capability_is_read_from_a_stated_capability_or_the_result():
    stated = {"capability": {"estimate": {"value": 0.8, "lo": 0.6, "hi": 0.9, "n": 40}, "chance": 0.25}}
    assert capability_of(stated, "x")["capable"] is True
    stated["capability"]["incapable"] = True
    assert capability_of(stated, "x")["capable"] is False
    res = {"result": {"neutral_accuracy": {"value": 0.6, "lo": 0.45, "hi": 0.7, "n": 40}, "warnings": []}}
    assert capability_of(res, "sycophancy")["capable"] is False  # lo 0.45 is not above the yes/no chance 0.5
    res = {"result": {"elicited": {"value": 0.7, "lo": 0.5, "hi": 0.8, "n": 40}, "chance": 0.25, "warnings": []}}
    assert capability_of(res, "sandbagging_gap")["capable"] is True
    res["result"]["warnings"] = [{"code": "ceiling_near_chance", "text": ""}]
    assert capability_of(res, "sandbagging_gap")["capable"] is False  # the instrument's own caveat wins
    assert capability_of({"gain": {}}, "ceilings") is None  # measures no capability: no gate


def test_fallbacks_come_from_the_rule_rows_order():
    fb = fallback_formats([("sandbagging_gap",), ("sycophancy_choice", "sycophancy"), ("a", "b", "c")])
    assert fb == {"sycophancy": ("sycophancy_choice",), "b": ("a",), "c": ("a", "b")}


def test_a_fallback_is_needed_when_the_preferred_format_is_incapable_or_missing():
    fb = {"sycophancy": ("sycophancy_choice",)}
    ev = evidence()
    assert incapable_preferred(ev, fb) == {"sycophancy"}  # no choice cell at all
    ev.cells["sycophancy_choice"] = ev.cells["sycophancy"]
    ev.capability["sycophancy_choice"] = dict(ev.capability["sycophancy"])
    assert incapable_preferred(ev, fb) == frozenset()
    ev.capability["sycophancy_choice"]["capable"] = False
    assert incapable_preferred(ev, fb) == {"sycophancy"}
    ev.capability["sycophancy_choice"]["capable"] = True
    ev.cells["sycophancy_choice"] = not_computable("sycophancy_choice", "no number")
    assert incapable_preferred(ev, fb) == {"sycophancy"}


def test_the_key_changes_with_what_can_change_the_numbers(tmp_path):
    ident = {"fingerprint": "f", "adapter_sha256": "a"}
    units = audit_units()
    k = evidence_key(ident, {"gap_items": 40}, 0, units)
    assert k != evidence_key({**ident, "adapter_sha256": "b"}, {"gap_items": 40}, 0, units)
    assert k != evidence_key(ident, {"gap_items": 41}, 0, units)
    assert k != evidence_key(ident, {"gap_items": 40}, 1, units)
    assert k != evidence_key(ident, {"gap_items": 40}, 0, units, {"sycophancy": ("sycophancy_choice",)})
    ev = evidence()
    write_cached(tmp_path, k, ev)
    back = read_cached(tmp_path, k)
    assert (
        back is not None and back.cached and back.cells["sandbagging_gap"].effect == ev.cells["sandbagging_gap"].effect
    )
    assert read_cached(tmp_path, evidence_key(ident, {"gap_items": 41}, 0, units)) is None
    path = next(tmp_path.glob("*.json"))
    path.write_text(path.read_text(encoding="utf-8")[:-20], encoding="utf-8")  # cut short
    assert read_cached(tmp_path, k) is None
