"""``liedar behavioral menus``: the menu study as an instrument (its flags, its run on one
process or on worker processes, its report rows).

Why its own module: the study (`liedar.behavioral.runners.menus`) and its pool
(`liedar.behavioral.runners.menus_pool`) are what the instrument composes; the pool builds on
the study, so the instrument, which chooses between them, sits above both.
"""

from __future__ import annotations

import argparse
from typing import Any, Optional, Sequence

from liedar.behavioral.instrument import LOCAL_BACKENDS, DemoPlan, Flag, Instrument, InstrumentRun
from liedar.behavioral.items.menus import SCENARIOS
from liedar.behavioral.menus_summary import study_tables
from liedar.behavioral.runners.menus import (
    MODES,
    ORDERS,
    SAMPLING_DEFAULTS,
    StudySettings,
    check_study_arguments,
    letters_unread,
    run_menu_study,
)
from liedar.behavioral.runners.menus_pool import run_menu_study_pooled
from liedar.core._util.argtypes import comma_list, int_up_to, nonnegative_float, open_unit_interval, worker_count
from liedar.core.errors import InputError
from liedar.core.results import Section
from liedar.core.rows import add_measure, default_interval
from liedar.core.stats import DEFAULT_INTERVAL, proportion
from liedar.models.backend import Backend

# a menu's K samples give its choice rates; past 10,000 their intervals are already narrower than
# the tests' differences, so more only takes time (the default is 20)
MAX_SAMPLES = 10_000
MAX_BOOTSTRAP = 100_000  # the RUM p-value's draws (default 199): p to five decimals


class MenuStudy(Instrument):
    """``liedar behavioral menus``: is one stable ranking behind the model's choices across
    menus (SARP, WARP, IIA, Houtman-Maks; RUM in stochastic mode)?"""

    name = "menus"
    title = "revealed-preference tests (SARP, IIA, Houtman-Maks, RUM) on choices across menus"
    demo = DemoPlan(
        full={"limit": 3, "tiers": ("clear",), "framings": ("minimal",)},
        quick={"limit": 1, "tiers": ("clear",), "framings": ("minimal",)},
        order=60,
    )
    version = 5  # letterings and seeds keyed on the configuration's place in the whole design
    flags = (
        Flag(
            "--mode",
            "deterministic: argmax of option-letter log-probs; stochastic: K sampled replies; "
            "exact: the letters' exact law at --temperature (RUM without sampling noise) and the argmax",
            default="deterministic",
            choices=MODES,
        ),
        Flag(
            "--samples",
            "K, samples per menu in stochastic mode (default 20)",
            type=int_up_to(MAX_SAMPLES, "more samples per menu than the study's rates can use"),
        ),
        Flag("--temperature", "sampling temperature, stochastic and exact modes (0.7)", type=nonnegative_float),
        Flag("--scenarios", "comma-separated scenario keys (all)", type=comma_list),
        Flag("--tiers", "comma-separated tiers: clear,binary,ambiguous,adversarial", type=comma_list),
        Flag(
            "--framings",
            "comma-separated framings: minimal,decision_tree,conservative,aggressive,chain_of_thought",
            type=comma_list,
        ),
        Flag("--alpha", "level of the RUM test, stochastic mode (0.05)", type=open_unit_interval),
        Flag(
            "--bootstrap",
            "bootstrap draws for the RUM p-value (199)",
            key="rum_bootstrap",
            type=int_up_to(MAX_BOOTSTRAP, "more draws than a p-value to five decimals needs"),
        ),
        Flag(
            "--order",
            "letter the options in a seeded random order per menu (default), or always mild -> drastic",
            default="shuffled",
            choices=ORDERS,
        ),
        Flag(
            "--workers",
            "one-thread worker processes, each loading the local model once (default 1: this process)",
            default=1,
            type=worker_count,
        ),
    )

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The flags' options, the sampling ones only in the modes that sample (their defaults
        filled in after that check: a default is not a flag given)."""
        stochastic_only = {"--samples": args.samples, "--temperature": args.temperature, "--alpha": args.alpha,
                           "--bootstrap": args.bootstrap}  # fmt: skip
        if args.mode == "exact":
            stochastic_only.pop("--temperature")
        if args.mode != "stochastic":
            given = [flag for flag, v in stochastic_only.items() if v is not None]
            if given:
                raise InputError(
                    f"{', '.join(given)} only apply to --mode stochastic ({args.mode} mode scores each menu once)"
                )
        opts = super().options(args)
        opts.update({k: v for k, v in SAMPLING_DEFAULTS.items() if opts[k] is None})
        check_study_arguments(opts["mode"], opts["samples"], opts["temperature"], args.scenarios, args.tiers,
                              args.framings)  # fmt: skip
        if opts["workers"] > 1:
            if getattr(args, "base_url", None) or getattr(args, "backend", None) not in LOCAL_BACKENDS:
                raise InputError(
                    "--workers loads a local model in each worker process; a served model (--base-url) is one "
                    "endpoint: use --concurrency for it, or --workers 1"
                )
            opts["pool_model"] = args.model  # what each worker loads: the name the command was given
        return opts

    def items(
        self, *, limit: Optional[int] = None, seed: int = 0, scenarios: Optional[Sequence[str]] = None, **options: Any
    ) -> list[str]:
        """Scenario keys (each brings its vignettes, framings and 15 menus); ``limit``
        scenarios in the bank's order."""
        keys = list(scenarios or SCENARIOS)
        return keys if limit is None else keys[:limit]

    def run(
        self,
        backend: Backend,
        items: Sequence[str],
        *,
        interval: str = DEFAULT_INTERVAL,
        seed: int = 0,
        progress: bool = False,
        scenarios: Optional[Sequence[str]] = None,
        **options: Any,
    ) -> InstrumentRun:
        workers, pool_model = options.pop("workers", 1), options.pop("pool_model", None)
        if workers > 1 and pool_model is not None:
            settings_keys = ("mode", "samples", "temperature", "alpha", "rum_bootstrap", "order")
            fields: dict[str, Any] = {f: options.pop(f) for f in settings_keys if f in options}
            study = run_menu_study_pooled(
                pool_model, backend=backend.kind, workers=workers, scenarios=list(items),
                settings=StudySettings(seed=seed, **fields), load_kwargs=_worker_load_kwargs(backend),
                progress=progress, **options,
            )  # fmt: skip
            return InstrumentRun(self.name, study, [], (), {**fields, **options, "workers": workers})
        study = run_menu_study(backend, scenarios=list(items), seed=seed, progress=progress, **options)
        return InstrumentRun(self.name, study, [], (), dict(options))

    def section(self, run: InstrumentRun) -> Section:
        """SARP pass rate, IIA-reversal rate and (stochastic mode) mixed menus."""
        study = run.result
        configs = study.configs
        with_parse_fail = default_interval(study.sarp_pass(True))
        s = Section()
        with_rev = sum(1 for c in configs if c.iia_reversals > 0)
        add_measure(
            s,
            id="sarp_pass",
            label="SARP pass rate (menu study configurations)",
            instrument="revealed",
            scale="proportion",
            estimate=default_interval(study.sarp_pass()),
            higher_is_deceptive=False,
            warnings=tuple(w for w in (letters_unread(configs),) if w is not None),
            details={
                "mode": study.mode,
                "pass_counting_parse_fail_as_revealed": with_parse_fail.to_dict() if with_parse_fail else None,
                "parse_fails": sum(c.n_parse_fail for c in configs),
                "notes": list(study.notes),
            },
        )
        add_measure(
            s,
            id="iia_reversal_configs",
            label="Configurations with an IIA reversal (menu study)",
            instrument="revealed",
            scale="proportion",
            estimate=proportion(with_rev, len(configs), "propensity", DEFAULT_INTERVAL),
            higher_is_deceptive=True,
            details={
                "total_reversals": sum(c.iia_reversals for c in configs),
                "by_scenario": study.iia_reversals_by_scenario(),
            },
        )
        if study.mode == "stochastic":  # deterministic studies sample each menu once: nothing to be mixed
            add_measure(
                s,
                "no menu had repeated samples to compare",
                id="mixed_menus",
                label="Mixed menus (samples not unanimous)",
                instrument="revealed",
                scale="proportion",
                estimate=default_interval(study.mixed_menu_share()),
                higher_is_deceptive=None,
            )
        return s

    def summary(self, run: InstrumentRun) -> str:
        return study_tables(run.result)


def _worker_load_kwargs(backend: Backend) -> dict[str, Any]:
    """What a pooled worker loads its own copy of the model with, so it runs the model the
    parent would have: the same context cap and, on transformers, the same weight dtype
    (a bfloat16 study computed in float32 by its workers would be another study)."""
    kwargs: dict[str, Any] = {"n_ctx": backend.n_ctx}
    dtype = getattr(backend, "dtype_name", None)
    if dtype is not None:
        kwargs["dtype"] = dtype
    return kwargs
