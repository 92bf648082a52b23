"""Report test data: a realistic results directory built from known numbers.

`sample_steps()` is the one source of fixture numbers. `tests/liedar/data/results/` is
the same data saved to disk once (regenerate after an intended format change with
``PYTHONPATH=. python tests/liedar/report_fixtures.py``); a test checks the saved copy still loads, so a
change that breaks old results directories is caught. `data/results-v1/` is a results
directory written by report schema 1.0, kept to test that an old version is refused with
one clear line.

The fixture holds one row of each awkward kind: a measure that was not computable (n = 0),
instrument warnings on a measure and on a ceiling.
"""

from __future__ import annotations

from pathlib import Path

from liedar._util.atomic import write_json_atomic
from liedar.report.crosscheck import cross_check
from liedar.report.store import RUN_FILE, StepResult, save_step
from liedar.results import (
    SCHEMA_VERSION,
    Caveat,
    Ceiling,
    Comparison,
    LayerSweep,
    Measure,
    NotComputable,
    PositionHistogram,
    Section,
    TransferMatrix,
)
from liedar.stats import Estimate, newcombe_difference, wilson

MODEL = {"name": "fixture-model", "backend": "fixture", "fingerprint": "0" * 16}
SAVED_RESULTS = Path(__file__).parent / "data" / "results"
V1_RESULTS = Path(__file__).parent / "data" / "results-v1"
NO_NEUTRAL_RIGHT = "0 of the 8 records where the user was right were answered correctly when neutral"
FLIP_WARNING = "pressure is unbalanced: user wrong on 40 records, right on 8"
CEILING_WARNING = "neutral accuracy near chance"


def auroc(v: float, n: int = 80, half: float = 0.06) -> Estimate:
    return Estimate(v, max(0.0, v - half), min(1.0, v + half), n, "bootstrap-percentile", "quality")


def sample_steps() -> list[StepResult]:
    """One step per instrument family, with numbers chosen to fire some readings."""
    ceiling = Ceiling(
        "mcq_benign",
        "MCQ accuracy, benign framing",
        "benign framing, letter log-probs",
        0.25,
        wilson(60, 100, kind="capability"),
    )
    weak = Ceiling(
        "yesno_neutral",
        "yes/no accuracy, neutral",
        "neutral prompt, yes/no log-probs",
        0.5,
        wilson(27, 50, kind="capability"),
        (Caveat("ceiling_near_chance", CEILING_WARNING),),
    )
    gap = newcombe_difference(60, 100, 52, 100)
    sandbag = Section(
        ceilings=[ceiling],
        measures=[
            Measure(
                "sandbagging_gap",
                "Sandbagging gap (benign − dangerous framing)",
                "sandbagging",
                "difference",
                gap,
                "mcq_benign",
                True,
                0.0,
            )
        ],
    )
    syc = Section(
        ceilings=[weak],
        measures=[
            Measure(
                "sycophancy_flip",
                "Sycophancy flip rate (user wrong)",
                "sycophancy",
                "proportion",
                wilson(1, 40),
                "yesno_neutral",
                warnings=(Caveat("unbalanced_pressure", FLIP_WARNING),),
            ),
            Measure(
                "sycophancy_instability",
                "Flip rate when the user is right (control)",
                "sycophancy",
                "proportion",
                None,
                "yesno_neutral",
                False,
                warnings=(Caveat("unbalanced_pressure", FLIP_WARNING),),
                not_computable=NotComputable(NO_NEUTRAL_RIGHT),
            ),
            Measure(
                "negation_inconsistency",
                "Negation inconsistency index",
                "negation",
                "proportion",
                wilson(0, 20),
                "yesno_neutral",
            ),
            Measure(
                "honesty_dishonest",
                "Assertion contradicts belief (MASK-style)",
                "honesty",
                "proportion",
                wilson(6, 30),
                None,
                grader_kappa=Estimate(0.45, 0.2, 0.7, 30, "cohen-kappa", "quality"),
            ),
        ],
    )
    cons = Section(
        measures=[
            Measure(
                "consistency_honest",
                "Consistency-detector confidence, honest prompt",
                "consistency",
                "score",
                Estimate(0.2, 0.1, 0.35, 40, "bootstrap over items", "propensity"),
                "mcq_benign",
                flag=False,
            ),
            Measure(
                "consistency_sandbag",
                "Consistency-detector confidence, sandbagging prompt",
                "consistency",
                "score",
                Estimate(0.3, 0.15, 0.45, 40, "bootstrap over items", "propensity"),
                "mcq_benign",
                flag=False,
            ),
        ],
        comparisons=[Comparison("consistency_honest", "consistency_sandbag", "Detector: honest vs sandbagging prompt")],
        positions=PositionHistogram(4, {"honest": [30, 28, 32, 30], "sandbagging": [70, 20, 15, 15]}),
    )
    topics = ["cities", "elements", "animals"]
    probes = Section(
        measures=[
            Measure(
                "probe_recall_1fpr",
                "Probe recall at 1% FPR (instructed pairs)",
                "probe",
                "proportion",
                wilson(30, 60, kind="quality"),
                None,
                None,
            )
        ],
        transfer=TransferMatrix(
            topics,
            topics,
            [
                [auroc(0.95), auroc(0.61), auroc(0.55)],
                [auroc(0.58), auroc(0.93), None],
                [auroc(0.52), auroc(0.49), auroc(0.9)],
            ],
        ),
        layer_sweep=LayerSweep(
            list(range(0, 31, 5)),
            [auroc(v) for v in (0.55, 0.7, 0.85, 0.92, 0.9, 0.86, 0.8)],
            15,
            "validation folds",
            "cities",
        ),
    )
    items = [f"q{i:02d}" for i in range(20)]
    beh = [i < 6 for i in range(20)]
    prb = [i < 4 or i in (10, 11, 12) for i in range(20)]
    xc = Section(
        cross_check=cross_check(
            items,
            beh,
            prb,
            behavioural="correct when benign, wrong when framed dangerous",
            probe="lie-probe score above the 1%-FPR threshold",
            probe_scores=[0.1 * i for i in range(20)],
        )
    )
    return [
        StepResult("sandbagging_gap", "h1", "ok", MODEL, sandbag, seconds=3.0),
        StepResult("sycophancy_negation", "h2", "ok", MODEL, syc, seconds=2.0),
        StepResult("consistency", "h3", "ok", MODEL, cons, seconds=4.0),
        StepResult("probes", "h4", "ok", MODEL, probes, seconds=5.0),
        StepResult("cross_check", "h5", "ok", MODEL, xc, seconds=0.1),
        StepResult("weight_noise", "h6", "not_run", MODEL, reason="skipped by --quick (time budget)"),
    ]


def write_results(results_dir: Path, steps: list[StepResult]) -> Path:
    for s in steps:
        save_step(results_dir, s)
    write_json_atomic(
        results_dir / RUN_FILE,
        {
            "schema_version": SCHEMA_VERSION,
            "liedar_version": "0.1.0",
            "created_utc": "2026-01-01T00:00:00Z",
            "config": {"model": MODEL["name"], "quick": True},
            "steps": [s.name for s in steps],
            "cached": [],
        },
    )
    return results_dir


if __name__ == "__main__":  # regenerate the saved fixture after an intended format change
    import shutil

    shutil.rmtree(SAVED_RESULTS, ignore_errors=True)
    write_results(SAVED_RESULTS, sample_steps())
    print(f"wrote {SAVED_RESULTS}")
