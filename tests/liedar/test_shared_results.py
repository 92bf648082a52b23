"""Computed results shared across results folders through the liedar cache: a run into a new
folder reads what a run from the same weights and config computed, never another model's,
never a damaged entry, and never when the run was asked to compute everything again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from liedar.core.results import Section
from liedar.pipeline.context import DemoConfig, Step
from liedar.pipeline.demo import run_demo
from liedar.pipeline.validate_units import load_saved_unit, unit_path
from liedar.report.store import shared_path


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("LIEDAR_CACHE", str(root))
    return root


def _steps(calls: list[str]) -> tuple[Step, ...]:
    def computed(ctx):
        calls.append("computed")
        return Section(), {"value": 7}

    def writes_a_file(ctx):
        calls.append("writes_a_file")
        (ctx.results_dir / "side.txt").write_text("made here", encoding="utf-8")
        return Section(), {}

    return (Step("computed", computed), Step("writes_a_file", writes_a_file, shared=False))


def _run(model: Path, output: Path, calls: list[str], call_cache: bool = True):
    cfg = DemoConfig(model=str(model), output=output, quick=True, call_cache=call_cache)
    return run_demo(cfg, _steps(calls), say=lambda s: None)


def test_a_new_folder_reads_the_step_another_folder_computed(tiny_model_dir: Path, tmp_path: Path, cache: Path) -> None:
    calls: list[str] = []
    _run(tiny_model_dir, tmp_path / "a", calls)
    assert calls == ["computed", "writes_a_file"]
    calls.clear()
    out = _run(tiny_model_dir, tmp_path / "b", calls)
    assert calls == ["writes_a_file"]  # a step that writes a file into its folder runs again there
    assert out.cached == ["computed"]
    saved = json.loads((tmp_path / "b" / "results" / "step-computed.json").read_text(encoding="utf-8"))
    assert saved["raw"] == {"value": 7}  # copied into the new folder: the report reads it from there
    assert (tmp_path / "b" / "results" / "side.txt").is_file()


def test_other_weights_do_not_read_the_shared_step(tiny_model_dir: Path, tmp_path: Path, cache: Path) -> None:
    other = tmp_path / "other-model"
    shutil.copytree(tiny_model_dir, other)
    weights = next(other.glob("*.safetensors"))
    blob = bytearray(weights.read_bytes())
    blob[-1] ^= 0x01  # one bit of one weight
    weights.write_bytes(bytes(blob))
    calls: list[str] = []
    _run(tiny_model_dir, tmp_path / "a", calls)
    calls.clear()
    _run(other, tmp_path / "b", calls)
    assert calls == ["computed", "writes_a_file"]


def test_no_call_cache_computes_everything_again(tiny_model_dir: Path, tmp_path: Path, cache: Path) -> None:
    calls: list[str] = []
    _run(tiny_model_dir, tmp_path / "a", calls)
    calls.clear()
    _run(tiny_model_dir, tmp_path / "b", calls, call_cache=False)
    assert calls == ["computed", "writes_a_file"]


def test_a_damaged_shared_step_is_recomputed(tiny_model_dir: Path, tmp_path: Path, cache: Path) -> None:
    calls: list[str] = []
    _run(tiny_model_dir, tmp_path / "a", calls)
    (entry,) = (cache / "results" / "steps").glob("computed-*.json")
    entry.write_text('{"schema_version": "1", "name": "comp', encoding="utf-8")
    calls.clear()
    _run(tiny_model_dir, tmp_path / "b", calls)
    assert calls == ["computed", "writes_a_file"]
    assert json.loads(entry.read_text(encoding="utf-8"))["raw"] == {"value": 7}  # rewritten whole


def _unit_record(expected: str) -> dict:
    return {"unit": "gap", "hash": expected, "status": "ok", "cells": [], "raw": {"n": 3}}


def test_a_unit_is_read_from_the_shared_results_and_copied(tmp_path: Path, cache: Path) -> None:
    path = unit_path(tmp_path / "results", "smollm2-135m", "gap")
    shared = shared_path("units", "gap", "h1", "weights-a")
    shared.parent.mkdir(parents=True)
    shared.write_text(json.dumps(_unit_record("h1")), encoding="utf-8")
    assert load_saved_unit(path, "h1") is None  # the folder alone has nothing
    assert load_saved_unit(path, "h1", "weights-b") is None  # other weights: not read
    assert load_saved_unit(path, "h2", "weights-a") is None  # another config: not read
    assert load_saved_unit(path, "h1", "weights-a")["raw"] == {"n": 3}
    assert path.is_file()
    shared.write_bytes(b"\xff\xfe not json")
    path.unlink()
    assert load_saved_unit(path, "h1", "weights-a") is None  # damaged: recomputed, never trusted


def test_a_unit_run_in_one_folder_is_read_in_another_without_loading(
    tiny_model_dir: Path, tmp_path: Path, cache: Path
) -> None:
    from liedar import models
    from liedar.behavioral.items.mcq import load_mcq_bank
    from liedar.pipeline.validate import validation_sizes
    from liedar.pipeline.validate_detectors import UNITS
    from liedar.pipeline.validate_units import ModelSpec, run_model

    spec = ModelSpec(str(tiny_model_dir))
    units = [u for u in UNITS if u.name == "sandbagging"]
    args = (validation_sizes(quick=True), 0, None, "")
    kw = dict(units=units, items=list(load_mcq_bank())[:8], say=lambda s: None, progress=False)

    def load():
        return models.load(str(tiny_model_dir), backend="transformers", n_threads=1)

    def must_not_load():
        raise AssertionError("the model was loaded, though the unit was in the shared results")

    first = run_model(spec, load, tmp_path / "a", *args, shared_key="weights-a", **kw)
    assert first.statuses == {"sandbagging": "ok"} and first.cached == []
    again = run_model(spec, must_not_load, tmp_path / "b", *args, shared_key="weights-a", **kw)
    assert again.cached == ["sandbagging"]
    assert [c.to_dict() for c in again.cells] == [c.to_dict() for c in first.cells]
    assert unit_path(tmp_path / "b", spec.name, "sandbagging").is_file()
    other = run_model(spec, load, tmp_path / "c", *args, shared_key="weights-b", **kw)
    assert other.cached == []  # other weights: computed, not read
