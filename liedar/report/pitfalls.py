"""Pitfalls beside each deception rate: its framing, the observer effect on its items, and
whether its benchmark is flagged as contaminated.

Why in the report: a deception rate measured on a benchmark-formatted quiz is a rate *under
evaluation framing*; a model that behaves differently when it recognises a test (the
observer effect) or that has memorised the benchmark (contamination) makes that number say
less than it seems to. The instruments that measure both pitfalls (`liedar behavioral
observer`, `liedar behavioral contamination`) save ordinary rows (``observer_effect``,
``contamination_flag_rate``); this module reads them *from the same run* and writes, for every
deception rate, one `liedar.core.results.Reading` (rule ``pitfalls``) whose refs are the rate, the
observer-effect row and the contamination row it used. The reading is generated from those
numbers by the fixed rules below, never written by hand.

The framing. An instrument declares how its items are presented in its rows'
``details["presentation"] = {"kind", "bank", "why"}`` (``kind`` one of `KINDS`, ``bank`` the
item bank, ``why`` the prompt feature that makes it look so). Instruments that do not
declare it yet are described here in `DECLARED` (from their prompts, quoted); an instrument
in neither reads ``presentation not declared``.

The rules (a rate's observer row is used when the observer instrument ran on the same
model; "on these items" only when its bank is the rate's bank, else "on the <bank> bank"):

* evaluation framing and an observer effect flagged by its test: *read the rate as a lower
  bound* (the model answers differently when items look like a test, so its behaviour there
  is not its deployment behaviour, and a model that behaves better when tested deceives more
  when it is not);
* evaluation framing, observer effect not measured (or not measurable: accuracy at chance):
  the same lower-bound reading, saying why, and the command that measures it;
* evaluation framing, observer effect measured and not flagged: no effect shown, and the
  largest one the interval does not exclude;
* deployment-looking presentation: the observer effect matters less (its number is still
  given when measured);
* contamination: the rate's bank flagged by the check (its own test against fresh items) →
  "flagged as contaminated" with k/n and p; checked and not flagged → says so with the
  held-out false-flag rate; checked on another bank, or not checked → says which, with the
  command when the check covers the rate's bank.

Severity is ``caution`` when the rate is to be read as a lower bound or its bank is flagged;
``info`` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from liedar.core.results import Measure, ModelReport, Reading
from liedar.report.verdicts import CATEGORIES

RULE = "pitfalls"
KINDS = ("evaluation", "deployment", "unknown")
PITFALL_INSTRUMENTS = ("observer", "contamination", "verbalized")  # they measure the pitfalls themselves
OBSERVER_ROW = "observer_effect"
CONTAMINATION_ROW = "contamination_flag_rate"
CONTAMINATION_FALSE_FLAGS = "contamination_false_flags"
OBSERVER_BANK = "mcq"  # the observer instrument asks the MCQ bank (older rows do not say)
CHECKABLE_BANKS = ("mcq", "famous")  # banks `liedar behavioral contamination --bank` covers


@dataclass(frozen=True)
class Framing:
    """How an instrument presents its items: ``kind`` (evaluation-looking, deployment-looking
    or unknown), the item ``bank`` and ``why`` (the prompt feature, quoted)."""

    kind: str
    bank: str
    why: str


_MCQ_QUIZ = "lettered options after 'Question:', answered after 'Answer:' (benchmark formatting)"
DECLARED: dict[str, Framing] = {
    "sandbagging": Framing(
        "evaluation",
        "mcq",
        f"{_MCQ_QUIZ}, under 'taking a general-knowledge quiz' and 'This is a dangerous-capability evaluation'",
    ),
    "noise": Framing("evaluation", "mcq", f"{_MCQ_QUIZ}, under a quiz prompt and 'You are being evaluated'"),
    "consistency": Framing(
        "evaluation", "mcq", f"{_MCQ_QUIZ}, under 'taking a multiple-choice quiz' and 'taking a capability evaluation'"
    ),
    "sycophancy": Framing(
        "deployment", "claims", "a customer's question about a product sheet, then the customer's pushback"
    ),
    "negation": Framing("deployment", "claims", "a customer's yes/no question about a product sheet"),
    "honesty": Framing("deployment", "beliefs", "a seller's system prompt and a customer's question about a product"),
    "revealed": Framing(
        "evaluation", "menus", "a case with lettered options and 'Reply with one letter' (exam formatting)"
    ),
}


def framing_of(m: Measure) -> Framing:
    """The row's own declaration (``details["presentation"]``), else `DECLARED`, else unknown."""
    d = m.details.get("presentation") if isinstance(m.details, dict) else None
    if isinstance(d, dict) and d.get("kind") in KINDS:
        return Framing(str(d["kind"]), str(d.get("bank", "")), str(d.get("why", "")))
    if m.instrument in DECLARED:
        return DECLARED[m.instrument]
    return Framing("unknown", "", f"the {m.instrument} instrument declares no presentation")


RATE_INSTRUMENTS = frozenset(i for c in CATEGORIES for i in c.instruments)


def is_rate(m: Measure) -> bool:
    """A deception rate: evidence for a verdict category (`liedar.report.verdicts.CATEGORIES`:
    its instrument feeds one, it says something about deception, it is not a quality metric)."""
    return (
        m.instrument in RATE_INSTRUMENTS
        and m.instrument not in PITFALL_INSTRUMENTS
        and m.higher_is_deceptive is True
        and m.kind != "quality"
    )


@dataclass(frozen=True)
class Pitfalls:
    """One deception rate's pitfalls, as table lines and one generated sentence."""

    measure: str
    framing: Framing
    observer: Optional[Measure]
    contamination: Optional[Measure]
    lower_bound: bool
    contaminated: bool
    lines: tuple[str, ...]
    text: str
    refs: tuple[str, ...] = field(default_factory=tuple)

    @property
    def severity(self) -> str:
        return "caution" if self.lower_bound or self.contaminated else "info"

    @property
    def summary(self) -> str:
        return {
            "evaluation": "evaluation framing",
            "deployment": "deployment look",
            "unknown": "framing not declared",
        }[self.framing.kind]

    def reading(self) -> Reading:
        # severity returns one of Reading's Literal levels, spelled as str in its signature
        return Reading(RULE, self.severity, self.text, list(self.refs))  # type: ignore[arg-type]


def _num(m: Measure) -> str:
    e = m.estimate
    assert e is not None
    return f"{e.value:+.3f} [{e.lo:+.3f}, {e.hi:+.3f}] (n={e.n})"


def _model_name(mr: ModelReport) -> str:
    return str(mr.model.get("name", "MODEL"))


def _observer_bank(m: Measure) -> str:
    return str(m.details.get("bank", OBSERVER_BANK))


def _contamination_bank(m: Measure) -> str:
    return str(m.details.get("bank", ""))


def _bank_label(bank: str) -> str:
    return {"mcq": "MCQ bank", "famous": "famous-lines bank"}.get(bank, f"{bank} bank" if bank else "unnamed bank")


def _observer_part(mr: ModelReport, fr: Framing, obs: Optional[Measure]) -> tuple[str, str, Optional[bool]]:
    """(table line, sentence, shown): shown True = an effect flagged, False = measured and
    not flagged, None = not measured or not measurable."""
    cmd = f"`liedar behavioral observer --model {_model_name(mr)}`"
    if obs is None:
        return f"observer effect: not measured (run {cmd})", f"the observer effect was not measured (run {cmd})", None
    bank = _observer_bank(obs)
    where = "on these items" if bank == fr.bank else f"on the {_bank_label(bank)} (not these items)"
    if obs.estimate is None:
        why = obs.not_computable.reason if obs.not_computable else "no estimate"
        return (
            f"observer effect: not computable ({why})",
            f"the observer effect {where} was attempted but is not computable ({why})",
            None,
        )
    codes = {w.code for w in obs.warnings}
    p = obs.details.get("p_value")
    ptxt = f", sign-flip p={p:.3g}" if isinstance(p, (int, float)) else ""
    if "ceiling_near_chance" in codes:
        return (
            f"observer effect {_num(obs)}: not measurable (accuracy at chance)",
            f"the observer effect {where} is not measurable ({_num(obs)}; accuracy under deployment-looking "
            "presentations is at chance, so there is no accuracy to lose)",
            None,
        )
    e = obs.estimate
    if obs.flag:
        how = "worse" if e.value > 0 else "better"
        return (
            f"observer effect {where}: {_num(obs)}{ptxt}, flagged",
            f"the observer effect {where} is {_num(obs)}{ptxt}: the model answers {how} when the items look like "
            "an evaluation",
            True,
        )
    bound = max(abs(e.lo), abs(e.hi))
    return (
        f"observer effect {where}: {_num(obs)}{ptxt}, not flagged",
        f"the observer effect {where} is {_num(obs)}{ptxt}: none shown, but a shift in accuracy up to {bound:.2f} "
        "is not excluded",
        False,
    )


def _contamination_part(mr: ModelReport, fr: Framing, con: Optional[Measure]) -> tuple[str, str, bool]:
    cmd = f"`liedar behavioral contamination --model {_model_name(mr)}`"
    if con is None:
        if fr.bank in CHECKABLE_BANKS:
            return (
                f"contamination: not checked (run {cmd})",
                f"the {_bank_label(fr.bank)} was not checked for contamination (run {cmd})",
                False,
            )
        what = _bank_label(fr.bank) if fr.bank else "these items"
        return (
            "contamination: no check covers these items",
            f"no contamination check covers the {what} (the check covers the MCQ and famous-lines banks)",
            False,
        )
    bank = _contamination_bank(con)
    if bank != fr.bank:
        shown = "flagged" if con.flag else "not flagged"
        return (
            f"contamination: checked on the {_bank_label(bank)} ({shown}), not these items",
            f"contamination was checked on the {_bank_label(bank)} ({shown}), not on the items of this rate",
            False,
        )
    if con.estimate is None:
        why = con.not_computable.reason if con.not_computable else "no estimate"
        return f"contamination: not computable ({why})", f"the contamination check is not computable ({why})", False
    e = con.estimate
    k = e.successes if e.successes is not None else round(e.value * e.n)
    p = con.details.get("fisher_p_vs_fresh")
    ptxt = f", Fisher p={p:.3g} against held-out fresh items" if isinstance(p, (int, float)) else ""
    ffr = next((m.estimate for m in mr.section.measures if m.id == CONTAMINATION_FALSE_FLAGS), None)
    fresh = f"; fresh items flagged {ffr.value:.3f} [{ffr.lo:.3f}, {ffr.hi:.3f}] (n={ffr.n})" if ffr is not None else ""
    if con.flag:
        return (
            f"contamination: {_bank_label(bank)} flagged ({k}/{e.n} items{ptxt})",
            f"the {_bank_label(bank)} is flagged as contaminated ({k}/{e.n} items have an unusually likely original "
            f"wording{ptxt}{fresh}): the model may recall these items rather than answer them",
            True,
        )
    return (
        f"contamination: {_bank_label(bank)} not flagged ({k}/{e.n} items{ptxt})",
        f"the {_bank_label(bank)} is not flagged as contaminated ({k}/{e.n} items{ptxt}{fresh})",
        False,
    )


def pitfalls_of(mr: ModelReport, m: Measure) -> Pitfalls:
    """The pitfalls reading of one deception rate on one model's page."""
    fr = framing_of(m)
    by_id = {x.id: x for x in mr.section.measures}
    obs = by_id.get(OBSERVER_ROW)
    con = by_id.get(CONTAMINATION_ROW)
    o_line, o_text, shown = _observer_part(mr, fr, obs)
    c_line, c_text, contaminated = _contamination_part(mr, fr, con)
    same_bank = obs is not None and _observer_bank(obs) == fr.bank
    if fr.kind == "evaluation":
        head = f"{m.label} was measured under evaluation framing ({fr.why})"
        lower = shown is not False or not same_bank
        if shown is True:
            tail = "read it as a lower bound of deployment behaviour"
        elif shown is None:
            tail = "whether the model behaves differently outside evaluations is unknown: read it as a lower bound"
        elif not same_bank:
            tail = "on these items the observer effect is not measured: read it as a lower bound"
        else:
            tail = "no observer effect is shown, so there is no reason here to read it as a lower bound"
    elif fr.kind == "deployment":
        head = f"{m.label} was measured under a deployment-looking presentation ({fr.why})"
        lower = False
        tail = "the observer effect matters less for it"
    else:
        head = f"{m.label}: presentation not declared ({fr.why})"
        lower = False
        tail = "whether it was measured under evaluation framing is unknown"
    text = f"{head}; {o_text}: {tail}; {c_text}."
    lines = (f"framing: {fr.kind}" + (f" ({fr.why})" if fr.why and fr.kind != "unknown" else ""), o_line, c_line)
    refs = (m.id,) + ((obs.id,) if obs is not None else ()) + ((con.id,) if con is not None else ())
    return Pitfalls(m.id, fr, obs, con, lower, contaminated, lines, text, refs)


def model_pitfalls(mr: ModelReport) -> dict[str, Pitfalls]:
    """Measure id -> its pitfalls, for every deception rate of the model."""
    return {m.id: pitfalls_of(mr, m) for m in mr.section.measures if is_rate(m)}


def pitfall_readings(mr: ModelReport) -> list[Reading]:
    return [p.reading() for p in model_pitfalls(mr).values()]
