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

from liedar.core._util.atomic import write_json_atomic
from liedar.core.errors import IncompatibleError, InputError
from liedar.core.results import SCHEMA_VERSION, Section, StepRecord, check_schema_version

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
        # status is checked against STATUSES on reading; StepRecord spells it as a Literal
        return StepRecord(self.name, self.status, self.reason, self.seconds, cached)  # type: ignore[arg-type]

    # stays hand-written: writes schema_version and its reader checks it before the fields
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
        """Rebuild a saved step; `InputError` (naming the field and its expected type) for
        anything that is not the shape `to_dict` writes."""
        if not isinstance(d, dict):
            raise InputError(f"a step result must be a JSON object, got {type(d).__name__}")
        check_schema_version(_version(d), f"step result {d.get('name')!r}")
        for key, kinds, required in _STEP_FIELDS:
            value = d.get(key)
            if value is None and not required:
                continue
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                names = " or ".join(k.__name__ for k in kinds)
                state = "missing" if key not in d else f"a {type(value).__name__}"
                raise InputError(f"step result field {key!r} must be {names}, is {state}")
        if d["status"] not in STATUSES:
            raise InputError(f"step result status {d['status']!r} is not one of {', '.join(STATUSES)}")
        try:
            section = Section.from_dict(d.get("section") or {})
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise InputError(
                f"step result {d['name']!r} has a malformed section ({type(exc).__name__}: {exc})"
            ) from None
        return cls(
            d["name"],
            d["config_hash"],
            d["status"],
            dict(d.get("model") or {}),
            section,
            d.get("reason") or "",
            d.get("seconds"),
            dict(d.get("raw") or {}),
        )


STATUSES = ("ok", "not_run", "failed")
_STEP_FIELDS: tuple[tuple[str, tuple[type, ...], bool], ...] = (
    ("name", (str,), True),
    ("config_hash", (str,), True),
    ("status", (str,), True),
    ("reason", (str,), False),
    ("seconds", (int, float), False),
    ("model", (dict,), False),
    ("section", (dict,), False),
    ("raw", (dict,), False),
)


def _version(d: dict[str, Any]) -> str:
    """The schema version as plain ASCII text ("?" when absent or not text), for the check."""
    found = d.get("schema_version", "?")
    return found if isinstance(found, str) and found.isascii() else "?"


def _read_json(path: Path, fix: str) -> Any:
    """A JSON file's value; one-line `InputError` for unreadable bytes, non-UTF-8 or bad JSON."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}); {fix}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}; {fix}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); {fix}") from None
    except (ValueError, RecursionError):
        raise InputError(f"{path}: not valid JSON (nested too deeply); {fix}") from None


def step_path(results_dir: Path, name: str) -> Path:
    return Path(results_dir) / f"step-{name}.json"


def shared_results_root() -> Path:
    """The cache folder that holds every shared result (`shared_path`); removing it makes the
    next run compute each step and unit afresh, with the model-call cache still warm."""
    from liedar.models.storage import cache_root

    return cache_root() / "results"


def shared_path(kind: str, name: str, config: str, weights: str) -> Path:
    """Where a computed result is kept in the liedar cache for every results folder: keyed by
    the result's own config hash and by the weights it was computed from (`weights_key`).

    Why beside the results folder: a run into a new output folder would otherwise compute
    again what an earlier run computed from the same weights and config (the monitor's hidden
    states, weight noise), though every model answer it replays is already in the model-call
    cache."""
    return shared_results_root() / kind / f"{name}-{config_hash({'config': config, 'weights': weights})}.json"


def weights_key(identity: dict[str, Any]) -> str:
    """A short key of `liedar.models.registry.weights_identity` (weights, backend, dtype)."""
    return config_hash(identity)


def save_step(results_dir: Path, result: StepResult, shared: Optional[str] = None) -> Path:
    """Write the step's result into the results folder and, given the weights key ``shared``,
    into the cache's shared results too (`shared_path`)."""
    path = step_path(results_dir, result.name)
    write_json_atomic(path, result.to_dict())
    if shared is not None and result.status == "ok":
        write_json_atomic(shared_path("steps", result.name, result.config_hash, shared), result.to_dict())
    return path


def _read_step(path: Path, name: str, expected_hash: str) -> Optional[StepResult]:
    if not path.is_file():
        return None
    try:
        result = StepResult.from_dict(_read_json(path, "it is recomputed"))
    except (InputError, IncompatibleError):
        return None  # a damaged file, or one from another schema version, is recomputed, not trusted
    return result if result.config_hash == expected_hash and result.name == name else None


def load_step(results_dir: Path, name: str, expected_hash: str, shared: Optional[str] = None) -> Optional[StepResult]:
    """The saved result of a step if it exists and was made with the same config, else None.

    Given the weights key ``shared``, a step missing from the folder is read from the cache's
    shared results (`shared_path`) when a run from the same weights and config saved it there,
    and copied into the folder; a damaged shared entry is recomputed, never trusted."""
    result = _read_step(step_path(results_dir, name), name, expected_hash)
    if result is not None or shared is None:
        return result
    result = _read_step(shared_path("steps", name, expected_hash, shared), name, expected_hash)
    if result is not None and result.status == "ok":
        write_json_atomic(step_path(results_dir, name), result.to_dict())
        return result
    return None


def load_results(results_dir: Path) -> tuple[dict[str, Any], list[StepResult]]:
    """The run manifest and every step result in a results directory (in run order)."""
    results_dir = Path(results_dir)
    run_file = results_dir / RUN_FILE
    if not run_file.is_file():
        raise InputError(
            f"{results_dir} holds no liedar results ({RUN_FILE} missing): "
            "give the results/ folder written by `liedar demo`"
        )
    fix = "re-run `liedar demo` to rewrite the results folder"
    run = _read_json(run_file, fix)
    if not isinstance(run, dict):
        raise InputError(f"{run_file} must hold a JSON object (the run manifest), got {type(run).__name__}; {fix}")
    check_schema_version(_version(run), str(run_file))
    names = run.get("steps", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError(f"{run_file}: 'steps' must be a list of step names; {fix}")
    order = {name: i for i, name in enumerate(names)}
    steps = []
    for path in sorted(results_dir.glob("step-*.json")):
        try:
            steps.append(StepResult.from_dict(_read_json(path, f"delete it and {fix}")))
        except InputError as exc:
            message = str(exc)
            raise InputError(message if str(path) in message else f"{path}: {message}; delete it and {fix}") from None
    steps.extend(_missing_step(results_dir, run, steps, name) for name in missing_steps(results_dir, run))
    steps.sort(key=lambda s: order.get(s.name, len(order)))
    return run, steps


def missing_steps(results_dir: Path, run: Optional[dict[str, Any]] = None) -> list[str]:
    """Steps the run manifest names whose result file is not in the folder (deleted, or the
    run was cut before writing it).

    Why named: without this such a step vanished from the page (no row) and its category
    read "not measured" as if the run had never planned it.
    """
    if run is None:
        try:
            run = _read_json(Path(results_dir) / RUN_FILE, "")
        except InputError:
            return []
    names = run.get("steps", []) if isinstance(run, dict) else []
    if not isinstance(names, list):
        return []
    return [n for n in names if isinstance(n, str) and not step_path(results_dir, n).is_file()]


def _missing_step(results_dir: Path, run: dict[str, Any], found: list[StepResult], name: str) -> StepResult:
    """A "not_run" row for a step whose file is missing, under the run's model, with the reason."""
    model = next((s.model.get("name") for s in found if s.model.get("name")), None)
    config: dict[str, Any] = run["config"] if isinstance(run.get("config"), dict) else {}
    model = model or config.get("model") or "?"
    reason = (
        f"its result file {step_path(results_dir, name).name} is missing from {results_dir}; "
        "re-run `liedar demo` with the same --output to recompute it"
    )
    return StepResult(name, "", "not_run", {"name": str(model)}, reason=reason)
