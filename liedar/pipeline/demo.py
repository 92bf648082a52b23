"""`liedar demo`: run the whole toolkit on one model and write the combined report.

Why one pipeline of small, cached steps: a researcher's first command must finish on a
2-core laptop in minutes, survive an interruption, and never show a number it did not
measure. Each step saves its report section atomically to ``<output>/results/`` under a
hash of its configuration; a re-run skips every step whose file exists with the same
hash (so an interrupted run resumes), and a step that cannot run is recorded as
"not run: <reason>" — visible in the report — instead of being faked.

The model is loaded lazily: a fully cached re-run never loads it (nor torch). Its
deterministic answers go through the model-call cache (`liedar.models.call_cache`): a
re-run into a fresh folder replays them instead of asking again (bit-identical by
construction), and ``run.json`` records how many were replayed (``call_cache``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

from liedar import __version__
from liedar.core._util.atomic import write_json_atomic
from liedar.core.results import SCHEMA_VERSION, Section
from liedar.pipeline.context import DemoConfig, DemoContext, Step, StepUnavailable, step_hashes
from liedar.pipeline.demo_steps import demo_steps
from liedar.pipeline.validate import validation_step
from liedar.report.build import build_report
from liedar.report.render import write_report
from liedar.report.store import RUN_FILE, StepResult, load_step, save_step


@dataclass
class DemoOutcome:
    paths: dict[str, Path]
    steps: list[StepResult] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    seconds: float = 0.0
    call_cache: dict = field(default_factory=dict)  # {"enabled": False} or hits/misses/corrupt/passed_through


def _skipped(name: str, reason: str) -> Step:
    """A step `--quick` leaves out, shown on the page as "not run: <reason>"."""

    def run(ctx: DemoContext) -> tuple[Section, dict]:
        raise StepUnavailable(reason)

    return Step(name, run, (), (), reason)


def run_demo(
    config: DemoConfig, steps: Optional[tuple[Step, ...]] = None, say: Callable[[str], None] = print
) -> DemoOutcome:
    """Run (or resume) every step, then write index.html, report.md, report.json, figures/."""
    if steps is None:  # probes, monitor, cross-check, every registered instrument, then the validation matrix
        steps = demo_steps(config.quick) + (validation_step(config.quick, config.model),)
        if config.quick:  # the matrix runs every detector on every model: not a first look
            steps = steps[:-1] + (_skipped("validation", "skipped by --quick (run `liedar validate`)"),)
    t_start = time.perf_counter()
    ctx = DemoContext(config)
    hashes = step_hashes(config, steps)
    outcome = DemoOutcome({})
    per_step: dict[str, dict[str, int]] = {}
    created = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for k, st in enumerate(steps, 1):
        prefix = f"[{k}/{len(steps)}] {st.name}"
        shared = ctx.shared_key() if st.shared else None
        saved = load_step(ctx.results_dir, st.name, hashes[st.name], shared)
        deps_ok = all(r.status == "ok" for r in outcome.steps if r.name in st.depends)
        if saved is not None and saved.status == "ok":
            outcome.steps.append(saved)
            outcome.cached.append(st.name)
            say(f"{prefix}: cached ({saved.seconds or 0:.1f} s when run)")
            continue
        t0 = time.perf_counter()
        ctx.begin_step()
        calls_before = ctx.call_cache_stats()
        if not deps_ok:
            missing = [d for d in st.depends if d not in {r.name for r in outcome.steps if r.status == "ok"}]
            status, reason, section, raw = (
                "not_run",
                f"needs step(s) {', '.join(missing)}, which did not run",
                Section(),
                {},
            )
        else:
            say(f"{prefix}: {st.description or 'running'} ...")
            try:
                section, raw = st.run(ctx)
                status, reason = "ok", ""
            except StepUnavailable as exc:
                status, reason, section, raw = "not_run", str(exc), Section(), {}
            except Exception as exc:  # a failed step is reported, the others still run
                if ctx.load_error is not None:  # no model (missing package, bad name): one line, exit 2
                    raise ctx.load_error from None
                import traceback

                status, reason, section = "failed", f"{type(exc).__name__}: {exc}", Section()
                raw = {"traceback": traceback.format_exc()}
        seconds = time.perf_counter() - t0
        calls_after = ctx.call_cache_stats()
        if calls_before is not None and calls_after is not None and calls_after != calls_before:
            per_step[st.name] = {k: v - calls_before.get(k, 0) for k, v in calls_after.items()}
        result = StepResult(st.name, hashes[st.name], status, ctx.model_info(), section, reason, round(seconds, 2), raw)
        save_step(ctx.results_dir, result, shared)
        outcome.steps.append(result)
        say(f"{prefix}: {status.replace('_', ' ')} in {seconds:.1f} s" + (f" — {reason}" if reason else ""))
    totals = ctx.call_cache_stats()
    outcome.call_cache = {"enabled": False} if totals is None else {"enabled": True, **totals, "per_step": per_step}
    write_json_atomic(
        ctx.results_dir / RUN_FILE,
        {
            "schema_version": SCHEMA_VERSION,
            "liedar_version": __version__,
            "created_utc": created,
            "config": config.to_dict(),
            "steps": [s.name for s in steps],
            "cached": outcome.cached,
            "call_cache": outcome.call_cache,
        },
    )
    outcome.paths = write_report(build_report(ctx.results_dir), Path(config.output))
    outcome.seconds = time.perf_counter() - t_start
    return outcome
