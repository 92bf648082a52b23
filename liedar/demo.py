"""`liedar demo`: run the whole toolkit on one model and write the combined report.

Why one pipeline of small, cached steps: a researcher's first command must finish on a
2-core laptop in minutes, survive an interruption, and never show a number it did not
measure. Each step saves its report section atomically to ``<output>/results/`` under a
hash of its configuration; a re-run skips every step whose file exists with the same
hash (so an interrupted run resumes), and a step that cannot run is recorded as
"not run: <reason>" — visible in the report — instead of being faked.

The model is loaded lazily: a fully cached re-run never loads it (nor torch).
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from liedar import __version__
from liedar.errors import LiedarError
from liedar.report.model import SCHEMA_VERSION, Section
from liedar.atomic import write_json_atomic
from liedar.report.store import RUN_FILE, StepResult, config_hash, load_step, save_step

DEFAULT_MODEL = "smollm2-135m"
RESULTS_DIR = "results"
PROBE_FILE = "lie-probe.npz"


class StepUnavailable(LiedarError):
    """A step cannot run in this build or configuration (recorded as "not run")."""


@dataclass(frozen=True)
class DemoConfig:
    model: str = DEFAULT_MODEL
    backend: str = "transformers"
    quick: bool = False
    datasets: Optional[Path] = None
    output: Path = Path("liedar-report")
    seed: int = 0
    threads: Optional[int] = None

    @property
    def results_dir(self) -> Path:
        return Path(self.output) / RESULTS_DIR

    def sizes(self) -> dict[str, Any]:
        """Step sizes, chosen (and measured, docs/report.md) to fit the time budgets."""
        if self.quick:
            return dict(statements_per_topic=30, sweep_layers=3, instructed_per_topic=10, tiu_per_topic=0,
                        cv_folds=3, monitor_generations=2, monitor_tokens=16, roleplay_scenarios=10,
                        crosscheck_items=12, mcq_items=10, shuffles=3, paraphrases=2, menu_scenarios=3, menu_tiers=("clear",),
                        instrument_items=12, noise=False, noise_items=0, noise_sigmas=(), noise_seeds=0,
                        ceiling_items=15, ceiling_protocols=("zero_shot_letter", "cloze_sum", "cloze_norm"))
        return dict(statements_per_topic=60, sweep_layers=5, instructed_per_topic=20, tiu_per_topic=40,
                    cv_folds=4, monitor_generations=4, monitor_tokens=24, roleplay_scenarios=30,
                    crosscheck_items=16, mcq_items=15, shuffles=3, paraphrases=2, menu_scenarios=3, menu_tiers=("clear",),
                    instrument_items=16, noise=True, noise_items=12, noise_sigmas=(0.0, 0.002, 0.008),
                    noise_seeds=2, ceiling_items=18,
                    # permutation_letter (4 forward passes per item) is left to `liedar behavioral gap`:
                    # with it the warm run measured 181 s, over the 3-minute budget
                    ceiling_protocols=("zero_shot_letter", "k_shot_letter", "cloze_sum", "cloze_norm"))

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "backend": self.backend, "quick": self.quick,
                "datasets": None if self.datasets is None else str(self.datasets), "seed": self.seed,
                "sizes": self.sizes()}


class DemoContext:
    """What a step may use: the config, the results folder, and the lazily loaded model."""

    def __init__(self, config: DemoConfig) -> None:
        self.config = config
        self.sizes = config.sizes()
        self.results_dir = config.results_dir
        self._backend: Any = None
        self.load_error: Optional[LiedarError] = None

    def model(self) -> Any:
        """The backend, loaded on first use; a load failure stops the whole demo (one line)."""
        if self._backend is None:
            import models

            try:
                self._backend = models.load(self.config.model, backend=self.config.backend,
                                            n_threads=self.config.threads)
            except LiedarError as exc:
                self.load_error = exc
                raise
        return self._backend

    def model_info(self) -> dict[str, Any]:
        info = {"name": self.config.model, "backend": self.config.backend}
        if self._backend is not None:
            info.update(fingerprint=self._backend.fingerprint, n_layers=self._backend.n_layers,
                        d_model=self._backend.d_model)
        return info

    @property
    def probe_path(self) -> Path:
        return self.results_dir / PROBE_FILE

    def rng(self, salt: int) -> np.random.Generator:
        return np.random.default_rng([self.config.seed, salt])


def require_module(name: str) -> Any:
    """Import a project module a step needs; a missing one makes the step "not run"."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise StepUnavailable(f"{name} is not part of this build") from exc
        raise


StepFn = Callable[[DemoContext], tuple[Section, dict[str, Any]]]


@dataclass(frozen=True)
class Step:
    name: str
    run: StepFn
    params: tuple[str, ...] = ()  # which sizes this step's results depend on
    depends: tuple[str, ...] = ()
    description: str = ""
    version: int = 1  # bump when the step computes something different: old results are then redone


@dataclass
class DemoOutcome:
    paths: dict[str, Path]
    steps: list[StepResult] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    seconds: float = 0.0


def step_hashes(config: DemoConfig, steps: tuple[Step, ...]) -> dict[str, str]:
    """Each step's config hash: step code version, model, seed, its own sizes, liedar version,
    and the hashes of the steps it reads from."""
    sizes = config.sizes()
    hashes: dict[str, str] = {}
    for st in steps:
        hashes[st.name] = config_hash({
            "step": st.name, "version": st.version, "model": config.model, "backend": config.backend, "seed": config.seed,
            "datasets": None if config.datasets is None else str(Path(config.datasets).resolve()),
            "sizes": {k: sizes[k] for k in st.params}, "liedar": __version__, "schema": SCHEMA_VERSION,
            "depends": [hashes[d] for d in st.depends],
        })
    return hashes


def run_demo(config: DemoConfig, steps: Optional[tuple[Step, ...]] = None,
             say: Callable[[str], None] = print) -> DemoOutcome:
    """Run (or resume) every step, then write index.html, report.md, report.json, figures/."""
    from liedar.demo_steps import STEPS
    from liedar.report.build import build_report
    from liedar.report.render import write_report

    steps = STEPS if steps is None else steps
    t_start = time.perf_counter()
    ctx = DemoContext(config)
    hashes = step_hashes(config, steps)
    outcome = DemoOutcome({})
    created = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for k, st in enumerate(steps, 1):
        prefix = f"[{k}/{len(steps)}] {st.name}"
        saved = load_step(ctx.results_dir, st.name, hashes[st.name])
        deps_ok = all(r.status == "ok" for r in outcome.steps if r.name in st.depends)
        if saved is not None and saved.status == "ok":
            outcome.steps.append(saved)
            outcome.cached.append(st.name)
            say(f"{prefix}: cached ({saved.seconds or 0:.1f} s when run)")
            continue
        t0 = time.perf_counter()
        if not deps_ok:
            missing = [d for d in st.depends if d not in {r.name for r in outcome.steps if r.status == "ok"}]
            status, reason, section, raw = "not_run", f"needs step(s) {', '.join(missing)}, which did not run", Section(), {}
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
        result = StepResult(st.name, hashes[st.name], status, ctx.model_info(), section, reason, round(seconds, 2), raw)
        save_step(ctx.results_dir, result)
        outcome.steps.append(result)
        say(f"{prefix}: {status.replace('_', ' ')} in {seconds:.1f} s" + (f" — {reason}" if reason else ""))
    write_json_atomic(ctx.results_dir / RUN_FILE, {
        "schema_version": SCHEMA_VERSION, "liedar_version": __version__, "created_utc": created,
        "config": config.to_dict(), "steps": [s.name for s in steps], "cached": outcome.cached,
    })
    outcome.paths = write_report(build_report(ctx.results_dir), Path(config.output))
    outcome.seconds = time.perf_counter() - t_start
    return outcome
