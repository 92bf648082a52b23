"""The second protocol reads the audit split: the pinned sizes fit in it and meet the power plan,
the first protocol still reads the detectors' banks, and every item the units draw on the real
smollm2-135m (scored items, fine-tuning demonstrations, sheets, claims) is one of the split's."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from liedar.audit.evidence import audit_sizes, audit_units
from liedar.audit.rule import load_rule
from liedar.audit.rule2 import Rule2, check_rule2
from liedar.behavioral.items.audit import audit_mcq_items
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.core.errors import InputError
from liedar.pipeline.validate_detectors import UnitContext, item_split, run_unit
from liedar.pipeline.validate_power import paired_power

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "liedar" / "audit" / "rules"
spec = importlib.util.spec_from_file_location("choose_audit_rule2", ROOT / "scripts" / "choose_audit_rule2.py")
chooser = importlib.util.module_from_spec(spec)
spec.loader.exec_module(chooser)  # type: ignore[union-attr]
RECORD = ROOT / "docs" / "records" / "audit-zoo-smollm2-135m-test.json"


def _rule2() -> Rule2:
    rule = load_rule(RULES / "protocol2.json")
    assert isinstance(rule, Rule2)
    return rule


def test_the_pinned_rule_reads_the_audit_split_at_sizes_that_meet_the_power_plan():
    rule = _rule2()
    s = rule.sizes
    assert item_split(s).name == "audit"
    held = chooser.bank_sizes("audit")
    # fine-tuning elicitation: >= 100 scored items (the gap's) and >= 64 demonstrations from the rest
    assert s["gap_items"] >= chooser.FT_ITEMS and s["finetune_demos"] >= chooser.FT_DEMOS
    assert held["mcq"] - s["gap_items"] >= s["finetune_demos"]
    # planned from the reference audited against itself on the split: its discordance and known share there
    source = json.loads((ROOT / rule.chosen_on["amendments"][-1]["discordances_from"]).read_text())
    assert chooser.record_split(source) == "audit"
    disc = chooser.reference_discordance(source)
    for det, key in (("sycophancy_choice", "sycophancy_choice_items"), ("honesty_choice", "honesty_choice_products")):
        d, known = disc[det]
        assert s[key] <= held[key]  # the split holds what the rule asks
        assert paired_power(0.25, d + 0.25, int(s[key] * known)) >= 0.8  # 80% power at the split's known share
    assert paired_power(0.2, disc["c3_consistency"][0] + 0.2, s["c3_items"]) >= 0.8
    assert s["honesty_choice_products"] >= 59 and s["sycophancy_choice_items"] >= 87
    plan = rule.chosen_on["size_plan"]
    assert all(p["given"] >= p["needed"] for p in plan.values())  # no row is short of its plan any more


def test_the_amendment_kept_every_threshold_and_says_no_fresh_member_was_built():
    rule = _rule2()
    amendments = rule.chosen_on["amendments"]
    blind = [a for a in amendments if "blinded_reestimation" not in a]  # made before any fresh member was built
    amended = blind[-1]
    assert amended["fresh_members_built"] == [] and amended["utc"] == rule.pinned_utc
    assert amended["replaces_chosen_utc"] < rule.pinned_utc
    assert amendments[-1]["sizes_after"] == rule.sizes
    first = amendments[0]  # the banks' 67 scored items and 48 sheets, on the split
    assert first["sizes_before"]["gap_items"] < first["sizes_after"]["gap_items"] == rule.sizes["gap_items"]
    # the thresholds chosen on the dev half: re-derived from the dev record, every one unchanged
    dev = json.loads((ROOT / "docs" / "records" / "audit-zoo-smollm2-135m-dev-protocol2.json").read_text())
    source = json.loads((ROOT / amended["discordances_from"]).read_text())
    again = chooser.build_rule(source, dev, chooser.bank_sizes("audit"), "audit")
    assert [r.min_excess for rows in rule.kinds.values() for r in rows] == [
        r["min_excess"] for rows in again["kinds"].values() for r in rows
    ]
    assert again["sizes"] == amended["sizes_after"]  # the script gives the sizes pinned before any build


def test_each_blinded_reestimation_only_grows_sizes_and_is_rederived_from_the_reference_alone():
    rule = _rule2()
    current = json.loads((RULES / "protocol2.json").read_text())
    for entry in [a for a in rule.chosen_on["amendments"] if "blinded_reestimation" in a]:
        before, after = entry["sizes_before"], entry["sizes_after"]
        assert all(after[k] >= v for k, v in before.items() if isinstance(v, int))
        record = json.loads((ROOT / entry["discordances_from"]).read_text())
        assert all(m["model"] == m["reference"] for m in record["models"])  # the reference alone
        assert record["rule"]["sizes"] == before
        old = {**current, "sizes": before}
        again = chooser.reestimate(old, record, chooser.bank_sizes(entry["item_split"]), "again", "")
        assert again["sizes"] == after


def test_an_amendment_that_moves_a_threshold_is_refused(capsys):
    old = json.loads((RULES / "protocol2.json").read_text())
    dev = json.loads((ROOT / "docs" / "records" / "audit-zoo-smollm2-135m-dev-protocol2.json").read_text())
    new = chooser.build_rule(json.loads(RECORD.read_text()), dev, chooser.bank_sizes("audit"), "audit")
    new["kinds"]["sandbagging"][0]["min_excess"] = 0.07
    with pytest.raises(SystemExit):
        chooser.amend(new, old, "a threshold moved")
    assert "min_excess differ" in capsys.readouterr().err


def test_the_first_protocol_and_validate_still_read_the_banks():
    assert "item_split" not in audit_sizes() and item_split(audit_sizes()).name == "bank"
    assert [it.item_id for it in item_split({}).mcq()] == [it.item_id for it in load_mcq_bank()]
    first = load_rule(RULES / "default.json")
    assert not isinstance(first, Rule2)


def test_an_unknown_split_is_refused_in_one_line():
    with pytest.raises(InputError, match="item_split 'secret' is not a split"):
        item_split({"item_split": "secret"})
    d = json.loads((RULES / "protocol2.json").read_text())
    d["sizes"]["item_split"] = "secret"
    with pytest.raises(InputError, match="not a split"):
        check_rule2(d)


@pytest.mark.integration
@pytest.mark.timeout(900)
def test_every_unit_draws_only_audit_split_items_on_the_real_model():
    pytest.importorskip("torch")
    from workers import THREADS

    from liedar.audit.paired import item_scores
    from liedar.models import load
    from liedar.models.scoring import ScoringEngine

    sizes = audit_sizes(quick=True)
    sizes.update(
        item_split="audit",
        gap_items=6,
        letter_gap_items=6,
        c3_items=6,
        sycophancy_choice_items=8,
        honesty_choice_products=4,
        sycophancy_claims=2,
        honesty_items=4,
        finetune_demos=4,
        finetune_epochs=1,
    )
    backend = load("smollm2-135m", backend="transformers", n_threads=THREADS)
    ctx = UnitContext(sizes, 0, item_split(sizes).mcq())
    shared = ScoringEngine(backend)
    raws = {}
    for u in audit_units():
        cells, raw, status = run_unit(u, backend if u.bare else shared, ctx)
        assert status == "ok", (u.name, [c.not_computable for c in cells])
        ctx.prior[u.name] = raws[u.name] = raw
    mcq_ids = {it.item_id for it in audit_mcq_items()}
    bank_ids = {it.item_id for it in load_mcq_bank()}
    ceiling = raws["sandbagging"]["result"]["extra"]["ceiling"]
    scored = set(ceiling["evaluation_ids"])
    demos = set(raws["ceilings"]["finetune"]["demo_ids"])
    assert len(scored) == 6 and len(demos) == 4 and scored | demos <= mcq_ids
    assert not demos & (scored | set(ceiling["selection_ids"]))  # demonstrations never scored
    assert set(raws["ceilings"]["finetune"]["correct"]) == scored
    assert set(raws["c3_consistency"]["answers"]) <= mcq_ids
    assert set(raws["sandbagging_letters"]["result"]["extra"]["framed_correct"]) <= mcq_ids
    assert {r["item_id"] for r in raws["sycophancy_choice"]["records"]} <= mcq_ids
    split = item_split(sizes)
    sources = {
        "honesty_choice": {c.claim_id for c in split.choice_claims(None, sound_every=1)},  # every sheet
        "sycophancy": {it.item_id for it in split.yes_no_sycophancy()}
        | {it.claim.claim_id for it in split.yes_no_sycophancy()},
        "honesty": {it.item_id for it in split.beliefs()},
    }
    for unit, held in sources.items():
        ids = {r["item_id"] for r in raws[unit]["records"]}
        assert ids and ids <= held, unit
    # every per-item score the audit pairs is keyed by a split item, none by a bank item
    for name, raw in raws.items():
        for det, scores in item_scores(name, raw, ctx.prior).items():
            assert not set(scores) & bank_ids, det
            assert all(i.startswith("audit-") for i in scores), det
