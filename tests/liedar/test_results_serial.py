"""The report's JSON is the same, byte for byte, as the files kept in ``data/serial/``, and
every results type survives a trip through JSON.

Why both: the golden files (see `results_golden.py`) pin the exact text liedar writes and
reads, old schema 2.0 files and saved step results included; the property test covers the
shapes no fixture holds (empty lists, unset optionals, unicode, nested details).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from results_golden import (
    REPORT_2_0_FILE,
    REPORT_FILE,
    ROWS_FILE,
    SECTIONS_FILE,
    as_schema_2_0,
    golden_report,
    golden_rows,
    read_sections,
)

from liedar.core._util.atomic import json_safe, write_json_atomic
from liedar.core.results import (
    Caveat,
    Ceiling,
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


def _written(tmp_path: Path, data: Any) -> bytes:
    """The bytes liedar writes for ``data`` (report.json and step files go through this)."""
    path = tmp_path / "out.json"
    write_json_atomic(path, data)
    return path.read_bytes()


def _sorted(data: Any) -> str:
    return json.dumps(json_safe(data), sort_keys=True)


def test_report_is_written_byte_for_byte_as_before(tmp_path: Path) -> None:
    data = golden_report().to_dict()
    assert _written(tmp_path, data) == REPORT_FILE.read_bytes()
    assert _sorted(data) == _sorted(json.loads(REPORT_FILE.read_text(encoding="utf-8")))


def test_report_file_reads_back_to_the_same_json(tmp_path: Path) -> None:
    d = json.loads(REPORT_FILE.read_text(encoding="utf-8"))
    again = Report.from_dict(d).to_dict()
    assert again == d
    assert _written(tmp_path, again) == REPORT_FILE.read_bytes()


def test_schema_2_0_report_is_read_as_before(tmp_path: Path) -> None:
    old = as_schema_2_0(json.loads(REPORT_FILE.read_text(encoding="utf-8")))
    report = Report.from_dict(old)
    assert {w.code for mr in report.models for m in mr.section.measures for w in m.warnings} == {"unclassified"}
    assert _written(tmp_path, report.to_dict()) == REPORT_2_0_FILE.read_bytes()


def test_saved_step_sections_are_read_as_before(tmp_path: Path) -> None:
    sections = read_sections()
    assert len(sections) >= 10
    assert _written(tmp_path, sections) == SECTIONS_FILE.read_bytes()


def test_other_rows_are_written_byte_for_byte_as_before(tmp_path: Path) -> None:
    from liedar.pipeline.validate_detectors import Cell

    assert _written(tmp_path, golden_rows()) == ROWS_FILE.read_bytes()
    saved = json.loads(ROWS_FILE.read_text(encoding="utf-8"))
    assert [Cell.from_dict(c).to_dict() for c in saved["cells"]] == saved["cells"]


# ---- every type through JSON --------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
WORD = st.text("abcxyz_é→ ", min_size=1, max_size=8).filter(str.strip)
FLOAT = st.floats(-1e6, 1e6, allow_nan=False)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | FLOAT | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
DETAILS = st.dictionaries(TEXT, JSON, max_size=3)
KIND = st.sampled_from(["capability", "propensity", "quality"])


@st.composite
def estimates(draw: st.DrawFn) -> Estimate:
    lo, value, hi = sorted(draw(st.tuples(FLOAT, FLOAT, FLOAT)))
    return Estimate(
        value,
        lo,
        hi,
        draw(st.integers(1, 10_000)),
        draw(WORD),
        draw(KIND),
        draw(st.none() | st.integers(0, 100)),
        draw(st.floats(0.5, 0.999)),
        draw(TEXT),
        draw(DETAILS),
    )


CAVEATS = st.lists(st.builds(Caveat, WORD, WORD), max_size=2).map(tuple)
NOT_COMPUTABLE = st.builds(NotComputable, WORD, st.integers(0, 50), KIND)


@st.composite
def value_or_reason(draw: st.DrawFn) -> tuple[Any, Any]:
    return (draw(estimates()), None) if draw(st.booleans()) else (None, draw(NOT_COMPUTABLE))


@st.composite
def ceilings(draw: st.DrawFn) -> Ceiling:
    e, nc = draw(value_or_reason())
    return Ceiling(draw(WORD), draw(TEXT), draw(TEXT), draw(FLOAT), e, draw(CAVEATS), nc)


@st.composite
def measures(draw: st.DrawFn) -> Measure:
    e, nc = draw(value_or_reason())
    return Measure(
        draw(WORD),
        draw(TEXT),
        draw(WORD),
        draw(st.sampled_from(["proportion", "difference", "ratio", "score"])),
        e,
        None,
        draw(st.none() | st.booleans()),
        draw(st.none() | FLOAT),
        draw(st.none() | st.booleans()),
        draw(st.none() | estimates()),
        draw(DETAILS),
        draw(CAVEATS),
        nc,
    )


@st.composite
def grids(draw: st.DrawFn, rows: int, cols: int) -> list[list[Any]]:
    return [[draw(st.none() | estimates()) for _ in range(cols)] for _ in range(rows)]


@st.composite
def transfers(draw: st.DrawFn) -> TransferMatrix:
    train, test = draw(st.lists(WORD, max_size=3)), draw(st.lists(WORD, max_size=3))
    accuracy = draw(grids(len(train), len(test))) if draw(st.booleans()) else []
    return TransferMatrix(train, test, draw(grids(len(train), len(test))), draw(TEXT), accuracy, draw(DETAILS))


@st.composite
def sweeps(draw: st.DrawFn) -> LayerSweep:
    layers = draw(st.lists(st.integers(0, 80), min_size=1, max_size=4))
    auroc = [draw(estimates()) for _ in layers]
    validation = [draw(estimates()) for _ in layers] if draw(st.booleans()) else []
    return LayerSweep(
        layers,
        auroc,
        draw(st.sampled_from(layers)),
        draw(TEXT),
        draw(TEXT),
        validation,
        draw(TEXT),
        draw(st.integers(0, 5000)),
        draw(DETAILS),
    )


@st.composite
def histograms(draw: st.DrawFn) -> PositionHistogram:
    k = draw(st.integers(1, 5))
    counts = draw(st.dictionaries(WORD, st.lists(st.integers(0, 100), min_size=k, max_size=k), max_size=3))
    return PositionHistogram(k, counts)


@st.composite
def cross_checks(draw: st.DrawFn) -> CrossCheck:
    table = [[draw(st.integers(0, 50)) for _ in range(2)] for _ in range(2)]
    kappa = draw(st.none() | estimates())
    disagreements = draw(
        st.lists(st.builds(Disagreement, WORD, st.booleans(), st.booleans(), st.none() | FLOAT, TEXT), max_size=3)
    )
    note = draw(WORD if kappa is None else TEXT)
    return CrossCheck(draw(TEXT), draw(TEXT), table, kappa, draw(estimates()), disagreements, note)


POWER = st.none() | st.fixed_dictionaries({"value": FLOAT, "n_needed": st.integers(1, 999), "basis": TEXT})


@st.composite
def validation_matrices(draw: st.DrawFn) -> ValidationMatrix:
    models = draw(st.lists(WORD, min_size=1, max_size=3))
    cells = []
    for _ in range(draw(st.integers(0, 3))):
        e, nc = draw(value_or_reason())
        cells.append(
            ValidationCell(
                draw(WORD),
                draw(st.sampled_from(models)),
                draw(st.none() | st.booleans()),
                e,
                draw(st.none() | st.booleans()),
                nc,
                draw(TEXT),
                draw(POWER),
            )
        )
    detectors = draw(
        st.lists(st.builds(DetectorValidity, WORD, TEXT, st.none() | estimates(), st.none() | estimates(), TEXT))
    )
    organisms = draw(st.dictionaries(WORD, DETAILS, max_size=2))
    return ValidationMatrix(models, cells, detectors, organisms, draw(st.lists(TEXT, max_size=2)))


@st.composite
def sections(draw: st.DrawFn) -> Section:
    rows = draw(st.lists(ceilings(), max_size=2)), draw(st.lists(measures(), max_size=3))
    # ids unique within a model, as `ModelReport` requires
    ceiling_rows = [replace(c, id=f"c{i}") for i, c in enumerate(rows[0])]
    measure_rows = [replace(m, id=f"m{i}") for i, m in enumerate(rows[1])]
    return Section(
        ceiling_rows,
        measure_rows,
        [],
        draw(st.none() | transfers()),
        draw(st.none() | sweeps()),
        draw(st.none() | histograms()),
        draw(st.none() | cross_checks()),
        draw(st.none() | validation_matrices()),
    )


STEPS = st.builds(
    StepRecord, WORD, st.sampled_from(["ok", "not_run", "failed"]), TEXT, st.none() | FLOAT, st.booleans()
)
READINGS = st.builds(Reading, WORD, st.sampled_from(["caution", "info"]), TEXT, st.lists(WORD, max_size=2))
MODEL_REPORTS = st.builds(ModelReport, DETAILS, st.lists(STEPS, max_size=3), sections(), st.lists(READINGS, max_size=2))
REPORTS = st.builds(Report, st.lists(MODEL_REPORTS, max_size=2), DETAILS, TEXT, TEXT)


@given(REPORTS)
@settings(max_examples=60, deadline=None)
def test_every_report_survives_json(report: Report) -> None:
    d = report.to_dict()
    again = Report.from_dict(json.loads(json.dumps(d)))
    assert again == report
    assert again.to_dict() == d
