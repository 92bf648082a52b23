"""Assemble a `Report` from saved step results and derive its readings.

Why separate from the renderers: the same assembled report feeds Markdown, HTML and
JSON, and `liedar report --from` needs exactly this path without a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from liedar.readings import derive_readings
from liedar.report.store import StepResult, load_results
from liedar.results import ModelReport, Report, Section


def assemble(run: dict[str, Any], steps: list[StepResult]) -> Report:
    """Merge step sections per model (in run order) and attach the readings."""
    cached = set(run.get("cached", []))
    by_model: dict[str, tuple[dict[str, Any], list[StepResult]]] = {}
    for step in steps:
        key = step.model.get("name", "?")
        info, members = by_model.setdefault(key, ({}, []))
        info.update(step.model)  # steps that loaded the model add its fingerprint and shape
        members.append(step)
    models = []
    for model, model_steps in by_model.values():
        section = Section()
        for step in model_steps:
            section.merge(step.section)
        mr = ModelReport(model, [s.record(s.name in cached) for s in model_steps], section)
        mr.readings = derive_readings(mr)
        models.append(mr)
    return Report(
        models,
        config=dict(run.get("config", {})),
        created_utc=run.get("created_utc", ""),
        liedar_version=run.get("liedar_version", ""),
    )


def build_report(results_dir: Path) -> Report:
    run, steps = load_results(results_dir)
    return assemble(run, steps)
