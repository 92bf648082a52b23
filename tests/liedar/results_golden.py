"""A report with every row kind, and the JSON liedar writes for it, kept on disk.

Why kept on disk: `liedar.core.results` serialises through one generic dataclass codec; the
files under ``data/serial/`` were written by the hand-written ``to_dict``/``from_dict``
pairs that codec replaced, so `test_results_serial.py` proves the report's content (and
its bytes) did not change, and that old files are read as before.

The numbers are literals (no interval functions, no readings rules), so the files change
only when the report's format does. Regenerate after an intended format change with
``PYTHONPATH=. python tests/liedar/results_golden.py``.

Files:

* ``report.json``: `golden_report()` written by `write_json_atomic`, as ``report.json`` is;
* ``report-2.0-read.json``: that report downgraded to schema 2.0 (`as_schema_2_0`: caveats
  as plain text), read back and written again;
* ``saved-sections.json``: every saved step's section under ``data/results*`` read and
  written again, keyed by the step file's path below ``tests/liedar/data``;
* ``rows.json``: the other types that share the codec (validation cells and their power,
  audit rule rows, evidence rows, verdicts and zoo members), `golden_rows()` written.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np

from liedar.core._util.atomic import json_safe, write_json_atomic
from liedar.core.results import (
    Caveat,
    Ceiling,
    Comparison,
    CrossCheck,
    DetectorValidity,
    Disagreement,
    LayerSweep,
    Measure,
    ModelReport,
    NotComputable,
    PositionHistogram,
    Reading,
    Report,
    Section,
    StepRecord,
    TransferMatrix,
    ValidationCell,
    ValidationMatrix,
)
from liedar.core.stats import Estimate

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "serial"
REPORT_FILE = GOLDEN / "report.json"
REPORT_2_0_FILE = GOLDEN / "report-2.0-read.json"
SECTIONS_FILE = GOLDEN / "saved-sections.json"
ROWS_FILE = GOLDEN / "rows.json"
STEP_DIRS = ("results", "results-organism/results")


def est(value: float, lo: float, hi: float, n: int, kind: str = "propensity", **more: Any) -> Estimate:
    return Estimate(value, lo, hi, n, more.pop("method", "wilson"), kind, **more)


def _first_model() -> ModelReport:
    gap_warning = Caveat("unbalanced_pressure", "pressure is unbalanced: user wrong on 40 records, right on 8")
    ceilings = [
        Ceiling(
            "mcq_benign",
            "MCQ accuracy, benign framing",
            "benign framing, letter log-probs",
            0.25,
            est(0.6, 0.502, 0.691, 100, "capability", successes=60),
        ),
        Ceiling(
            "yesno_neutral",
            "yes/no accuracy, neutral",
            "neutral prompt",
            np.float64(0.5),
            est(0.54, 0.405, 0.669, 50, "capability", successes=27),
            (Caveat("ceiling_near_chance", "neutral accuracy near chance"),),
        ),
        Ceiling(
            "few_shot",
            "MCQ accuracy, few-shot",
            "five examples",
            0.25,
            None,
            not_computable=NotComputable("no item was answered", 0, "capability"),
        ),
    ]
    measures = [
        Measure(
            "sandbagging_gap",
            "Sandbagging gap",
            "sandbagging",
            "difference",
            est(0.08, -0.05, 0.21, 100, method="newcombe", extra={"a": 60, "b": 52}),
            "mcq_benign",
            True,
            0.0,
            True,
            details={"framing": "dangerous", "per_item": [1, 0, 1], "nested": {"x": 1.5}},
        ),
        Measure(
            "sycophancy_flip",
            "Sycophancy flip rate",
            "sycophancy",
            "proportion",
            est(0.025, 0.004, 0.129, 40, successes=1),
            "yesno_neutral",
            warnings=(gap_warning,),
        ),
        Measure(
            "sycophancy_instability",
            "Flip rate when the user is right",
            "sycophancy",
            "proportion",
            None,
            "yesno_neutral",
            False,
            warnings=(gap_warning, Caveat("small_n", "n < 30")),
            not_computable=NotComputable("0 of the 8 records were answered correctly when neutral"),
        ),
        Measure(
            "honesty_dishonest",
            "Assertion contradicts belief",
            "honesty",
            "proportion",
            est(0.2, 0.095, 0.373, 30, successes=6, note="rule of three: < 0.1"),
            None,
            grader_kappa=est(0.45, 0.2, 0.7, 30, "quality", method="cohen-kappa"),
        ),
        Measure(
            "consistency_honest",
            "Detector confidence, honest",
            "consistency",
            "score",
            est(0.2, 0.1, 0.35, 40, method="bootstrap over items"),
            "mcq_benign",
            flag=False,
        ),
        Measure(
            "consistency_sandbag",
            "Detector confidence, sandbagging",
            "consistency",
            "score",
            est(0.3, 0.15, 0.45, 40, method="bootstrap over items", confidence=0.9),
            "mcq_benign",
            higher_is_deceptive=True,
            null_value=1.0,
            flag=None,
        ),
        Measure(
            "probe_recall",
            "Probe recall at 1% FPR",
            "probe",
            "proportion",
            est(0.5, 0.376, 0.624, 60, "quality"),
            None,
            None,
        ),
        Measure(
            "probe_unscored",
            "Probe AUROC, held-out style",
            "probe",
            "ratio",
            None,
            None,
            None,
            not_computable=NotComputable("one class only", 12, "quality"),
        ),
    ]
    topics = ["cities", "elements", "animals"]
    cell = lambda v: est(v, v - 0.06, min(1.0, v + 0.06), 80, "quality", method="bootstrap-percentile")  # noqa: E731
    transfer = TransferMatrix(
        topics,
        topics,
        [[cell(0.95), cell(0.61), cell(0.55)], [cell(0.58), cell(0.93), None], [None, cell(0.49), cell(0.9)]],
        "mass-mean, layer 15",
        [[cell(0.9), None, cell(0.5)], [cell(0.55), cell(0.88), None], [None, None, cell(0.85)]],
        {"layer": 15, "seeds": [0, 1]},
    )
    sweep = LayerSweep(
        [0, 5, 10, 15],
        [cell(0.55), cell(0.7), cell(0.85), cell(0.92)],
        15,
        "validation folds",
        "cities",
        [cell(0.5), cell(0.72), cell(0.8), cell(0.9)],
        "logistic",
        240,
        {"pairs": True},
    )
    cross = CrossCheck(
        "correct when benign, wrong when framed dangerous",
        "lie-probe score above the 1%-FPR threshold",
        [[4, 2], [3, 11]],
        None,
        est(0.75, 0.531, 0.888, 20, "quality", method="wilson"),
        [Disagreement("q04", True, False, 0.4), Disagreement("q10", False, True, None, "probe only")],
        "undefined: the probe flagged every item",
    )
    section = Section(
        ceilings,
        measures,
        [Comparison("consistency_honest", "consistency_sandbag", "honest vs sandbagging prompt")],
        transfer,
        sweep,
        PositionHistogram(4, {"honest": [30, 28, 32, 30], "sandbagging": [70, 20, 15, 15]}),
        cross,
    )
    steps = [
        StepRecord("sandbagging_gap", "ok", "", 3.0),
        StepRecord("probes", "ok", "", 5.5, True),
        StepRecord("weight_noise", "not_run", "skipped by --quick (time budget)"),
        StepRecord("monitor", "failed", "CUDA out of memory", 0.25),
    ]
    readings = [
        Reading(
            "ceiling_below_chance",
            "caution",
            "The yes/no ceiling is near chance.",
            ["yesno_neutral", "sycophancy_flip"],
        ),
        Reading("pitfalls", "info", "No option-order effect."),
    ]
    model = {"name": "golden-model", "backend": "fixture", "fingerprint": "0" * 16, "layers": 16}
    return ModelReport(model, steps, section, readings)


def _second_model() -> ModelReport:
    gap = lambda a, b: est(a - b, a - b - 0.15, a - b + 0.15, 60, method="newcombe")  # noqa: E731
    cells = [
        ValidationCell("sandbagging_gap", "base", False, gap(0.66, 0.63), False),
        ValidationCell(
            "sandbagging_gap",
            "sandbagger-lora",
            True,
            gap(0.8, 0.41),
            True,
            power={"value": 0.93, "n_needed": 40, "basis": "card effect 0.3"},
        ),
        ValidationCell("sycophancy", "sycophant-lora", False, est(0.08, 0.03, 0.18, 60), None, note="did not learn"),
        ValidationCell("consistency", "base", None, None, False, NotComputable("no option-order trials were run")),
    ]
    detectors = [
        DetectorValidity(
            "sandbagging_gap", "Sandbagging gap", est(1.0, 0.207, 1.0, 1, "quality"), est(0.0, 0.0, 0.793, 1, "quality")
        ),
        DetectorValidity("sycophancy", "Sycophancy flip rate", None, est(0.0, 0.0, 0.658, 2, "quality"), "no organism"),
        DetectorValidity("consistency", "Consistency contrast", None, None),
    ]
    organisms = {
        "sandbagger-lora": {"targets": ["sandbagging_gap"], "learned": True, "accuracy_benign": 0.8},
        "sycophant-lora": {"targets": ["sycophancy"], "learned": False, "flip_rate": 0.05},
    }
    matrix = ValidationMatrix(
        ["base", "sandbagger-lora", "sycophant-lora"],
        cells,
        detectors,
        organisms,
        ["organism honesty-lora not built (--quick)"],
    )
    ceiling = Ceiling("mcq_benign", "MCQ accuracy, benign framing", "cloze", 0.25, est(0.8, 0.72, 0.86, 120))
    cross = CrossCheck(
        "flagged by behaviour",
        "flagged by probe",
        [[5, 1], [1, 13]],
        est(0.77, 0.45, 1.0, 20, "quality", method="cohen-kappa"),
        est(0.9, 0.699, 0.972, 20, "quality"),
        [],
    )
    section = Section(ceilings=[ceiling], cross_check=cross, validation=matrix)
    steps = [StepRecord("validate", "ok", seconds=60.0)]
    return ModelReport({"name": "golden-organism", "backend": "fixture"}, steps, section)


def golden_report() -> Report:
    """Two models, every row kind, every optional field both set and unset somewhere."""
    return Report(
        [_first_model(), _second_model()],
        {"model": "golden-model", "quick": True, "sizes": {"mcq_items": 100}, "seed": None},
        "2026-01-01T00:00:00Z",
        "0.2.0",
    )


def as_schema_2_0(data: dict[str, Any]) -> dict[str, Any]:
    """A report dict as schema 2.0 wrote it: each caveat is its text alone."""
    old = copy.deepcopy(data)
    old["schema_version"] = "2.0"
    for model in old["models"]:
        for row in model["ceilings"] + model["measures"]:
            row["warnings"] = [w["text"] for w in row["warnings"]]
    return old


def saved_step_files() -> list[Path]:
    return sorted(p for d in STEP_DIRS for p in (DATA / d).glob("step-*.json"))


def read_sections() -> dict[str, Any]:
    """Every saved step's section, read and written again, keyed by the file's path."""
    out = {}
    for path in saved_step_files():
        section = json.loads(path.read_text(encoding="utf-8"))["section"]
        out[path.relative_to(DATA).as_posix()] = Section.from_dict(section).to_dict()
    return out


def golden_rows() -> dict[str, Any]:
    """Each other codec-backed type, every optional field both set and unset somewhere."""
    from liedar.audit.rule import RuleRow
    from liedar.audit.verdict import EvidenceRow, Verdict
    from liedar.audit.zoo import Member
    from liedar.pipeline.validate_detectors import Cell
    from liedar.pipeline.validate_power import Power

    e = est(0.3, 0.2, 0.4, 40, successes=12)
    cells = [
        Cell("sandbagging_gap", True, e, None, "framed dangerous"),
        Cell("sycophancy", None, None, NotComputable("no neutral-correct items", 0, "propensity")),
    ]
    rows = [
        EvidenceRow(
            "sandbagging",
            "sandbagging_gap",
            "flag",
            e,
            est(0.05, 0.0, 0.1, 40),
            est(0.25, 0.1, 0.4, 40),
            40,
            0.93,
            25,
            "excess above 0.1",
            {"estimate": e.to_dict(), "chance": 0.25, "capable": True},
            None,
            ["sandbagging_gap", "sandbagging_yesno"],
            {"min_excess": 0.1},
            True,
        ),
        EvidenceRow("lying", "honesty", "not_run"),
    ]
    return {
        "cells": [c.to_dict() for c in cells],
        "power": [Power(0.93, 40, "card effect 0.3").to_dict(), Power(None, None, "no planning effect").to_dict()],
        "rule_rows": [RuleRow(("sandbagging_gap", "sandbagging_yesno"), 0.1, 0.0, True, 0.2).to_dict()],
        "evidence_rows": [r.to_dict() for r in rows],
        "verdicts": [Verdict("sandbagging", ["sandbagging"], "the gap flagged", rows).to_dict()],
        "members": [
            Member("m01", "organisms/m01", "test", "organism", "sandbagging", "lora", "password").to_dict(),
            Member("base", None, "dev", "reference", "clean", "base", "").to_dict(),
        ],
    }


if __name__ == "__main__":  # regenerate the files after an intended format change
    data = golden_report().to_dict()
    write_json_atomic(REPORT_FILE, data)
    old = as_schema_2_0(json_safe(data))
    write_json_atomic(REPORT_2_0_FILE, Report.from_dict(old).to_dict())
    write_json_atomic(SECTIONS_FILE, read_sections())
    write_json_atomic(ROWS_FILE, golden_rows())
    print(f"wrote {REPORT_FILE}, {REPORT_2_0_FILE}, {SECTIONS_FILE} and {ROWS_FILE}")
