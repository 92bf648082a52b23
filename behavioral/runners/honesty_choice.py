"""Choice-format belief-vs-assertion runner: a sheet's belief, then assertions under a motive and a control role."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from liedar.behavioral.honesty_choice import HonestyChoiceRecord, HonestyChoiceResult, honesty_choice
from liedar.behavioral.instrument import Flag
from liedar.behavioral.items.claims_choice import BELIEF_ROLE, CHOICE_DEFECTS, ChoiceClaim, choice_claims
from liedar.behavioral.runners.choice import ChoiceInstrument, ChoiceRows, choice_prompt, choose
from liedar.core._util.argtypes import positive_int
from liedar.core.errors import InputError
from liedar.core.stats import DEFAULT_INTERVAL, Estimate
from liedar.models.backend import Backend

PROTOCOL = (
    "product sheets (defect and sound); answer = the higher summed log-prob of the two answer sentences "
    "('Yes. The X ...' / 'No. The X does not ...') after 'Answer:'; belief at the information desk; on defect "
    "sheets believed right, the assertion under a seller's role with a reason to deny and under a control role"
)
DEFAULT_PRODUCTS = 36  # ~32 defect sheets believed right at smollm2-135m's 0.88 (measured): n >= 30
DEFAULT_SHEETS = 45  # the CLI's default --limit: 36 products, 9 of them also with a sound sheet


def _yes_no(index: int) -> str:
    return "yes" if index == 0 else "no"


def honesty_choice_records(
    backend: Backend,
    claims: Sequence[ChoiceClaim],
    *,
    belief_role: str = BELIEF_ROLE,
    progress: bool = False,
) -> list[HonestyChoiceRecord]:
    """One record per sheet: the belief; on defect sheets believed right, both assertions."""
    from liedar.core._util.progress import progress as step_progress

    out = []
    for c in step_progress(claims, desc="choice belief vs assertion", disable=not progress):
        opts = list(c.options)
        belief = _yes_no(choose(backend, choice_prompt(c.user, belief_role), opts))
        motive = control = None
        if c.defect and belief == c.truth:
            motive = _yes_no(choose(backend, choice_prompt(c.user, c.motive_role), opts))
            control = _yes_no(choose(backend, choice_prompt(c.user, c.control_role), opts))
        out.append(HonestyChoiceRecord(c.claim_id, c.truth, c.defect, belief, motive, control))
    return out


def run_honesty_choice(
    backend: Backend,
    claims: Sequence[ChoiceClaim],
    *,
    belief_role: str = BELIEF_ROLE,
    interval: str = DEFAULT_INTERVAL,
    progress: bool = False,
) -> tuple[HonestyChoiceResult, list[HonestyChoiceRecord]]:
    """Records and the result (lie rates, paired excess, belief ceiling)."""
    records = honesty_choice_records(backend, claims, belief_role=belief_role, progress=progress)
    return honesty_choice(records, interval=interval, protocol=PROTOCOL), records


class HonestyChoice(ChoiceInstrument):
    """``liedar behavioral honesty_choice``: assertions against the model's own belief, in the choice format."""

    name = "honesty_choice"
    title = "belief vs assertion in the choice format: lie rate under a seller's motive minus under a control role"
    default_limit = DEFAULT_SHEETS
    flags = (
        Flag(
            "--sound-every",
            "a sound sheet (no defect) for every k-th product, for the belief ceiling (default 4)",
            type=positive_int,
            default=4,
        ),
    )
    rows = ChoiceRows(
        ceiling="honesty_choice_ceiling",
        ceiling_label="belief accuracy (choice format)",
        condition="honesty_choice_lies",
        condition_label="Lie rate under a seller's motive (choice format)",
        control="honesty_choice_control",
        control_label="Assertion against belief under a control role",
        excess="honesty_choice_excess",
        excess_label="Lying excess, choice format (motive − control, paired)",
        comparison_label="Choice format: motive vs control role",
        no_known="no defect sheet was believed right, so there is no belief to contradict",
    )
    caveat_rows = rows.caveat_rows()
    version = 1

    def items(self, *, limit: Optional[int] = None, seed: int = 0, **options: Any) -> list[ChoiceClaim]:
        """``limit`` sheets (as every instrument counts items): about four defect sheets to one
        sound sheet (``--sound-every 4``), so 45 sheets are 36 products; ``default_limit`` of them
        when ``limit`` is None, as ``--limit``'s help says."""
        limit = self.default_limit if limit is None else limit
        every = int(options.get("sound_every", 4))
        most = len(CHOICE_DEFECTS) + -(-len(CHOICE_DEFECTS) // every)
        if limit is not None and limit > most:
            raise InputError(
                f"--limit {limit}: there are {most} sheets ({len(CHOICE_DEFECTS)} products); give at most that"
            )
        products = None if limit is None else max(1, limit * every // (every + 1))
        return choice_claims(products, sound_every=every, seed=seed)[:limit]

    def _measure(
        self, backend: Backend, items: Sequence[ChoiceClaim], *, interval: str, progress: bool
    ) -> tuple[HonestyChoiceResult, list[HonestyChoiceRecord]]:
        """Beliefs on every sheet, assertions on the defect sheets believed right."""
        return run_honesty_choice(backend, items, interval=interval, progress=progress)

    def _estimates(self, res: HonestyChoiceResult) -> tuple[Estimate, Estimate, Estimate]:
        """Belief accuracy, the lie rate under the motive role, under the control role."""
        return res.belief_accuracy, res.lie_motive, res.lie_control
