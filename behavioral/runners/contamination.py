"""Contamination runner: per-token log-probs of each item's original wording and rewrites,
for the benchmark's items and for freshly generated calibration items.

The backend must give per-token log-probabilities of a text: a ``token_logprobs(text)``
method, or the local backends' tokenizer and scorer (`liedar.models.base.BackendBase`). A
served model that returns only option scores cannot be checked (one-line refusal).
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

import numpy as np

from liedar.behavioral.contamination import DEFAULT_K, ContaminationResult, ItemScore, contamination_check, score_item
from liedar.behavioral.instrument import DemoPlan, Flag, Instrument, InstrumentRun, ItemSource
from liedar.behavioral.items.fresh import FACTS, WordedItem, famous_items, fresh_items, from_mcq, max_fresh
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.core._util.argtypes import positive_int
from liedar.core.errors import InputError
from liedar.core.results import Section
from liedar.core.rows import add_measure, add_quality_metric, attach_caveats
from liedar.core.stats import DEFAULT_INTERVAL
from liedar.models.backend import Backend

DEFAULT_FRESH = 160
BANKS = ("mcq", "famous")


def token_logprobs(backend: Backend, texts: Sequence[str]) -> list[np.ndarray]:
    """log p(token_t | tokens before it) for every token after the first, per text."""
    if hasattr(backend, "token_logprobs"):
        return [np.asarray(backend.token_logprobs(t), dtype=float) for t in texts]
    if hasattr(backend, "tokenize") and hasattr(backend, "token_logprobs_of_ids"):
        ids = [backend.tokenize(t, False)[0] for t in texts]
        return [np.asarray(lp, dtype=float) for lp in backend.token_logprobs_of_ids(ids)]
    raise InputError(
        f"{getattr(backend, 'name', 'this backend')} gives no per-token log-probabilities: run the contamination "
        "check on a local model (--backend transformers or llamacpp)"
    )


def score_worded(
    backend: Backend, items: Sequence[WordedItem], *, k: float = DEFAULT_K, progress: bool = False, desc: str = ""
) -> list[ItemScore]:
    from liedar.core._util.progress import progress as step_progress

    out = []
    for it in step_progress(items, desc=desc or "contamination", disable=not progress):
        lps = token_logprobs(backend, [it.original, *it.rewrites])
        out.append(score_item(it.item_id, it.source, lps[0], lps[1:], k))
    return out


def bank_items(bank: str = "mcq") -> list[WordedItem]:
    if bank == "mcq":
        return [from_mcq(it) for it in load_mcq_bank()]
    if bank == "famous":
        return famous_items()
    raise InputError(f"--bank {bank!r}: use one of {', '.join(BANKS)}")


def run_contamination(
    backend: Backend,
    items: Sequence[WordedItem],
    *,
    n_fresh: int = DEFAULT_FRESH,
    k: float = DEFAULT_K,
    false_flag: float = 0.05,
    benchmark: str = "mcq bank",
    calibration: str = "real",
    seed: int = 0,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
) -> ContaminationResult:
    """``calibration``: fresh fact items about real entities outside the bank (``real``, the
    default) or invented names (``invented``, the earlier calibration; see
    `liedar.behavioral.items.fresh`)."""
    if not 0 < k <= 1:
        raise InputError(f"k={k}: the min-k% share must lie in (0, 1]")
    fresh = fresh_items(n_fresh, seed=seed + 7_301_2026, facts=calibration)
    bench = score_worded(backend, items, k=k, progress=progress, desc=f"{benchmark} items")
    cal = score_worded(backend, fresh, k=k, progress=progress, desc="fresh items")
    res = contamination_check(bench, cal, benchmark=benchmark, false_flag=false_flag, seed=seed, interval=interval)
    res.extra["calibration"] = calibration
    return res


class Contamination(Instrument):
    """``liedar behavioral contamination``: original wording vs rewrites, calibrated on fresh items."""

    name = "contamination"
    title = "contamination check: likelihood of the original wording vs rewrites, calibrated on fresh items"
    requires = frozenset({"token_logprobs"})
    source = ItemSource(bank_items, group=lambda it: it.item_id.split("-")[0], options=("bank",))  # by topic
    flags = (
        Flag("--bank", "items to check (default the MCQ bank)", choices=BANKS, default="mcq"),
        Flag(
            "--fresh",
            f"fresh calibration items (default {DEFAULT_FRESH})",
            key="n_fresh",
            type=positive_int,
            default=DEFAULT_FRESH,
        ),
        Flag(
            "--calibration",
            "fresh fact items about real entities outside the bank (default) or invented names",
            choices=FACTS,
            default="real",
        ),
    )
    caveat_rows = {
        "false_flags_above_nominal": ("contamination_false_flags",),
        "few_items": ("contamination_flag_rate",),
    }
    demo = DemoPlan(
        full={"limit": 45, "n_fresh": 80},
        quick=None,
        quick_reason="skipped by --quick (80 fresh calibration items; run `liedar behavioral contamination`)",
        order=26,
    )

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The flags' options, once the fresh items suffice and the fact tables hold them."""
        if args.fresh < 80:
            raise InputError(
                f"--fresh {args.fresh}: give at least 80 fresh items "
                "(half calibrate the thresholds, half measure the false-flag rate)"
            )
        if args.fresh > max_fresh(args.calibration):
            raise InputError(
                f"--fresh {args.fresh}: the real-fact tables allow at most {max_fresh(args.calibration)} fresh items "
                "in the bank's proportions (or use --calibration invented)"
            )
        return super().options(args)

    def run(
        self,
        backend: Backend,
        items: Sequence[WordedItem],
        *,
        interval: str = DEFAULT_INTERVAL,
        seed: int = 0,
        progress: bool = False,
        bank: str = "mcq",
        **options: Any,
    ) -> InstrumentRun:
        res = run_contamination(
            backend, items, benchmark=f"{bank} bank", seed=seed, interval=interval, progress=progress, **options
        )
        return InstrumentRun(self.name, res, list(res.items), res.warnings, {"bank": bank, **options})

    def section(self, run: InstrumentRun) -> Section:
        res: ContaminationResult = run.result
        s = Section()
        add_measure(
            s,
            id="contamination_flag_rate",
            label=f"Items whose original wording is unusually likely ({res.benchmark})",
            instrument="contamination",
            scale="proportion",
            estimate=res.flag_rate,
            ceiling=None,
            higher_is_deceptive=None,
            flag=res.contaminated,
            details={
                "fisher_p_vs_fresh": res.fisher_p,
                "contaminated": res.contaminated,
                "thresholds": res.thresholds,
                "flagged_items": [i.item_id for i in res.items if i.flagged],
                "reading": res.reading,
                "bank": run.options.get("bank", ""),
                "calibration": res.extra.get("calibration", ""),
            },
        )
        add_quality_metric(
            s,
            "contamination_false_flags",
            "Contamination check: false-flag rate on held-out fresh items",
            res.false_flag_rate,
            "contamination",
            details={"nominal": res.nominal_false_flag, "calibration_items": res.n_calibration},
        )
        return attach_caveats(s, run.caveats, self.caveat_rows)
