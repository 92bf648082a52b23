"""Report rows for the consistency detector's baseline-aware contrast.

Why a separate step after `adapters.consistency_section`: that section shows each prompt's
single-condition detector score, and on a model with a built-in letter preference
(smollm2-135m: "C" on 24/24 honest trials) both prompts are flagged. The verdict belongs to
the *difference* from the honest baseline, so this adds one row per contrast (test minus
reference, item-paired, permutation p-value) carrying the flag, and demotes the
single-condition flags to details: the page then never says "FLAGGED" for an honest prompt
whose only sin is a letter bias it shares with itself.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from liedar.results import Caveat, Measure, Section

LABELS = {
    "position_concentration": "Position concentration",
    "answer_inconsistency": "Answer inconsistency across shuffles",
    "paraphrase_kappa_drop": "Paraphrase kappa drop",
}


def add_consistency_contrast(section: Section, run: Any) -> Section:
    """Append the contrast rows of a `behavioral.runners.consistency.ConsistencyRun` to
    ``section`` (in place, also returned); a run without contrasts leaves it unchanged."""
    contrasts = getattr(run, "contrasts", None) or {}
    if not contrasts:
        return section
    ceiling = next((c.id for c in section.ceilings), None)
    for i, m in enumerate(section.measures):
        if m.id.startswith("consistency_") and m.scale == "score" and m.flag is not None:
            section.measures[i] = replace(
                m,
                flag=None,
                details={
                    **m.details,
                    "single_condition_flag": m.flag,
                    "verdict": "a flag needs a difference from the honest baseline: see the contrast rows",
                },
            )
    for test_name, c in contrasts.items():
        ref = c.reference.name
        for j, t in enumerate(c.contrasts):
            order = f"{ref} − {test_name}" if t.name == "paraphrase_kappa_drop" else f"{test_name} − {ref}"
            section.measures.append(
                Measure(
                    id=f"consistency_contrast_{test_name}_{t.name}",
                    label=f"{LABELS.get(t.name, t.name)}, {order} (item-paired contrast)",
                    instrument="consistency",
                    scale="difference",
                    estimate=t.effect,
                    ceiling=ceiling,
                    higher_is_deceptive=True,
                    null_value=0.0,
                    flag=bool(t.flags),
                    warnings=(Caveat("contrast_reading", c.reading), *(Caveat("contrast_note", n) for n in c.notes))
                    if j == 0
                    else (),  # the verdict's reading, shown once
                    details={
                        "p_value": t.p_value,
                        "alpha": t.alpha,
                        "method": t.method,
                        "min_effect": c.min_effect,
                        "reference_value": t.reference_value,
                        "test_value": t.test_value,
                        "contrast_detected": c.detected,
                        "reading": c.reading,
                        "notes": list(c.notes),
                        "letter_prior": {p.name: [list(q.counts) for q in p.positions] for p in (c.reference, c.test)},
                    },
                )
            )
    return section
