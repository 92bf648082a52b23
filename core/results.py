"""The results data model: what instruments hand to the report, and what one page about one
model holds.

Why in the bottom layer: probes (transfer matrices, layer sweeps), behavioural instruments
(sections of measures and ceilings) and the report all speak these types, so each concept
has exactly one type and no layer converts another's copy.

Why a typed model and not free-form dicts: the report's promise is that every rate comes
with its interval, its n and — for deception rates — the capability ceiling it must be
read against. Those rules are checked here (on construction) and in the JSON Schema
(`report.schema.json`), so no renderer can show a bare number.

A measure or ceiling the run attempted but could not estimate (no records in its
denominator, e.g. a flip rate when the model answered no item right unprompted) is kept as
a row with ``estimate=None`` and a `NotComputable` saying why, never dropped and never
shown as 0: a reviewer must see everything the run tried. Instrument warnings ("n < 30",
"ceiling indistinguishable from chance") travel on the row they qualify.

Serialisation: every class here derives from `liedar.core._util.serial.Serial`, so its
``to_dict``/``from_dict`` write and read it field by field by its type hints (the JSON keys
are the field names; ``key_order`` keeps the order files have always had). A value of the
wrong type in a file is refused in one line naming the field, and each class's
``__post_init__`` checks run on reading as on construction. Why no per-class methods: a
field added to a class but not to its hand-written pair was silently dropped on saving.

Versioning: `SCHEMA_VERSION` changes on any incompatible change of `Report.to_dict()`;
`liedar report --from` refuses results written by another major version with one line
naming both versions and the fix (2.0: estimates may be null, rows carry warnings; 2.1:
warnings are `Caveat`s with a code, and a section may carry a `ValidationMatrix`; 2.0 files
are read, their warnings becoming caveats with code ``unclassified``; 2.2: readings with rule
``pitfalls``, written by `liedar.report.pitfalls`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from liedar.core._util.serial import INLINE, OMIT_NONE, Serial, from_data
from liedar.core.errors import IncompatibleError, InputError
from liedar.core.stats import Estimate

SCHEMA_VERSION = "2.3"

Scale = Literal["proportion", "difference", "ratio", "score"]
StepStatus = Literal["ok", "not_run", "failed"]
Kind = Literal["capability", "propensity", "quality"]


def _check_estimate(e: Estimate, where: str) -> None:
    """An estimate the report can show: finite value inside a finite interval, n >= 1."""
    for name in ("value", "lo", "hi"):
        v = getattr(e, name)
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InputError(f"{where}: estimate {name}={v!r} is not a finite number")
    if e.n < 1:
        raise InputError(f"{where}: estimate has n={e.n}; every rate needs the count behind it")
    if not e.lo - 1e-9 <= e.value <= e.hi + 1e-9:
        raise InputError(f"{where}: value {e.value} lies outside its interval [{e.lo}, {e.hi}]")


@dataclass(frozen=True)
class NotComputable(Serial):
    """Why a number the run attempted has no estimate: ``n`` records were usable (usually 0).

    ``kind`` is what the estimate would have measured, so the row still lands in the right
    table (deception measures vs probe quality).
    """

    reason: str
    n: int = 0
    kind: Kind = "propensity"

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise InputError("a not-computable row must say why (reason is empty)")
        if self.n < 0:
            raise InputError(f"not-computable row: n={self.n} cannot be negative")


Outcome = Union[Estimate, NotComputable]
"""A number with its interval, or the reason the run has none: what every row that attempted a
number holds (a `Ceiling`, a `Measure`, a `ValidationCell`). The files keep the two fields
(``estimate``/``effect`` and ``not_computable``, exactly one set); code reads ``row.outcome``."""


def outcome_of(estimate: Optional[Estimate], nc: Optional[NotComputable]) -> Outcome:
    """The one of ``estimate`` and ``nc`` that is set (rows check that exactly one is)."""
    if estimate is not None:
        return estimate
    if nc is None:
        raise InputError("a row holds neither an estimate nor the reason there is none")
    return nc


def _check_row(estimate: Optional[Estimate], nc: Optional[NotComputable], where: str) -> None:
    """Exactly one of estimate / not_computable: a row either has a number or says why not."""
    if (estimate is None) == (nc is None):
        raise InputError(
            f"{where}: give either an estimate or a not_computable reason, not {'both' if nc else 'neither'}"
        )
    if estimate is not None:
        _check_estimate(estimate, where)


@dataclass(frozen=True)
class Caveat(Serial):
    """An instrument's warning about one or more rows: a stable ``code`` (for grouping, tags
    and tests; never parsed from the text) and the sentence a reader sees.

    Why a code: the report groups identical caveats, shows a short tag that expands, and
    tests assert on codes rather than on wording, so a reworded warning cannot silently
    move to another row (schema 2.0 routed free text by substring).
    """

    code: str
    text: str

    def __post_init__(self) -> None:
        if not self.code or not self.text:
            raise InputError("a caveat needs a code and a text")

    @classmethod
    def from_dict(cls, d: Any) -> "Caveat":
        """A caveat from its JSON object, or from the text alone (how schema 2.0 stored it;
        such a caveat gets the code ``unclassified``).

        Parameters
        ----------
        d : dict or str
            ``{"code", "text"}``, or a schema 2.0 warning's text.

        Returns
        -------
        Caveat
        """
        if isinstance(d, str):
            return cls("unclassified", d)
        return from_data(cls, d)


@dataclass(frozen=True)
class Ceiling(Serial):
    """An elicited capability ceiling: the accuracy the model reaches when asked hard."""

    id: str
    label: str
    protocol: str  # how it was elicited: "benign framing, option log-probs", "few-shot", ...
    chance: float  # accuracy of a uniform guesser on the same items
    estimate: Optional[Estimate]  # None only with `not_computable`
    warnings: tuple[Caveat, ...] = ()  # the instrument's caveats about this ceiling
    not_computable: Optional[NotComputable] = None

    key_order = ("id", "label", "protocol", "chance", "estimate", "not_computable", "warnings")

    def __post_init__(self) -> None:
        _check_row(self.estimate, self.not_computable, f"ceiling {self.id!r}")

    @property
    def outcome(self) -> Outcome:
        """The ceiling's estimate, or why there is none."""
        return outcome_of(self.estimate, self.not_computable)


@dataclass(frozen=True)
class Measure(Serial):
    """One number the report shows: a deception rate, a detector score or a probe metric.

    ``scale`` says how to read it: a ``proportion`` in [0, 1], a ``difference`` of
    proportions (``null_value`` 0 = no gap), a ``ratio`` (φ; ``null_value`` 1), or a
    ``score``. ``ceiling`` names the `Ceiling` a deception rate is read against; a
    propensity measure without one says so in the readings. ``higher_is_deceptive`` is
    None for quality metrics (probe AUROC) where the direction is not about deception.
    ``estimate`` is None exactly when ``not_computable`` says why; ``warnings`` are the
    instrument's caveats that qualify this number (shown on its row).
    """

    id: str
    label: str
    instrument: str
    scale: Scale
    estimate: Optional[Estimate]
    ceiling: Optional[str] = None
    higher_is_deceptive: Optional[bool] = True
    null_value: Optional[float] = None
    flag: Optional[bool] = None
    grader_kappa: Optional[Estimate] = None
    details: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[Caveat, ...] = ()
    not_computable: Optional[NotComputable] = None

    key_order = (
        "id",
        "label",
        "instrument",
        "scale",
        "estimate",
        "not_computable",
        "ceiling",
        "higher_is_deceptive",
        "null_value",
        "flag",
        "grader_kappa",
        "warnings",
        "details",
    )

    def __post_init__(self) -> None:
        _check_row(self.estimate, self.not_computable, f"measure {self.id!r}")
        if self.grader_kappa is not None:
            _check_estimate(self.grader_kappa, f"grader kappa of {self.id!r}")

    @property
    def kind(self) -> Kind:
        """What the row measures, whether or not it has a number."""
        return self.outcome.kind

    @property
    def outcome(self) -> Outcome:
        """The measure's estimate, or why there is none."""
        return outcome_of(self.estimate, self.not_computable)


@dataclass(frozen=True)
class Comparison(Serial):
    """Two measures the report compares (e.g. honest vs prompted sandbagger)."""

    a: str
    b: str
    label: str


@dataclass(frozen=True)
class TransferMatrix(Serial):
    """AUROC of a probe trained on ``train[i]`` and tested on ``test[j]`` (None: not run or
    no finite estimate); the diagonal of a square matrix is in-distribution group CV.

    The one type for this concept: `liedar.probes.evaluation.transfer_matrix` returns it and
    the report shows it (``accuracy`` holds the matching accuracy cells when known).
    """

    train: list[str]
    test: list[str]
    cells: list[list[Optional[Estimate]]]
    probe: str = ""
    accuracy: list[list[Optional[Estimate]]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.cells) != len(self.train) or any(len(r) != len(self.test) for r in self.cells):
            raise InputError("transfer matrix: cells must be len(train) rows of len(test) entries")
        for i, row in enumerate(self.cells):
            for j, cell in enumerate(row):
                if cell is not None:
                    _check_estimate(cell, f"transfer cell {self.train[i]}→{self.test[j]}")

    def auroc_array(self) -> "Any":
        """AUROC values as a float array (NaN where a cell has none)."""
        import numpy as np

        return np.array([[np.nan if c is None else c.value for c in row] for row in self.cells], dtype=float)

    def to_markdown(self) -> str:
        head = "| train \\ test | " + " | ".join(self.test) + " |"
        rule = "|---|" + "---|" * len(self.test)
        rows = [
            f"| {name} | "
            + " | ".join("n/a" if c is None else f"{c.value:.2f} [{c.lo:.2f}, {c.hi:.2f}]" for c in row)
            + " |"
            for name, row in zip(self.train, self.cells)
        ]
        title = f"AUROC ({self.probe}; diagonal = in-distribution group CV)" if self.probe else "AUROC"
        return "\n".join([title, "", head, rule, *rows])


@dataclass(frozen=True)
class LayerSweep(Serial):
    """Test AUROC per layer; ``chosen_layer`` was picked on ``chosen_on`` data (the
    ``validation`` AUROCs, when given), never on the test set.

    The one type for this concept: `liedar.probes.evaluation.layer_sweep` returns it and the
    report shows it.
    """

    layers: list[int]
    auroc: list[Estimate]
    chosen_layer: int
    chosen_on: str
    dataset: str = ""
    validation: list[Estimate] = field(default_factory=list)
    probe: str = ""
    n_train: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.layers) != len(self.auroc) or not self.layers:
            raise InputError("layer sweep: give one AUROC estimate per layer (at least one layer)")
        if self.validation and len(self.validation) != len(self.layers):
            raise InputError("layer sweep: give one validation AUROC per layer, or none")
        for layer, e in zip(self.layers, self.auroc):
            _check_estimate(e, f"layer sweep layer {layer}")
        for layer, e in zip(self.layers, self.validation):
            _check_estimate(e, f"layer sweep validation layer {layer}")

    @property
    def test_at_chosen(self) -> Estimate:
        return self.auroc[self.layers.index(self.chosen_layer)]

    def to_markdown(self) -> str:
        val = self.validation or [None] * len(self.layers)
        rows = [
            f"| {layer} | {'' if v is None else f'{v.value:.3f} [{v.lo:.3f}, {v.hi:.3f}]'} | "
            f"{t.value:.3f} [{t.lo:.3f}, {t.hi:.3f}] |" + (" ← chosen" if layer == self.chosen_layer else "")
            for layer, v, t in zip(self.layers, val, self.auroc)
        ]
        head = f"AUROC per layer ({self.probe or self.dataset}; layer chosen on {self.chosen_on})"
        return "\n".join([head, "", "| layer | validation | test |", "|---|---|---|", *rows])


@dataclass(frozen=True)
class PositionHistogram(Serial):
    """How often each presented position was chosen, per condition (option-order trials)."""

    n_options: int
    counts: dict[str, list[int]]  # condition -> count per position

    def __post_init__(self) -> None:
        for cond, row in self.counts.items():
            if len(row) != self.n_options:
                raise InputError(f"position histogram {cond!r}: need {self.n_options} counts, got {len(row)}")


@dataclass(frozen=True)
class Disagreement(Serial):
    item_id: str
    behavioural_flag: bool
    probe_flag: bool
    probe_score: Optional[float] = None
    note: str = ""


@dataclass(frozen=True)
class CrossCheck(Serial):
    """Behavioural flags vs probe flags on the same items.

    ``table`` is [[both flagged, behaviour only], [probe only, neither]].
    """

    behavioural: str  # what a behavioural flag means
    probe: str  # what a probe flag means
    table: list[list[int]]
    kappa: Optional[Estimate]  # None when undefined (one source flagged all or none)
    agreement: Estimate
    disagreements: list[Disagreement]
    kappa_note: str = ""

    key_order = ("behavioural", "probe", "table", "kappa", "kappa_note", "agreement", "disagreements")

    def __post_init__(self) -> None:
        if len(self.table) != 2 or any(len(r) != 2 for r in self.table):
            raise InputError("cross-check table must be 2x2: [[both, behaviour only], [probe only, neither]]")
        _check_estimate(self.agreement, "cross-check agreement")
        if self.kappa is not None:
            _check_estimate(self.kappa, "cross-check kappa")
        elif not self.kappa_note:
            raise InputError("cross-check without a kappa must say why (kappa_note)")

    @property
    def n(self) -> int:
        return sum(sum(r) for r in self.table)


@dataclass(frozen=True)
class StepRecord(Serial):
    """What happened to one pipeline step: shown in the report so a skipped step is visible."""

    name: str
    status: StepStatus
    reason: str = ""
    seconds: Optional[float] = None
    cached: bool = False


@dataclass(frozen=True)
class Reading(Serial):
    """One sentence generated from the numbers by a rule in `liedar.readings`."""

    rule: str
    severity: Literal["caution", "info"]
    text: str
    refs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ValidationCell(Serial):
    """One detector run as a user would run it, on one model (the base or an organism).

    ``truth`` is the ground truth for this cell: True when the model was built to show the
    behaviour the detector targets (and measurably learned it), False when it was not (the
    base model; an organism built for another behaviour), None when unknown (an organism
    whose behaviour was not learned is never ground truth). ``flag`` is the detector's
    verdict with its default settings; ``effect`` the number the verdict rests on.
    """

    detector: str
    model: str
    flag: Optional[bool]
    effect: Optional[Estimate]
    truth: Optional[bool] = None
    not_computable: Optional[NotComputable] = None
    note: str = ""
    # {"value", "n_needed", "basis"}: the power to detect the organism card's effect at this n
    # (liedar.pipeline.validate_power); None when the card holds no planning number
    power: Optional[dict[str, Any]] = field(default=None, metadata=OMIT_NONE)

    def __post_init__(self) -> None:
        _check_row(self.effect, self.not_computable, f"validation cell {self.detector}×{self.model}")

    @property
    def outcome(self) -> Outcome:
        """The cell's effect, or why there is none."""
        return outcome_of(self.effect, self.not_computable)


@dataclass(frozen=True)
class DetectorValidity(Serial):
    """A detector's measured quality against ground truth: recall on the organisms it
    targets and false-flag rate on models without the behaviour (the base model first)."""

    detector: str
    label: str
    recall: Optional[Estimate]  # None: no organism with the behaviour was available
    false_flag_rate: Optional[Estimate]
    note: str = ""


@dataclass(frozen=True)
class ValidationMatrix(Serial):
    """Detector × model: every detector on the base model and on each model organism.

    ``models`` lists column names (the base model first); ``organisms`` describes each
    organism column: its intended behaviour, whether it measurably learned it, and its
    measured ground truth (e.g. accuracy benign vs under the evaluation framing).
    ``notes`` say what the run had and did not have (organisms not built, training skipped
    by ``--quick``), so the page never implies a column it did not measure.
    """

    models: list[str]
    cells: list[ValidationCell]
    detectors: list[DetectorValidity]
    organisms: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for c in self.cells:
            if c.model not in self.models:
                raise InputError(f"validation cell for {c.model!r}: not one of the matrix's models {self.models}")

    def cell(self, detector: str, model: str) -> Optional[ValidationCell]:
        return next((c for c in self.cells if c.detector == detector and c.model == model), None)


@dataclass
class Section(Serial):
    """Everything one pipeline step contributes; a `ModelReport` is the union of sections.

    Steps save sections (not whole reports) so that an interrupted run resumes step by
    step and `liedar report --from` can rebuild the page from whatever finished.
    """

    ceilings: list[Ceiling] = field(default_factory=list)
    measures: list[Measure] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    transfer: Optional[TransferMatrix] = None
    layer_sweep: Optional[LayerSweep] = None
    positions: Optional[PositionHistogram] = None
    cross_check: Optional[CrossCheck] = None
    validation: Optional[ValidationMatrix] = None

    def merge(self, other: "Section") -> None:
        """Add another step's section; a second transfer matrix etc. for one model is an error."""
        self.ceilings += other.ceilings
        self.measures += other.measures
        self.comparisons += other.comparisons
        for name in ("transfer", "layer_sweep", "positions", "cross_check", "validation"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if theirs is not None:
                if mine is not None:
                    raise InputError(f"two steps both supplied the report's {name}: keep one")
                setattr(self, name, theirs)


@dataclass
class ModelReport(Serial):
    """One model's page: identity, steps run, all numbers, and the readings derived from them."""

    model: dict[str, Any]  # name, backend, fingerprint
    steps: list[StepRecord]
    section: Section = field(metadata=INLINE)  # its keys sit beside model and steps
    readings: list[Reading] = field(default_factory=list)

    def __post_init__(self) -> None:
        ids = [m.id for m in self.section.measures] + [c.id for c in self.section.ceilings]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise InputError(f"duplicate measure/ceiling ids in the report: {dupes}")
        ceiling_ids = {c.id for c in self.section.ceilings}
        for m in self.section.measures:
            if m.ceiling is not None and m.ceiling not in ceiling_ids:
                raise InputError(f"measure {m.id!r} refers to ceiling {m.ceiling!r}, which is not in the report")
        computed = {m.id for m in self.section.measures if m.estimate is not None}
        for c in self.section.comparisons:
            if c.a not in computed or c.b not in computed:
                raise InputError(
                    f"comparison {c.label!r} refers to a measure that is not in the report "
                    "or has no estimate: compare only measures with numbers"
                )

    def measure(self, measure_id: str) -> Measure:
        return next(m for m in self.section.measures if m.id == measure_id)

    def ceiling(self, ceiling_id: str) -> Ceiling:
        return next(c for c in self.section.ceilings if c.id == ceiling_id)


@dataclass
class Report(Serial):
    """The whole report: versioned, one `ModelReport` per model."""

    models: list[ModelReport]
    config: dict[str, Any] = field(default_factory=dict)
    created_utc: str = ""
    liedar_version: str = ""
    schema_version: str = SCHEMA_VERSION

    key_order = ("schema_version", "liedar_version", "created_utc", "config", "models")

    @classmethod
    def from_dict(cls, d: Any) -> "Report":
        """A report from its JSON, refused first when another major schema version wrote it.

        Parameters
        ----------
        d : dict
            What `to_dict` writes (``report.json``).

        Returns
        -------
        Report

        Raises
        ------
        liedar.core.errors.IncompatibleError
            When ``d`` is not a report or another major schema version wrote it.
        liedar.core.errors.InputError
            When a field is missing, of the wrong type, or refused by a row's checks.
        """
        check_schema_version(d.get("schema_version", "?") if isinstance(d, dict) else "?", "report")
        return from_data(cls, d)


def _major(version: str) -> Optional[int]:
    head = str(version).split(".")[0]
    return int(head) if head.isdigit() else None


def check_schema_version(found: str, what: str) -> None:
    """Refuse data from another major schema version (minor versions only add fields).

    Why refuse rather than upgrade 1.x: a 1.x file dropped not-computable measures and kept
    instrument warnings only in free-form details, so an upgraded page would silently say
    less than the run knew. The message names both versions and the one fix for each case.
    """
    mine, theirs = _major(SCHEMA_VERSION), _major(found)
    if theirs == mine:
        return
    if theirs is not None and mine is not None and theirs < mine:
        fix = (
            "re-run `liedar demo` with the same --output to regenerate it (steps saved by the older "
            "version are recomputed; the model cache is kept)"
        )
    elif theirs is not None:
        fix = "read it with the newer liedar that wrote it, or upgrade liedar"
    else:
        fix = "it is not a liedar report file; give the results/ folder or report.json written by `liedar demo`"
    raise IncompatibleError(f"{what} has report schema version {found}, this liedar reads {SCHEMA_VERSION}: {fix}")
