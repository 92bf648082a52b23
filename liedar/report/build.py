"""Assemble a `Report` from saved step results (one run or several) and derive its readings.

Why separate from the renderers: the same assembled report feeds Markdown, HTML and
JSON, and `liedar report --from` needs exactly this path without a model.

Several runs (`liedar report --from RUN_A --from RUN_B`): each run's models become columns
of one page, in the order given. A column is named by its model; when two runs hold the
same model the run's folder name is added (``model["run"]``), so the columns stay
distinct. The config of a multi-run report is ``{"runs": [{"run", "created_utc",
"liedar_version", "config"}, ...]}``: the page header compares them and says where their
sizes or protocols differ instead of comparing the numbers silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence, Union

from liedar.core.errors import InputError
from liedar.core.results import ModelReport, Report, Section
from liedar.readings import derive_readings
from liedar.report.pitfalls import pitfall_readings
from liedar.report.store import StepResult, load_results
from liedar.report.transcripts import attach_transcripts

PathLike = Union[str, Path]


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
            section.merge(attach_transcripts(step.section, step.raw))
        mr = ModelReport(model, [s.record(s.name in cached) for s in model_steps], section)
        mr.readings = derive_readings(mr) + pitfall_readings(mr)
        models.append(mr)
    return Report(
        models,
        config=dict(run.get("config", {})),
        created_utc=run.get("created_utc", ""),
        liedar_version=run.get("liedar_version", ""),
    )


def run_label(results_dir: Path) -> str:
    """A short name for a run: its output folder (``liedar-report`` for ``liedar-report/results``)."""
    p = Path(results_dir).resolve()
    return p.parent.name if p.name == "results" else p.name


def build_report(results: Union[PathLike, Sequence[PathLike]]) -> Report:
    """One results directory, or several (one page with their models side by side)."""
    dirs = [Path(results)] if isinstance(results, (str, Path)) else [Path(r) for r in results]
    if not dirs:
        raise InputError("no results directory given: pass --from DIR (once per run)")
    seen: dict[Path, Path] = {}
    for d in dirs:
        first = seen.setdefault(d.resolve(), d)
        if first is not d:
            # refused, not merged: counting one run twice would double its columns and mislead a reader
            raise InputError(f"--from {d} names the same run as --from {first}; give each run once")
    if len(dirs) == 1:
        return assemble(*load_results(dirs[0]))
    reports = [(run_label(d), assemble(*load_results(d))) for d in dirs]
    labels = [label for label, _ in reports]
    if len(set(labels)) < len(labels):  # two runs in folders of the same name: number them
        labels = [f"{label} #{i + 1}" for i, label in enumerate(labels)]
    names = [mr.model.get("name", "?") for _, r in reports for mr in r.models]
    models: list[ModelReport] = []
    for label, (_, r) in zip(labels, reports):
        for mr in r.models:
            mr.model = {**mr.model, "run": label}
            if names.count(mr.model.get("name", "?")) > 1:
                mr.model["name"] = f"{mr.model.get('name', '?')} ({label})"
            models.append(mr)
    runs = [
        {"run": label, "created_utc": r.created_utc, "liedar_version": r.liedar_version, "config": r.config}
        for label, (_, r) in zip(labels, reports)
    ]
    created = max((r.created_utc for _, r in reports), default="")
    version = ", ".join(sorted({r.liedar_version for _, r in reports if r.liedar_version}))
    return Report(models, config={"runs": runs}, created_utc=created, liedar_version=version)
