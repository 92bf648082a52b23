"""The demo pipeline without a model: resume from saved steps, visible "not run", failures
isolated, and the report command re-rendering without importing torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from report_fixtures import SAVED_RESULTS

from liedar.core.results import SCHEMA_VERSION, Measure, Section
from liedar.core.stats import wilson
from liedar.pipeline.context import DemoConfig, Step, StepUnavailable, step_hashes
from liedar.pipeline.demo import run_demo

ROOT = Path(__file__).resolve().parents[2]


def _steps(calls: list[str]) -> tuple[Step, ...]:
    def ok(ctx):
        calls.append("ok")
        return Section(measures=[Measure("m", "a rate", "t", "proportion", wilson(3, 30), None)]), {"x": 1}

    def missing(ctx):
        calls.append("missing")
        raise StepUnavailable("the step's extra is not part of this build")

    def broken(ctx):
        calls.append("broken")
        raise RuntimeError("boom")

    def after(ctx):
        calls.append("after")
        return Section(), {}

    return (
        Step("first", ok, ("crosscheck_items",)),
        Step("missing", missing),
        Step("broken", broken),
        Step("needs_broken", after, (), ("broken",)),
        Step("after", after, (), ("first",)),
    )


def test_resume_skips_finished_steps_and_reports_the_rest(tmp_path: Path) -> None:
    calls: list[str] = []
    cfg = DemoConfig(model="fake", output=tmp_path / "out", quick=True)
    out = run_demo(cfg, _steps(calls), say=lambda s: None)
    assert calls == ["ok", "missing", "broken", "after"]
    status = {s.name: (s.status, s.reason) for s in out.steps}
    assert status["missing"][0] == "not_run" and "not part of this build" in status["missing"][1]
    assert status["broken"] == ("failed", "RuntimeError: boom")
    assert status["needs_broken"][0] == "not_run" and "broken" in status["needs_broken"][1]
    md = out.paths["markdown"].read_text(encoding="utf-8")
    assert "RuntimeError: boom" in md and "not part of this build" in md

    calls.clear()
    again = run_demo(cfg, _steps(calls), say=lambda s: None)
    assert again.cached == ["first", "after"]
    assert calls == ["missing", "broken"]  # only unfinished steps are retried


def test_changed_sizes_invalidate_only_dependent_steps(tmp_path: Path) -> None:
    steps = _steps([])
    quick = step_hashes(DemoConfig(model="fake", quick=True), steps)
    full = step_hashes(DemoConfig(model="fake", quick=False), steps)
    assert quick["first"] != full["first"]  # depends on crosscheck_items
    assert quick["missing"] == full["missing"]  # depends on no size
    assert quick["after"] != full["after"]  # depends on "first"
    other_seed = step_hashes(DemoConfig(model="fake", quick=True, seed=1), steps)
    assert other_seed["missing"] != quick["missing"]
    from dataclasses import replace

    bumped = step_hashes(DemoConfig(model="fake", quick=True), (replace(steps[0], version=2),) + steps[1:])
    assert bumped["first"] != quick["first"] and bumped["after"] != quick["after"]
    assert bumped["missing"] == quick["missing"]


def test_damaged_step_file_is_recomputed(tmp_path: Path) -> None:
    calls: list[str] = []
    cfg = DemoConfig(model="fake", output=tmp_path / "out")
    run_demo(cfg, _steps(calls)[:1], say=lambda s: None)
    (cfg.results_dir / "step-first.json").write_text("{ truncated", encoding="utf-8")
    calls.clear()
    run_demo(cfg, _steps(calls)[:1], say=lambda s: None)
    assert calls == ["ok"]


def test_report_from_saved_results_without_torch(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from liedar.commands import report\n"
        "import argparse\n"
        f"rc = report.run(argparse.Namespace(results={str(SAVED_RESULTS)!r}, output={str(tmp_path)!r}))\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'llama_cpp', 'models', 'probes') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stdout
    assert json.loads((tmp_path / "report.json").read_text())["schema_version"] == SCHEMA_VERSION
    assert (tmp_path / "index.html").is_file() and (tmp_path / "report.md").is_file()


def test_report_cli_bad_folder_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "liedar.cli", "report", "--from", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "run.json missing" in proc.stderr


def test_unknown_model_stops_the_demo_with_one_clear_error(tmp_path: Path) -> None:
    from liedar.core.errors import InputError

    def needs_model(ctx):
        ctx.model()
        return Section(), {}

    cfg = DemoConfig(model="no-such-model", output=tmp_path / "out")
    with pytest.raises(InputError, match="unknown model 'no-such-model'"):
        run_demo(cfg, (Step("probes", needs_model),), say=lambda s: None)


def test_results_with_nan_and_numpy_values_are_saved_as_json(tmp_path: Path) -> None:
    import numpy as np

    from liedar.core._util.atomic import write_json_atomic

    write_json_atomic(
        tmp_path / "x.json", {"a": float("nan"), "b": np.int64(3), "c": (np.float32(0.5), np.bool_(True))}
    )
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": None, "b": 3, "c": [0.5, True]}
