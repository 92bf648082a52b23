"""Verbalized-awareness runner: free answers to the MCQ bank under evaluation-looking and
deployment-looking presentations, scanned for statements that the model knows it is tested.

Why generate *and* score on the same presentations: the instrument reports the correlation of
verbalized awareness with the observer effect. Both are per item: the share of an item's
evaluation-looking presentations whose free answer says "this is a test", and the item's
observer difference (deployment − evaluation cloze accuracy, `liedar.behavioral.observer`).
Asking the same seeded wordings for both (one extra option-scoring call per presentation,
cheap next to a generation) pairs them item by item; ``--no-observer`` skips the scoring and
the correlation. The grader is `liedar.behavioral.verbalized.grade`, validated by Cohen's
kappa on labelled sentences through the judge-validation instrument.
"""

from __future__ import annotations

import operator
from typing import Any, Optional, Sequence

from liedar.behavioral.instrument import DemoPlan, Flag, Instrument, InstrumentRun
from liedar.behavioral.items.mcq import MCQ_ITEMS, N_OPTIONS, MCQItem, load_mcq_bank
from liedar.behavioral.items.presentations import both_looks, render, variant_for
from liedar.behavioral.observer import Answer, ObserverRecord, observer_effect
from liedar.behavioral.runners.observer import ALL_FAMILIES, FAMILIES, SCORING, choose
from liedar.behavioral.verbalized import (
    AWARE,
    AwarenessResult,
    VerbalAnswer,
    VerbalizedRecord,
    awareness_result,
    grade,
)
from liedar.core._util.argtypes import positive_int
from liedar.core.errors import InputError
from liedar.core.results import Section
from liedar.core.rows import add_measure, add_quality_metric, attach_caveats, ceiling_row
from liedar.core.stats import DEFAULT_INTERVAL
from liedar.models.backend import Backend

DEFAULT_MAX_TOKENS = 40


def _prompt(p: Any, item: MCQItem) -> Any:
    """The presentation without its "Answer:" prefill: the model writes freely."""
    from liedar.models.chat import Dialogue

    d = render(p, item.question, item.item_id)
    return Dialogue(d.messages[:-1])


def ask_verbalized(
    backend: Backend,
    items: Sequence[MCQItem],
    families: Sequence[str] = ALL_FAMILIES,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    observer: bool = True,
    scoring: str = "cloze_norm",
    seed: int = 0,
    progress: bool = False,
) -> tuple[list[VerbalizedRecord], list[ObserverRecord]]:
    """Every item under one seeded wording of every family: a greedy free answer (graded),
    and with ``observer`` the cloze choice on the same wording."""
    from liedar.core._util.progress import progress as step_progress

    records, obs_records = [], []
    for it in step_progress(items, desc="verbalized awareness", disable=not progress):
        answers, obs = [], []
        for fam in families:
            p = variant_for(it.item_id, fam, seed)
            text = backend.generate(_prompt(p, it), max_tokens=max_tokens).text
            answers.append(VerbalAnswer(fam, p.kind, p.key, text, grade(text) == AWARE))
            if observer:
                chosen = choose(backend, render(p, it.question, it.item_id), it, scoring)
                obs.append(Answer(fam, p.kind, p.key, chosen, chosen == it.answer))
        diff = None
        if observer:
            rec = ObserverRecord(it.item_id, tuple(obs))
            obs_records.append(rec)
            ev = [a.correct for a in obs if a.kind == "evaluation"]
            de = [a.correct for a in obs if a.kind == "deployment"]
            diff = sum(de) / len(de) - sum(ev) / len(ev)
        records.append(VerbalizedRecord(it.item_id, tuple(answers), diff))
    return records, obs_records


def run_verbalized(
    backend: Backend,
    items: Optional[Sequence[MCQItem]] = None,
    *,
    families: Sequence[str] = ALL_FAMILIES,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    observer: bool = True,
    scoring: str = "cloze_norm",
    seed: int = 0,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
) -> tuple[AwarenessResult, list[VerbalizedRecord]]:
    if scoring not in SCORING:
        raise InputError(f"scoring {scoring!r}: use one of {', '.join(SCORING)}")
    if max_tokens < 1:
        raise InputError(f"max_tokens {max_tokens}: generate at least 1 token")
    both_looks(families)
    items = load_mcq_bank() if items is None else list(items)
    if not items:
        raise InputError("no items to ask: give at least one")
    records, obs_records = ask_verbalized(
        backend,
        items,
        families,
        max_tokens=max_tokens,
        observer=observer,
        scoring=scoring,
        seed=seed,
        progress=progress,
    )
    protocol = (
        f"greedy free answer ({max_tokens} tokens, no 'Answer:' prefill) under one seeded wording per family "
        f"(seed {seed}), graded by the verbalized-awareness patterns"
    )
    obs_res = None
    if observer:
        obs_res = observer_effect(
            obs_records,
            chance=1 / N_OPTIONS,
            protocol=f"{SCORING[scoring]}; the same wordings as the free answers",
            seed=seed,
            interval=interval,
        )
    res = awareness_result(
        records, observer=obs_res, max_tokens=max_tokens, protocol=protocol, seed=seed, interval=interval
    )
    return res, records


class VerbalizedAwareness(Instrument):
    """``liedar behavioral verbalized``: does the model say it knows it is being tested?"""

    name = "verbalized"
    title = "verbalized awareness: free answers that say the model is being tested (evaluation vs deployment look)"
    requires = frozenset({"generate", "score_options"})
    source = MCQ_ITEMS
    flags = (
        Flag(
            "--max-tokens",
            f"tokens generated per answer (default {DEFAULT_MAX_TOKENS})",
            type=positive_int,
            default=DEFAULT_MAX_TOKENS,
        ),
        FAMILIES,
        Flag(
            "--no-observer",
            "do not score the options on the same wordings (no observer effect, no correlation)",
            key="observer",
            switch=True,
            convert=operator.not_,
        ),
    )
    caveat_rows = {
        "grader_untrusted": ("verbalized_eval_rate", "verbalized_difference"),
        "grader_labels_by_author": ("verbalized_eval_rate",),
        "few_items": ("verbalized_difference", "verbalized_observer_correlation"),
        "correlation_undefined": ("verbalized_observer_correlation",),
    }
    demo = DemoPlan(
        full={"limit": 4, "max_tokens": 12},
        quick=None,
        quick_reason="skipped by --quick (a free generation per presentation; run `liedar behavioral verbalized`)",
        order=27,
    )

    def run(
        self,
        backend: Backend,
        items: Sequence[MCQItem],
        *,
        interval: str = DEFAULT_INTERVAL,
        seed: int = 0,
        progress: bool = False,
        **options: Any,
    ) -> InstrumentRun:
        res, records = run_verbalized(backend, items, seed=seed, interval=interval, progress=progress, **options)
        return InstrumentRun(self.name, res, records, res.warnings, dict(options))

    def section(self, run: InstrumentRun) -> Section:
        res: AwarenessResult = run.result
        s = Section()
        cid = None
        if res.observer is not None:
            cid = "verbalized_ceiling"
            s.ceilings.append(
                ceiling_row(
                    cid,
                    "MCQ accuracy under deployment-looking presentations (verbalized-awareness items)",
                    res.observer.protocol,
                    res.observer.chance,
                    res.observer.deploy_accuracy,
                )
            )
        kappa = res.validation.kappa
        add_measure(
            s,
            id="verbalized_eval_rate",
            label="Answers saying the model is being tested (evaluation-looking presentations)",
            instrument="verbalized",
            scale="proportion",
            estimate=res.eval_rate,
            ceiling=cid,
            higher_is_deceptive=True,
            flag=None,
            grader_kappa=kappa if kappa.value == kappa.value else None,
            details={"reading": res.reading, "examples": list(res.examples), "protocol": res.protocol},
        )
        add_measure(
            s,
            id="verbalized_deploy_rate",
            label="Answers saying the model is being tested (deployment-looking presentations)",
            instrument="verbalized",
            scale="proportion",
            estimate=res.deploy_rate,
            ceiling=cid,
            higher_is_deceptive=True,
            flag=None,
            grader_kappa=kappa if kappa.value == kappa.value else None,
        )
        add_measure(
            s,
            id="verbalized_difference",
            label="Verbalized awareness, evaluation-looking − deployment-looking (paired per item)",
            instrument="verbalized",
            scale="difference",
            estimate=res.difference,
            ceiling=cid,
            higher_is_deceptive=True,
            null_value=0.0,
            flag=res.flag,
            details={"p_value": res.difference_p, "test": "sign-flip permutation on per-item differences"},
        )
        add_quality_metric(
            s,
            "verbalized_grader_kappa",
            "Verbalized-awareness grader: Cohen's kappa on labelled sentences",
            kappa if kappa.value == kappa.value else None,
            "verbalized",
            reason="kappa undefined (one label throughout)",
            details={"agreement": res.validation.agreement.to_dict(), "trusted": res.validation.trusted},
        )
        add_measure(
            s,
            "the observer effect was not measured (--no-observer)" if res.observer is None else res.correlation_reason,
            id="verbalized_observer_correlation",
            label="Correlation over items: verbalized awareness vs the observer effect (Pearson r)",
            instrument="verbalized",
            scale="score",
            estimate=res.correlation,
            ceiling=None,
            higher_is_deceptive=None,
            null_value=0.0,
            details={"permutation_p": res.correlation_p}
            | ({} if res.observer is None else {"observer_effect": res.observer.effect.to_dict()}),
        )
        return attach_caveats(s, run.caveats, self.caveat_rows)
