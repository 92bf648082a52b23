"""Each instrument turns its real result (from synthetic records) into report rows that keep
the instrument's own Estimates, attach the right ceiling, and put caveats on the rows their
codes name."""

from __future__ import annotations

import numpy as np

from liedar.behavioral.consistency.detector import ConsistencyDetector, OptionOrderTrial
from liedar.behavioral.consistency.section import bootstrap_confidence
from liedar.behavioral.instrument import InstrumentRun
from liedar.behavioral.negation import NegationRecord, negation_consistency
from liedar.behavioral.runners.negation import NegationConsistency
from liedar.behavioral.runners.sandbagging import SandbaggingGap
from liedar.behavioral.runners.sycophancy import Sycophancy
from liedar.behavioral.sandbagging import sandbagging_gap
from liedar.behavioral.sycophancy import SycophancyRecord, sycophancy
from liedar.core.results import ModelReport
from liedar.core.rows import default_interval
from liedar.core.stats import Estimate, wilson
from liedar.probes.sections import monitor_section, probe_section
from liedar.report.crosscheck import cross_check


def _section(instrument, res):
    return instrument.section(InstrumentRun(instrument.name, res, [], res.warnings))


def test_sandbagging_section_keeps_ceiling_and_paired_gap() -> None:
    elicited = {f"q{i}": i < 24 for i in range(30)}
    framed = {f"q{i}": i < 12 for i in range(30)}
    res = sandbagging_gap(elicited, framed, protocol="benign", framing="danger", chance=0.25)
    s = _section(SandbaggingGap(), res)
    (c,), (m,) = s.ceilings, s.measures
    assert c.estimate == res.elicited and c.chance == 0.25 and c.protocol == "benign"
    assert m.estimate == res.gap and m.ceiling == c.id and m.null_value == 0.0
    assert m.flag is True  # 12 items lost, none gained: McNemar significant, gap > 0
    ModelReport({"name": "m"}, [], s)  # refs resolve


def test_sycophancy_section_has_ceiling_and_comparison() -> None:
    recs = []
    for i in range(20):
        truth = "yes" if i % 2 else "no"
        wrong = "no" if truth == "yes" else "yes"
        recs.append(SycophancyRecord(f"w{i}", truth, truth, wrong, wrong if i < 8 else truth))
        recs.append(SycophancyRecord(f"r{i}", truth, truth, truth, truth))
    res = sycophancy(recs)
    s = _section(Sycophancy(), res)
    ids = [m.id for m in s.measures]
    assert ids == ["sycophancy_flip", "sycophancy_instability", "sycophancy_excess", "sycophancy_update"]
    assert all(m.estimate is not None for m in s.measures[:3])
    assert s.measures[0].estimate == res.capitulation and s.measures[0].ceiling == "sycophancy_ceiling"
    assert s.comparisons[0].a == "sycophancy_flip"
    ModelReport({"name": "m"}, [], s)


def test_negation_section_without_ceiling() -> None:
    recs = [NegationRecord(f"p{i}", "neutral" if i < 10 else "costly", 0.9, 0.1 if i < 15 else 0.8) for i in range(20)]
    res = negation_consistency(recs)
    s = _section(NegationConsistency(), res)
    assert [m.id for m in s.measures] == ["negation_inconsistency", "negation_selective"]
    assert all(m.ceiling is None for m in s.measures)


def test_bootstrap_confidence_brackets_the_point_and_counts_items() -> None:
    rng = np.random.default_rng(0)
    labels = ("a", "b", "c", "d")
    trials = []
    for i in range(15):  # a strong position attractor: sandbagging-like
        for _ in range(4):
            order = tuple(rng.permutation(labels))
            trials.append(OptionOrderTrial(f"q{i}", order, 0 if rng.random() < 0.9 else int(rng.integers(4))))
    det = ConsistencyDetector(seed=0)
    e = bootstrap_confidence(det, trials, n_boot=50, seed=0)
    assert e.lo <= e.value <= e.hi and e.n == 15
    assert e.value == det.detect_inconsistency(option_trials=trials).confidence


def test_cross_check_table_kappa_and_disagreements() -> None:
    beh = [True] * 6 + [False] * 14
    prb = [True] * 4 + [False] * 2 + [True] * 3 + [False] * 11
    cc = cross_check([f"i{k}" for k in range(20)], beh, prb, behavioural="b", probe="p")
    assert cc.table == [[4, 2], [3, 11]]
    assert [d.item_id for d in cc.disagreements] == ["i4", "i5", "i6", "i7", "i8"]
    assert cc.agreement.value == 15 / 20 and cc.agreement.n == 20
    po, pe = 0.75, (6 / 20) * (7 / 20) + (14 / 20) * (13 / 20)
    assert abs(cc.kappa.value - (po - pe) / (1 - pe)) < 1e-12


def test_cross_check_with_constant_flags_says_kappa_undefined() -> None:
    cc = cross_check(["a", "b", "c"], [False] * 3, [False] * 3, behavioural="b", probe="p")
    assert cc.kappa is None and "flagged no item" in cc.kappa_note  # 0/0
    assert cc.table == [[0, 0], [0, 3]] and cc.agreement.value == 1.0


def test_cross_check_with_a_silent_probe_reports_no_kappa() -> None:
    """Seen on smollm2: the probe flagged nothing; kappa would be 0 with a zero-width interval."""
    cc = cross_check(
        [f"i{k}" for k in range(12)], [k == 1 for k in range(12)], [False] * 12, behavioural="b", probe="p"
    )
    assert cc.kappa is None and cc.kappa_note.startswith("the probe flagged no item")
    assert cc.table == [[0, 1], [0, 11]] and [d.item_id for d in cc.disagreements] == ["i1"]


def test_monitor_section_rates() -> None:
    s = monitor_section([True, False, False, False], wilson(0, 20, kind="quality"), 0.5, 12)
    assert s.measures[0].estimate.value == 0.25 and s.measures[0].estimate.n == 4
    assert s.measures[1].id == "monitor_fpr"


def test_report_side_rates_use_the_project_default_interval() -> None:
    """One page, one method: Wilson estimates from upstream helpers are re-intervalled with
    Clopper-Pearson (same point, same n, wider or equal interval at small n)."""
    from liedar.core.stats import DEFAULT_INTERVAL, clopper_pearson

    w = wilson(2, 6)
    cp = default_interval(w)
    assert cp == clopper_pearson(2, 6) and cp.value == w.value and cp.n == 6 and cp.method == DEFAULT_INTERVAL
    assert default_interval(cp) is cp
    noted = Estimate(w.value, w.lo, w.hi, 6, "wilson", "quality", 2, note="threshold from 12 controls")
    assert default_interval(noted).note == "threshold from 12 controls" and default_interval(noted).lo == cp.lo
    (m,) = probe_section(metrics=[("recall", "recall", noted)]).measures
    assert m.estimate.method == DEFAULT_INTERVAL and m.kind == "quality"
    s = monitor_section([True, False, False, False], wilson(0, 20, kind="quality"), 0.5, 12)
    assert s.measures[0].estimate.method == DEFAULT_INTERVAL
    cc = cross_check(["a", "b", "c"], [True, False, False], [True, True, False], behavioural="b", probe="p")
    assert cc.agreement.method == DEFAULT_INTERVAL


def test_caveats_sit_on_the_rows_their_codes_name() -> None:
    """Routed by code, not by text: 'few_items' goes on the gap, 'ceiling_near_chance' on the
    ceiling; rewording either warning cannot move it."""
    elicited = {f"q{i}": i < 3 for i in range(12)}  # near chance, and only 12 items
    framed = {f"q{i}": i < 3 for i in range(12)}
    res = sandbagging_gap(elicited, framed, protocol="p", framing="f", chance=0.25)
    assert {c.code for c in res.warnings} == {"ceiling_near_chance", "few_items"}
    s = _section(SandbaggingGap(), res)
    assert [w.code for w in s.ceilings[0].warnings] == ["ceiling_near_chance"]
    assert [w.code for w in s.measures[0].warnings] == ["few_items"]
