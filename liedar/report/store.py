"""Saved step results: one JSON file per pipeline step, written atomically.

Why per step: an interrupted `liedar demo` resumes by skipping every step whose file
exists and whose config hash matches; `liedar report --from` rebuilds the page from
these files alone (no model, no torch). Files are JSON (never pickle) and carry the
schema version so an old results directory is refused with a clear message.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from liedar._util.atomic import write_json_atomic
from liedar.errors import IncompatibleError, InputError
from liedar.results import SCHEMA_VERSION, Section, StepRecord, check_schema_version

RUN_FILE = "run.json"


def config_hash(config: dict[str, Any]) -> str:
    """Stable short hash of a JSON-safe config (key order does not matter)."""
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


@dataclass
class StepResult:
    """One step's saved output: its status, its report section and its raw result dict."""

    name: str
    config_hash: str
    status: str  # "ok" | "not_run" | "failed"
    model: dict[str, Any]
    section: Section = field(default_factory=Section)
    reason: str = ""
    seconds: Optional[float] = None
    raw: dict[str, Any] = field(default_factory=dict)  # the instrument's own to_dict(), kept for audit

    def record(self, cached: bool) -> StepRecord:
        return StepRecord(self.name, self.status, self.reason, self.seconds, cached)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "name": self.name,
            "config_hash": self.config_hash,
            "status": self.status,
            "reason": self.reason,
            "seconds": self.seconds,
            "model": self.model,
            "section": self.section.to_dict(),
            "raw": self.raw,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "StepResult":
        check_schema_version(d.get("schema_version", "?"), f"step result {d.get('name')!r}")
        return cls(
            d["name"],
            d["config_hash"],
            d["status"],
            dict(d.get("model", {})),
            Section.from_dict(d.get("section", {})),
            d.get("reason", ""),
            d.get("seconds"),
            dict(d.get("raw", {})),
        )


def step_path(results_dir: Path, name: str) -> Path:
    return Path(results_dir) / f"step-{name}.json"


def save_step(results_dir: Path, result: StepResult) -> Path:
    path = step_path(results_dir, result.name)
    write_json_atomic(path, result.to_dict())
    return path


def load_step(results_dir: Path, name: str, expected_hash: str) -> Optional[StepResult]:
    """The saved result of a step if it exists and was made with the same config, else None."""
    path = step_path(results_dir, name)
    if not path.is_file():
        return None
    try:
        result = StepResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, KeyError, TypeError, InputError, IncompatibleError):
        return None  # a damaged file, or one from another schema version, is recomputed, not trusted
    return result if result.config_hash == expected_hash else None


def load_results(results_dir: Path) -> tuple[dict[str, Any], list[StepResult]]:
    """The run manifest and every step result in a results directory (in run order)."""
    results_dir = Path(results_dir)
    run_file = results_dir / RUN_FILE
    if not run_file.is_file():
        raise InputError(
            f"{results_dir} holds no liedar results ({RUN_FILE} missing): "
            "give the results/ folder written by `liedar demo`"
        )
    try:
        run = json.loads(run_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{run_file} is not valid JSON ({exc}): re-run `liedar demo`") from exc
    check_schema_version(run.get("schema_version", "?"), str(run_file))
    order = {name: i for i, name in enumerate(run.get("steps", []))}
    steps = []
    for path in sorted(results_dir.glob("step-*.json")):
        try:
            steps.append(StepResult.from_dict(json.loads(path.read_text(encoding="utf-8"))))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(f"{path} is damaged ({exc}): delete it and re-run `liedar demo`") from exc
    steps.sort(key=lambda s: order.get(s.name, len(order)))
    return run, steps
