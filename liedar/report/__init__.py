"""The combined report: ceilings next to deception rates, probe quality, cross-check.

Modules, one job each (the versioned data model itself is `liedar.core.results`): `store` (per-step results
saved atomically), `build` (assemble a report from saved results), `crosscheck`
(behavioural vs probe flags), `document` (layout as neutral blocks), `page_markdown` /
`page_html` (renderers), `figures` (matplotlib PNGs), `schema` (JSON Schema validation),
`render` (write all outputs). Nothing here imports torch, `models` or `probes`:
`liedar report --from` must work without a model.
"""

from liedar.core.results import (
    SCHEMA_VERSION,
    Ceiling,
    Comparison,
    CrossCheck,
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
)

__all__ = [
    "SCHEMA_VERSION",
    "Ceiling",
    "Comparison",
    "CrossCheck",
    "Disagreement",
    "LayerSweep",
    "Measure",
    "ModelReport",
    "NotComputable",
    "PositionHistogram",
    "Reading",
    "Report",
    "Section",
    "StepRecord",
    "TransferMatrix",
]
