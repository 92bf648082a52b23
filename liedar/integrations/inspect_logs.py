"""inspect_ai eval logs -> liedar's behavioural records, detectors and a short report.

What is built from a set of logs (read with ``inspect_ai.log.read_eval_log``):

* **option-order trials** — every sample with ``choices``, over all logs and epochs, grouped
  by sample id. inspect stores only the order *shown* (after ``shuffle_choices``), so
  presentations are matched on the sample id and the choice *texts*: two presentations
  belong together only if they offer the same set of texts (a mismatch is refused, since it
  means two different tasks share an id). The chosen text is the one at the answer letter of
  the ``choice`` scorer (``Score.answer``), correctness from ``Score.value``. When the scorer
  found no ``ANSWER: X`` in the reply (small models often answer ``"D) 13"``), liedar's
  documented parser (`liedar.models.served.parse_option`: a reply starting with a letter, or
  ``answer: X``) reads the completion; the source of each choice is recorded.
* **paraphrase trials** — where sample metadata marks ``item_id`` and ``variant`` (as
  `liedar.integrations.inspect_tasks` does), one correctness per (item, variant) per run.
* **sycophancy pairs** — where metadata marks ``sycophancy_pair``, ``condition``
  (``neutral`` | ``pressure``) and ``suggested`` (the text the user pushes).

A presentation whose reply named no choice is a recorded *no answer*: counted per log and
listed in the results, never turned into a choice (the consistency detector needs a
position, so those presentations are not among its trials; the count says how many).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from liedar.core.errors import InputError
from liedar.models.served import parse_option

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass
class Presentation:
    log: str
    sample_id: str
    epoch: int
    choices: tuple[str, ...]
    position: Optional[int]  # None: no answer
    correct: Optional[bool]
    metadata: dict[str, Any]
    target: str
    source: str = "scorer"  # where the choice came from: the task's scorer, liedar's parser, or none


@dataclass
class InspectRecords:
    presentations: list[Presentation]
    option_trials: list[Any] = field(default_factory=list)
    paraphrase_trials: list[Any] = field(default_factory=list)
    sycophancy_records: list[Any] = field(default_factory=list)
    no_answer: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _score(sample: Any) -> Any:
    scores = sample.scores or {}
    if "choice" in scores:
        return scores["choice"]
    return next(iter(scores.values()), None)


def _correct(score: Any) -> Optional[bool]:
    if score is None:
        return None
    v = score.value
    if isinstance(v, str):
        return {"C": True, "I": False}.get(v)
    if isinstance(v, (int, float, bool)):
        return bool(v)
    return None


def read_logs(paths: Sequence["str | Path"]) -> list[Presentation]:
    """Every sample with choices from every log, in order; one line for an unusable log."""
    from liedar.core._util.extras import require

    require("inspect_ai", "reading inspect logs")
    from inspect_ai.log import read_eval_log

    out: list[Presentation] = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise InputError(f"inspect log not found: {path} (give the .eval/.json files inspect wrote)")
        try:
            log = read_eval_log(str(path))
        except Exception as exc:  # inspect raises assorted errors on damaged files
            raise InputError(
                f"{path} is not a readable inspect eval log ({type(exc).__name__}); give an .eval/.json log"
            ) from None
        samples = log.samples or []
        if not samples:
            raise InputError(f"{path} holds no samples (status {log.status}); re-run the eval without --no-log-samples")
        with_choices = [s for s in samples if s.choices]
        if not with_choices:
            raise InputError(
                f"{path}: task {log.eval.task!r} has no choices in its samples; from-inspect needs a multiple-choice "
                "task (Sample(choices=...), solver multiple_choice)"
            )
        for s in with_choices:
            score = _score(s)
            answer = str(getattr(score, "answer", "") or "").strip()
            letters = LETTERS[: len(s.choices)]
            position = letters.index(answer) if len(answer) == 1 and answer in letters else None
            correct = _correct(score)
            source = "scorer"
            if position is None:  # the scorer found no "ANSWER: X": liedar's documented parser on the reply
                position = parse_option(str(s.output.completion or ""), list(letters))
                source = "parser" if position is not None else "none"
                target = s.target if isinstance(s.target, str) else ""
                correct = None if position is None or target not in letters else letters[position] == target
            out.append(
                Presentation(
                    log=path.name,
                    sample_id=str(s.id),
                    epoch=int(s.epoch),
                    choices=tuple(str(c) for c in s.choices),
                    position=position,
                    correct=correct,
                    metadata=dict(s.metadata or {}),
                    target=str(s.target if isinstance(s.target, str) else ",".join(s.target)),
                    source=source,
                )
            )
    return out


def build_records(presentations: Sequence[Presentation]) -> InspectRecords:
    from liedar.behavioral.consistency import OptionOrderTrial, ParaphraseTrial
    from liedar.behavioral.sycophancy import SycophancyRecord

    rec = InspectRecords(list(presentations))
    by_id: dict[str, list[Presentation]] = defaultdict(list)
    for p in presentations:
        by_id[p.sample_id].append(p)
    for sid, group in by_id.items():
        texts = {frozenset(p.choices) for p in group}
        if len(texts) > 1:
            raise InputError(
                f"sample id {sid!r} offers different choice texts in different logs; "
                "give logs of the same task (option-order trials are matched on sample id and choice text)"
            )
        for p in group:
            if p.position is None:
                rec.no_answer.append({"log": p.log, "sample_id": sid, "epoch": p.epoch})
                continue
            rec.option_trials.append(OptionOrderTrial(sid, p.choices, p.position, p.correct))
    orders = {sid: len({p.choices for p in g}) for sid, g in by_id.items()}
    if orders and max(orders.values()) < 2:
        rec.notes.append(
            "every sample was shown in one order only: option-order consistency needs runs with different "
            "shuffle seeds (inspect eval ... -T shuffle=1, then -T shuffle=2)"
        )
    # paraphrases: metadata item_id + variant, one trial per (item, variant) per log and epoch
    seen: set[tuple[str, str, int, Any]] = set()
    for p in presentations:
        item, variant = p.metadata.get("item_id"), p.metadata.get("variant")
        if item is None or variant is None or p.correct is None:
            continue
        key = (p.log, str(item), p.epoch, variant)
        if key in seen:
            continue
        seen.add(key)
        rec.paraphrase_trials.append(ParaphraseTrial(f"{item}@{p.log}#{p.epoch}", variant, bool(p.correct)))
    # sycophancy: metadata sycophancy_pair + condition + suggested
    pairs: dict[str, dict[str, Presentation]] = defaultdict(dict)
    for p in presentations:
        pair, cond = p.metadata.get("sycophancy_pair"), p.metadata.get("condition")
        if pair is not None and cond in ("neutral", "pressure"):
            pairs[f"{pair}@{p.log}#{p.epoch}"][cond] = p
    for pid, d in pairs.items():
        if set(d) != {"neutral", "pressure"}:
            continue
        n, q = d["neutral"], d["pressure"]
        if n.position is None or q.position is None:
            rec.no_answer.append({"log": n.log, "sample_id": pid, "epoch": n.epoch, "sycophancy": True})
            continue
        truth = n.choices[LETTERS.index(n.target)] if n.target in LETTERS[: len(n.choices)] else n.target
        rec.sycophancy_records.append(
            SycophancyRecord(pid, truth, n.choices[n.position], str(q.metadata.get("suggested")), q.choices[q.position])
        )
    return rec


def run_detectors(rec: InspectRecords, seed: int = 0) -> dict[str, Any]:
    """The consistency detector on the trials (and sycophancy on the pairs, if any)."""
    from liedar.behavioral.consistency import ConsistencyDetector

    out: dict[str, Any] = {
        "n_presentations": len(rec.presentations),
        "n_option_trials": len(rec.option_trials),
        "n_paraphrase_trials": len(rec.paraphrase_trials),
        "n_sycophancy_pairs": len(rec.sycophancy_records),
        "no_answer": rec.no_answer,
        "notes": list(rec.notes),
        "logs": sorted({p.log for p in rec.presentations}),
        "choice_source": dict(Counter(p.source for p in rec.presentations)),
    }
    if rec.option_trials or rec.paraphrase_trials:
        det = ConsistencyDetector(seed=seed)
        out["consistency"] = det.detect_inconsistency(
            option_trials=rec.option_trials or None, paraphrase_trials=rec.paraphrase_trials or None
        ).to_dict()
    else:
        out["consistency"] = None
        out["notes"].append("no answered presentations: nothing for the consistency detector")
    if rec.sycophancy_records:
        from liedar.behavioral.sycophancy import sycophancy

        labels = {r.neutral for r in rec.sycophancy_records} | {r.pressured for r in rec.sycophancy_records}
        labels |= {r.truth for r in rec.sycophancy_records} | {r.suggested for r in rec.sycophancy_records}
        out["sycophancy"] = sycophancy(rec.sycophancy_records, labels=labels).to_dict()
    out["option_trials"] = [t.to_dict() for t in rec.option_trials]
    out["paraphrase_trials"] = [t.to_dict() for t in rec.paraphrase_trials]
    return out


def markdown(result: dict[str, Any]) -> str:
    """A short page: what was read, how many trials, the detector's verdict with its numbers."""
    lines = ["# liedar on inspect logs", ""]
    lines.append(f"Logs: {', '.join(result['logs'])}")
    lines.append(
        f"Presentations: {result['n_presentations']}; option-order trials: {result['n_option_trials']}; "
        f"paraphrase trials: {result['n_paraphrase_trials']}; sycophancy pairs: {result['n_sycophancy_pairs']}; "
        f"no answer: {len(result['no_answer'])} (recorded, not counted as a choice); "
        f"choices read by: {result['choice_source']}"
    )
    c = result.get("consistency")
    if c:
        lines += ["", "## Consistency", "", "```", _compact(c), "```"]
    if result.get("sycophancy"):
        lines += ["", "## Sycophancy", "", "```", _compact(result["sycophancy"]), "```"]
    if result["notes"]:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in result["notes"]]
    return "\n".join(lines) + "\n"


def _compact(d: dict[str, Any]) -> str:
    import json

    from liedar.core._util.atomic import json_safe

    keep = {k: v for k, v in d.items() if not isinstance(v, list) or len(v) <= 8}
    return json.dumps(json_safe(keep), indent=1)[:4000]
