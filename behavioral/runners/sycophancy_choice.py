"""Choice-format sycophancy runner: each MCQ item asked neutrally, then under a wrong and a right suggestion."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence

from liedar.behavioral.items.mcq import MCQ_ITEMS
from liedar.behavioral.items.sycophancy_choice import ChoiceSycophancyItem, choice_sycophancy_items
from liedar.behavioral.runners.choice import ChoiceInstrument, ChoiceRows, choice_prompt, choose
from liedar.behavioral.runners.elicitation import cloze_prompt
from liedar.behavioral.runners.sandbagging import BENIGN_SYSTEM
from liedar.behavioral.sycophancy_choice import (
    ChoiceSycophancyRecord,
    ChoiceSycophancyResult,
    choice_sycophancy,
)
from liedar.core.stats import DEFAULT_INTERVAL, Estimate
from liedar.models.backend import Backend

PROTOCOL = (
    "MCQ bank items in the cloze format (each option's text scored as the answer after 'Answer:', summed "
    "log-prob; benign quiz system prompt), asked neutrally, with the user suggesting a seeded wrong option, and "
    "with the same wording suggesting the right option; pressure asked only on items answered right neutrally"
)
DEFAULT_ITEMS = 40  # ~33 known items at smollm2-135m's 0.83 (measured): n >= 30, the verdict table's rule


def choice_sycophancy_records(
    backend: Backend,
    items: Sequence[ChoiceSycophancyItem],
    *,
    system: Optional[str] = BENIGN_SYSTEM,
    progress: bool = False,
) -> list[ChoiceSycophancyRecord]:
    """One record per item. The neutral prompt is `cloze_prompt` itself (the gap ceiling's
    cloze prompt under the same system text, so a shared score cache answers it once); an item
    answered wrong neutrally is not asked under pressure (it has no right answer to flip)."""
    from liedar.core._util.progress import progress as step_progress

    out = []
    for it in step_progress(items, desc="choice sycophancy", disable=not progress):
        mcq = it.item
        opts = list(mcq.options)
        neutral = opts[choose(backend, cloze_prompt(mcq, system, True), opts)]
        wrong = right = None
        if neutral == mcq.answer:
            wrong = opts[choose(backend, choice_prompt(it.pressure(it.suggested_wrong), system), opts)]
            right = opts[choose(backend, choice_prompt(it.pressure(mcq.answer), system), opts)]
        out.append(
            ChoiceSycophancyRecord(
                mcq.item_id, mcq.answer, len(opts), neutral, it.suggested_wrong, wrong, right, it.wording
            )
        )
    return out


def run_choice_sycophancy(
    backend: Backend,
    items: Sequence[ChoiceSycophancyItem],
    *,
    system: Optional[str] = BENIGN_SYSTEM,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
) -> tuple[ChoiceSycophancyResult, list[ChoiceSycophancyRecord]]:
    """Records and the result (flip rates, paired excess, capability ceiling)."""
    records = choice_sycophancy_records(backend, items, system=system, progress=progress)
    return choice_sycophancy(records, interval=interval, protocol=PROTOCOL), records


class ChoiceSycophancy(ChoiceInstrument):
    """``liedar behavioral sycophancy_choice``: flip rates under a user's suggestion, in the cloze format."""

    name = "sycophancy_choice"
    title = "sycophancy in the choice format: flips when the user suggests a wrong option vs the right one (paired)"
    default_limit = DEFAULT_ITEMS
    source = dataclasses.replace(MCQ_ITEMS, build=choice_sycophancy_items)  # each with its seeded wrong suggestion
    rows = ChoiceRows(
        ceiling="sycophancy_choice_ceiling",
        ceiling_label="cloze accuracy, neutral prompt",
        condition="sycophancy_choice_flip",
        condition_label="Flip rate, user suggests a wrong option (choice format)",
        control="sycophancy_choice_instability",
        control_label="Flip rate, user suggests the right option (control)",
        excess="sycophancy_choice_excess",
        excess_label="Sycophancy excess, choice format (user wrong − user right, paired)",
        comparison_label="Choice format: user wrong vs right",
        no_known="none of the {n_items} items was answered right neutrally, so no answer could flip",
    )
    caveat_rows = rows.caveat_rows()
    version = 1

    def _measure(
        self, backend: Backend, items: Sequence[ChoiceSycophancyItem], *, interval: str, progress: bool
    ) -> tuple[ChoiceSycophancyResult, list[ChoiceSycophancyRecord]]:
        """Every item neutrally, the known ones under a wrong and a right suggestion."""
        return run_choice_sycophancy(backend, items, interval=interval, progress=progress)

    def _estimates(self, res: ChoiceSycophancyResult) -> tuple[Estimate, Estimate, Estimate]:
        """Neutral accuracy, the flip rate when the user is wrong, when the user is right."""
        return res.neutral_accuracy, res.flip_user_wrong, res.flip_user_right

    def _condition_details(self, res: ChoiceSycophancyResult) -> dict[str, Any]:
        """How often a flip lands on exactly the user's wrong option."""
        return {"follows_user": res.follows_user.to_dict()}
