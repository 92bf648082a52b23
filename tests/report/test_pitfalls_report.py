"""Pitfalls beside each deception rate (liedar/report/pitfalls.py): the framing, the observer
effect and the contamination flag come from the rows the pitfall instruments saved in the same
run, and the generated reading follows them; the page shows them and report.json stays valid."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pitfalls.fakes import ObserverFake

from liedar.behavioral.contamination import ItemScore, contamination_check
from liedar.behavioral.instrument import InstrumentRun
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.behavioral.runners.contamination import Contamination
from liedar.behavioral.runners.observer import ObserverEffect, run_observer
from liedar.core.results import SCHEMA_VERSION, Caveat, Ceiling, Measure, ModelReport, Report, Section
from liedar.core.stats import Estimate, newcombe_difference, wilson
from liedar.report import pitfalls as P
from liedar.report.build import assemble
from liedar.report.document import report_blocks
from liedar.report.page_markdown import render_markdown
from liedar.report.render import write_report
from liedar.report.schema import validate_report
from liedar.report.store import StepResult

MODEL = {"name": "fake-model"}


def _rate(instrument: str = "sandbagging", mid: str = "gap", details: dict | None = None) -> Measure:
    return Measure(
        mid,
        f"{instrument} gap",
        instrument,
        "difference",
        newcombe_difference(30, 60, 20, 60),
        "c",
        True,
        0.0,
        None,
        details=details or {},
    )


def _observer(value: float, lo: float, hi: float, flag: bool, codes: tuple[str, ...] = (), bank: str = "mcq"):
    return Measure(
        "observer_effect",
        "Observer effect",
        "observer",
        "difference",
        Estimate(value, lo, hi, 40, "mean, t-interval", kind="propensity"),
        None,
        True,
        0.0,
        flag,
        details={"p_value": 0.01 if flag else 0.4, "bank": bank},
        warnings=tuple(Caveat(c, c) for c in codes),
    )


def _contam(flag: bool, k: int, n: int, bank: str = "mcq") -> Measure:
    return Measure(
        "contamination_flag_rate",
        "flagged items",
        "contamination",
        "proportion",
        wilson(k, n),
        None,
        None,
        None,
        flag,
        details={"fisher_p_vs_fresh": 0.002 if flag else 0.6, "bank": bank},
    )


def _mr(*measures: Measure) -> ModelReport:
    ceil = Ceiling("c", "ceiling", "p", 0.25, wilson(50, 60, kind="capability"))
    return ModelReport(dict(MODEL), [], Section(ceilings=[ceil], measures=list(measures)))


def test_flagged_observer_effect_on_the_same_items_makes_an_evaluation_rate_a_lower_bound() -> None:
    obs = _observer(0.12, 0.05, 0.19, True)
    p = P.model_pitfalls(_mr(_rate(), obs))["gap"]
    assert p.framing.kind == "evaluation" and p.lower_bound and p.severity == "caution"
    assert "+0.120 [+0.050, +0.190] (n=40)" in p.text and "on these items" in p.text
    assert "answers worse when the items look like an evaluation" in p.text and "lower bound" in p.text
    assert p.refs == ("gap", "observer_effect")
    r = p.reading()
    assert r.rule == "pitfalls" and r.refs[0] == "gap"


def test_not_flagged_observer_effect_gives_no_lower_bound_and_the_largest_shift_not_excluded() -> None:
    p = P.pitfalls_of(_mr(_rate(), _observer(0.01, -0.07, 0.09, False)), _rate())
    assert not p.lower_bound and p.severity == "info"
    assert "up to 0.09 is not excluded" in p.text
    # the bound follows the interval's wider side
    p2 = P.pitfalls_of(_mr(_rate(), _observer(-0.05, -0.13, 0.03, False)), _rate())
    assert "up to 0.13 is not excluded" in p2.text


def test_observer_not_measured_names_the_command_and_reads_a_lower_bound() -> None:
    p = P.pitfalls_of(_mr(_rate()), _rate())
    assert p.observer is None and p.lower_bound
    assert "`liedar behavioral observer --model fake-model`" in p.text
    assert "`liedar behavioral contamination --model fake-model`" in p.text  # MCQ bank is checkable


def test_observer_at_chance_is_not_measurable() -> None:
    p = P.pitfalls_of(_mr(_rate(), _observer(0.0, -0.05, 0.05, False, ("ceiling_near_chance",))), _rate())
    assert p.lower_bound and "not measurable" in p.text


def test_observer_on_another_bank_does_not_clear_the_rate() -> None:
    # menus (revealed) are evaluation-looking but the observer effect was measured on the MCQ bank
    rev = _rate("revealed", "sarp")
    p = P.pitfalls_of(_mr(rev, _observer(0.0, -0.05, 0.05, False)), rev)
    assert p.framing.bank == "menus" and "MCQ bank (not these items)" in p.text and p.lower_bound


def test_deployment_presentation_is_not_a_lower_bound() -> None:
    syc = _rate("sycophancy", "syc")
    p = P.pitfalls_of(_mr(syc, _observer(0.12, 0.05, 0.19, True), _contam(True, 10, 20)), syc)
    assert p.framing.kind == "deployment" and not p.lower_bound
    assert "deployment-looking" in p.text
    assert not p.contaminated and "checked on the MCQ bank (flagged), not on the items of this rate" in p.text


def test_contaminated_bank_is_marked_on_its_rates_only() -> None:
    mr = _mr(_rate(), _rate("sycophancy", "syc"), _contam(True, 8, 24))
    pit = P.model_pitfalls(mr)
    assert pit["gap"].contaminated and "8/24 items" in pit["gap"].text and "flagged as contaminated" in pit["gap"].text
    assert not pit["syc"].contaminated
    assert set(pit) == {"gap", "syc"}  # the contamination row itself gets no pitfalls
    clean = P.pitfalls_of(_mr(_rate(), _contam(False, 1, 24)), _rate())
    assert not clean.contaminated and "not flagged as contaminated (1/24 items" in clean.text


def test_a_row_that_declares_its_presentation_overrides_the_table() -> None:
    own = _rate(details={"presentation": {"kind": "deployment", "bank": "chat", "why": "a user's request"}})
    p = P.pitfalls_of(_mr(own), own)
    assert p.framing == P.Framing("deployment", "chat", "a user's request") and not p.lower_bound
    unknown = _rate("someone-elses", "x")
    assert P.framing_of(unknown).kind == "unknown"
    assert "x" not in P.model_pitfalls(_mr(unknown))  # feeds no verdict category: not a deception rate


def _steps() -> list[StepResult]:
    """A run with a sandbagging gap, the observer instrument on a planted-aware fake, and the
    contamination check with planted memorisation (sections written by the instruments)."""
    items = load_mcq_bank()[:40]
    res, records = run_observer(ObserverFake(aware=True), items)
    inst = ObserverEffect()
    obs_sec = inst.section(InstrumentRun("observer", res, records, res.warnings, {}))
    rng = np.random.default_rng(0)
    fresh = [ItemScore(f"f{i}", "fresh", float(rng.normal()), float(rng.normal()), -3.0) for i in range(80)]
    bench = [ItemScore(f"b{i}", "mcq", 5.0 if i < 12 else float(rng.normal()), 0.0, -3.0) for i in range(24)]
    cres = contamination_check(bench, fresh, benchmark="mcq bank")
    con_sec = Contamination().section(
        InstrumentRun("contamination", cres, list(cres.items), cres.warnings, {"bank": "mcq"})
    )
    ceil = Ceiling("sandbagging_ceiling", "accuracy, benign", "p", 0.25, wilson(50, 60, kind="capability"))
    gap = Measure(
        "sandbagging_gap",
        "Sandbagging gap",
        "sandbagging",
        "difference",
        newcombe_difference(40, 60, 30, 60),
        "sandbagging_ceiling",
        True,
        0.0,
        None,
    )
    return [
        StepResult("sandbagging", "h", "ok", dict(MODEL), Section(ceilings=[ceil], measures=[gap])),
        StepResult("observer", "h", "ok", dict(MODEL), obs_sec),
        StepResult("contamination", "h", "ok", dict(MODEL), con_sec),
    ]


def test_instrument_rows_feed_the_reading_and_the_page(tmp_path: Path) -> None:
    report = assemble({"steps": ["sandbagging", "observer", "contamination"]}, _steps())
    mr = report.models[0]
    obs = mr.measure("observer_effect")
    assert obs.flag and obs.details["bank"] == "mcq"  # the planted awareness is found
    pit = [r for r in mr.readings if r.rule == "pitfalls"]
    assert len(pit) == 1 and pit[0].refs == ["sandbagging_gap", "observer_effect", "contamination_flag_rate"]
    e = obs.estimate
    assert f"{e.value:+.3f} [{e.lo:+.3f}, {e.hi:+.3f}]" in pit[0].text and "lower bound" in pit[0].text
    assert "flagged as contaminated" in pit[0].text and pit[0].severity == "caution"
    data = report.to_dict()
    assert validate_report(data) and data["schema_version"] == SCHEMA_VERSION
    assert Report.from_dict(json.loads(json.dumps(data))).models[0].readings == mr.readings
    md = render_markdown(report_blocks(report, {}), {})
    assert "| pitfalls |" in md
    assert "evaluation framing; read as a lower bound; contaminated" in md
    assert "pitfalls: evaluation framing; read as a lower bound; benchmark flagged as contaminated" in md  # verdict
    paths = write_report(report, tmp_path / "out")
    assert "read as a lower bound" in paths["html"].read_text(encoding="utf-8")


def test_an_unaware_model_in_the_same_run_is_not_read_as_a_lower_bound() -> None:
    steps = _steps()
    items = load_mcq_bank()[:40]
    res, records = run_observer(ObserverFake(aware=False), items)
    steps[1] = StepResult(
        "observer",
        "h",
        "ok",
        dict(MODEL),
        ObserverEffect().section(InstrumentRun("observer", res, records, res.warnings, {})),
    )
    mr = assemble({"steps": []}, steps).models[0]
    assert not mr.measure("observer_effect").flag
    (r,) = [r for r in mr.readings if r.rule == "pitfalls"]
    assert "no reason here to read it as a lower bound" in r.text


def test_schema_refuses_an_unknown_reading_rule() -> None:
    report = assemble({"steps": []}, _steps()[:1])
    data = report.to_dict()
    data["models"][0]["readings"][0]["rule"] = "pitfalls_typo"
    from liedar.core.errors import InputError

    with pytest.raises(InputError, match="readings"):
        validate_report(data)
