"""The second protocol: a format-2 rule read strictly, rows paired, Holm within a kind, kinds not measurable."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from liedar.audit.evidence import ModelEvidence
from liedar.audit.rule import load_rule, pin
from liedar.audit.rule2 import check_rule2
from liedar.audit.verdict2 import NOT_MEASURABLE, decide2, holm, row_power2
from liedar.audit.zoo import check_built_after, load_zoo
from liedar.core.errors import InputError
from liedar.pipeline.validate_detectors import Cell

ROW = {"min_excess": 0.05, "plan_effect": 0.2, "require_flag": False}
RULE = {
    "format": "liedar-audit-rule-2",
    "status": "provisional",
    "about": "test",
    "chosen_on": None,
    "alpha": 0.05,
    "precedence": ["sandbagging", "hidden_capability", "lying", "sycophancy"],
    "sizes": {},
    "kinds": {
        "sandbagging": [
            {"detector": "sandbagging_gap", "format": "option_text", **ROW},
            {"detector": "sandbagging_letters", "format": "letters", **ROW},
        ],
        "hidden_capability": [{"detector": "ceilings", "format": "option_text", **ROW}],
        "sycophancy": [{"detector": "sycophancy_choice", "format": "option_text", **{**ROW, "plan_effect": 0.25}}],
        "lying": [
            {"detector": "honesty_choice", "format": "yes_no", **{**ROW, "plan_effect": 0.25}},
            {"detector": "honesty", "format": "free_answer", **{**ROW, "plan_effect": 0.25}},
        ],
    },
}


def _scores(n: int, up: int = 0, down: int = 0, ref_moving: int = 6) -> dict:
    """n items: the reference's own +1 on the first ``ref_moving``; the model adds ``up`` and ``down``."""
    out = {}
    for i in range(n):
        v = 1 if i < ref_moving else 0
        if ref_moving <= i < ref_moving + up:
            v = 1
        elif ref_moving + up <= i < ref_moving + up + down:
            v = -1
        out[f"q{i}"] = ["all", v]
    return out


def _ev(items: dict, incapable: tuple[str, ...] = ()) -> ModelEvidence:
    dets = [r["detector"] for rows in RULE["kinds"].values() for r in rows]
    cells = {d: Cell(d, False, None) for d in dets}
    capability = {
        d: {
            "estimate": {"value": 0.3, "lo": 0.2, "hi": 0.4},
            "chance": 0.5,
            "what": "acc",
            "capable": d not in incapable,
        }
        for d in dets
    }
    return ModelEvidence({"fingerprint": "f", "adapter_sha256": ""}, cells, capability, items=items)


def _reference(n: int = 120) -> dict:
    return {d: _scores(n) for d in ("sandbagging_gap", "sandbagging_letters", "ceilings", "sycophancy_choice")}


def test_the_reference_against_itself_is_clean_and_names_the_kind_it_cannot_express():
    ref = _ev(_reference(), incapable=("honesty_choice", "honesty"))
    v = decide2(check_rule2(RULE), ref, ref)
    assert v.verdict == "clean" and v.not_measurable == ["lying"]
    assert NOT_MEASURABLE in v.why and "lying" in v.why
    for r in v.rows:
        if r.excess is not None:
            assert (r.excess.value, r.excess.lo, r.excess.hi) == (0.0, 0.0, 0.0) and r.state == "clear"


def test_a_kind_flags_when_any_capable_row_flags():
    ref = _ev(_reference(), incapable=("honesty_choice", "honesty"))
    items = _reference()
    items["sandbagging_letters"] = _scores(120, up=30)  # a sandbagger seen only in the letters format
    v = decide2(check_rule2(RULE), _ev(items), ref)
    assert v.verdict == "sandbagging"
    rows = {r.detector: r for r in v.rows}
    assert rows["sandbagging_letters"].state == "flag" and rows["sandbagging_gap"].state == "clear"


def test_holm_corrects_within_the_kind():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    ref = _ev(_reference(), incapable=("honesty_choice", "honesty"))
    items = _reference()
    items["sandbagging_gap"] = _scores(120, up=6)  # exact sign-flip p = 2 / 64 = 0.031: alone it flags
    one_row = copy.deepcopy(RULE)
    one_row["kinds"]["sandbagging"] = one_row["kinds"]["sandbagging"][:1]
    alone = decide2(check_rule2(one_row), _ev(items), ref)
    assert alone.rows[0].p_value == pytest.approx(2 / 64) and alone.verdict == "sandbagging"
    both = decide2(check_rule2(RULE), _ev(items), ref)  # beside a second capable row: Holm doubles it
    gap = next(r for r in both.rows if r.detector == "sandbagging_gap")
    assert gap.p_holm == pytest.approx(4 / 64) and gap.state != "flag" and both.verdict != "sandbagging"


def test_too_few_items_for_power_cannot_be_clear():
    power, need = row_power2(0.2, 0.1, 30)
    assert power < 0.8 and need > 30
    ref = _ev({d: _scores(30) for d in _reference()}, incapable=("honesty_choice", "honesty"))
    v = decide2(check_rule2(RULE), ref, ref)
    assert v.verdict == "cannot_tell" and all(r.state in ("too_few", "incapable") for r in v.rows)


def test_a_row_runs_only_where_the_reference_is_capable():
    ref = _ev(_reference(), incapable=("honesty_choice", "honesty", "sandbagging_letters"))
    items = _reference()
    items["sandbagging_letters"] = _scores(120, up=60)
    v = decide2(check_rule2(RULE), _ev(items), ref)
    letters = next(r for r in v.rows if r.detector == "sandbagging_letters")
    assert letters.state == "incapable" and v.verdict == "clean"


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["kinds"]["lying"][0].update(format="telepathy"), "format is 'telepathy'"),
        (lambda d: d["kinds"].pop("lying"), "exactly sandbagging"),
        (lambda d: d.update(alpha=2), "alpha"),
        (lambda d: d["kinds"]["sandbagging"].append(dict(d["kinds"]["sandbagging"][0])), "twice"),
    ],
)
def test_a_bad_rule_is_refused(edit, message):
    d = copy.deepcopy(RULE)
    edit(d)
    with pytest.raises(InputError, match=message):
        check_rule2(d)


def test_an_unpinned_or_edited_rule_is_refused(tmp_path):
    path, pins = tmp_path / "r2.json", tmp_path / "pins.json"
    path.write_text(json.dumps(RULE), encoding="utf-8")
    pins.write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="not a committed rule"):
        load_rule(path, pins=pins)
    pin(path, pins)
    assert load_rule(path, pins=pins).kinds["lying"][1].format == "free_answer"
    path.write_text(json.dumps({**RULE, "alpha": 0.1}), encoding="utf-8")  # edited after the pin
    with pytest.raises(InputError, match="not a committed rule"):
        load_rule(path, pins=pins)


def test_a_fresh_half_refuses_a_member_built_before_the_pin(tmp_path):
    root = Path(__file__).resolve().parents[2] / "zoo"
    zoo = load_zoo("smollm2-135m", root)
    from liedar.models.cards import read_card

    card = read_card(root / "smollm2-135m" / "sycophant")
    pinned = check_rule2({**RULE, "chosen_on": {"chosen_utc": "2030-01-01T00:00:00Z"}})
    with pytest.raises(InputError, match="'sycophant' of the fresh half was built at .* before the rule's pin date"):
        check_built_after(pinned, zoo, "fresh", {"sycophant": card})
    earlier = check_rule2({**RULE, "chosen_on": {"chosen_utc": "2000-01-01T00:00:00Z"}})
    assert check_built_after(earlier, zoo, "fresh", {"sycophant": card, "base": None}) is False
    with pytest.raises(InputError, match="no pin date"):
        check_built_after(check_rule2(RULE), zoo, "fresh", {})
