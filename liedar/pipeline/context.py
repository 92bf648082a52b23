"""What every pipeline step shares: the run's configuration, its lazily loaded model, the
step type and the per-step configuration hash.

Why apart from the steps and the runner: the step functions (`demo_steps`) and the pipeline
that runs them (`demo`) both need these, and neither should import the other's module to
get them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

import numpy as np

from liedar import __version__
from liedar.core.errors import LiedarError
from liedar.core.results import SCHEMA_VERSION, Section
from liedar.models.backend import Backend
from liedar.report.store import config_hash, weights_key

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
    call_cache: bool = True  # replay deterministic model calls from the cache (models.call_cache)
    workers: int = 1  # processes the validation section's models are spread over (pipeline.validate_pool)

    @property
    def results_dir(self) -> Path:
        return Path(self.output) / RESULTS_DIR

    def sizes(self) -> dict[str, Any]:
        """Sizes of the white-box steps, chosen (and measured, docs/report.md) to fit the time
        budgets; each behavioural instrument carries its own (``Instrument.demo``)."""
        if self.quick:
            return dict(
                statements_per_topic=30,
                sweep_layers=3,
                instructed_per_topic=10,
                tiu_per_topic=0,
                cv_folds=3,
                monitor_generations=2,
                monitor_tokens=16,
                roleplay_scenarios=10,
                crosscheck_items=8,
            )
        return dict(
            statements_per_topic=60,
            sweep_layers=5,
            instructed_per_topic=20,
            tiu_per_topic=40,
            cv_folds=4,
            monitor_generations=4,
            monitor_tokens=24,
            roleplay_scenarios=30,
            crosscheck_items=16,
        )

    # stays hand-written: writes some fields, the path as text and the derived sizes()
    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "backend": self.backend,
            "quick": self.quick,
            "datasets": None if self.datasets is None else str(self.datasets),
            "seed": self.seed,
            "sizes": self.sizes(),
        }


class DemoContext:
    """What a step may use: the config, the results folder, and the lazily loaded model.

    ``model()`` is the step's scoring engine over the backend behind the model-call cache (`liedar.models.call_cache`,
    unless ``config.call_cache`` is off): a step's deterministic questions are answered from
    the cache when asked before, bit-identical to the model's answers. ``raw_model()`` is
    the bare backend for code that changes or copies the weights (organism training, LoRA
    merges). Each step gets a fresh wrapper (`begin_step`), so a step that handed out the
    weights (weight noise; they are restored when it ends) does not turn caching off for
    the steps after it.
    """

    def __init__(self, config: DemoConfig) -> None:
        self.config = config
        self.sizes = config.sizes()
        self.results_dir = config.results_dir
        self._backend: Optional[Backend] = None
        self.load_error: Optional[LiedarError] = None
        self._step_wrapper: Any = None  # the base model's wrapper for the current step
        self._step_engine: Any = None  # the scoring engine over it
        self._counters: list[dict[str, int]] = []  # every wrapper's counts (not the wrappers: no model kept alive)
        self._shared_key: Optional[str] = None  # "" once looked up and not available

    def raw_model(self) -> Any:
        """The bare backend, loaded on first use; a load failure stops the whole demo (one line)."""
        if self._backend is None:
            from liedar import models

            try:
                self._backend = models.load(
                    self.config.model, backend=self.config.backend, n_threads=self.config.threads
                )
            except LiedarError as exc:
                self.load_error = exc
                raise
        return self._backend

    def model(self) -> Any:
        """The backend the steps ask: the step's scoring engine (`liedar.models.scoring`) over
        the model-call cache (unless it is switched off) over the model."""
        from liedar.models.scoring import ScoringEngine

        asked = self.wrap(self.raw_model())
        if self._step_engine is None or self._step_engine.inner is not asked:
            self._step_engine = ScoringEngine(asked)
        return self._step_engine

    def wrap(self, backend: Backend) -> Any:
        """``backend`` behind the call cache, or unchanged when the cache is off or the backend
        is not a local model. The base model keeps one wrapper per step; any other backend (an
        organism) gets a new one per call, counted in the run's totals."""
        if not self.config.call_cache:
            return backend
        w = self._step_wrapper
        if backend is self._backend and w is not None and w.inner is backend:
            return w
        from liedar.models.call_cache import wrap

        w = wrap(backend)
        if w is backend:
            return backend
        if backend is self._backend:
            self._step_wrapper = w
        self._counters.append(w.stats)
        return w

    def begin_step(self) -> None:
        """The next ``model()`` gets a fresh wrapper and engine (same store, same answers)."""
        self._step_wrapper = None
        self._step_engine = None

    def call_cache_stats(self) -> Optional[dict[str, int]]:
        """hits / misses / corrupt / passed_through summed over this run; None when switched off."""
        if not self.config.call_cache:
            return None
        from liedar.models.call_cache import new_stats

        out = new_stats()
        for counts in self._counters:
            for k, v in counts.items():
                out[k] = out.get(k, 0) + int(v)
        return out

    def shared_key(self) -> Optional[str]:
        """The weights key under which step results are shared across results folders; None
        when the model-call cache is off (the run was asked to compute everything again) or the
        model is not local weights. Read from the weights' hash, without loading the model."""
        if self._shared_key is None:
            self._shared_key = ""
            if self.config.call_cache:
                from liedar.models.registry import weights_identity

                try:
                    self._shared_key = weights_key(weights_identity(self.config.model, self.config.backend))
                except LiedarError:
                    pass  # an unknown model or a served one: results stay in their folder
        return self._shared_key or None

    def model_info(self) -> dict[str, Any]:
        info = {"name": self.config.model, "backend": self.config.backend}
        if self._backend is not None:
            info.update(
                fingerprint=self._backend.fingerprint, n_layers=self._backend.n_layers, d_model=self._backend.d_model
            )
        return info

    @property
    def probe_path(self) -> Path:
        return self.results_dir / PROBE_FILE

    def rng(self, salt: int) -> np.random.Generator:
        return np.random.default_rng([self.config.seed, salt])


StepFn = Callable[[DemoContext], tuple[Section, dict[str, Any]]]


@dataclass(frozen=True)
class Step:
    name: str
    run: StepFn
    params: tuple[str, ...] = ()  # which sizes this step's results depend on
    depends: tuple[str, ...] = ()
    description: str = ""
    version: int = 1  # bump when the step computes something different: old results are then redone
    config: Mapping[str, Any] = field(default_factory=dict)  # what else its results depend on (e.g. a plan)
    # its result is a function of its config and the weights alone, so a run into another results
    # folder reads it from the cache (`liedar.report.store.shared_path`); False for a step that
    # also writes a file into the folder (the probe)
    shared: bool = True


def step_hashes(config: DemoConfig, steps: tuple[Step, ...]) -> dict[str, str]:
    """Each step's config hash: step code version, model, seed, its own sizes, liedar version,
    and the hashes of the steps it reads from."""
    sizes = config.sizes()
    hashes: dict[str, str] = {}
    for st in steps:
        hashes[st.name] = config_hash(
            {
                "step": st.name,
                "version": st.version,
                "model": config.model,
                "backend": config.backend,
                "seed": config.seed,
                "datasets": None if config.datasets is None else str(Path(config.datasets).resolve()),
                "sizes": {k: sizes[k] for k in st.params},
                "liedar": __version__,
                "schema": SCHEMA_VERSION,
                "depends": [hashes[d] for d in st.depends],
                "config": dict(st.config),
            }
        )
    return hashes
