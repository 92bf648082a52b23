"""The monitor's per-token scores, carried from a step's raw result to the page.

Why: a reader believes a probe more when they can see where it fires — which words of an
honest answer and of a deceptive one push the score over the threshold — than from an
AUROC alone (Apollo's deception-detection viewer shows transcripts the same way).

Where the data comes from: a step whose raw result holds ``"transcripts"``, a list of
`probes.monitor.MonitorResult.to_dict()` dicts, each with two more keys, ``"label"``
(``"honest"``, ``"deceptive"`` or ``"generation"``: what the transcript is known to be)
and ``"source"`` (where it came from, e.g. the role-play scenario). `attach_transcripts`
copies a compact form (token texts and scores, sentence spans, threshold) into the
``details["transcripts"]`` of that step's monitor flag-rate row, so report.json keeps every
number the coloured text shows and `liedar report --from` needs no model.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from liedar.core.errors import InputError
from liedar.core.results import Measure, Section

LABELS = ("honest", "deceptive", "generation")
MAX_PER_LABEL = 3  # "a few" of each: the page is read, not scrolled


@dataclass(frozen=True)
class Sentence:
    first_token: int
    last_token: int
    score: float
    flagged: bool


@dataclass(frozen=True)
class Transcript:
    """One scored response: tokens with their probe scores, sentences, the threshold."""

    label: str
    source: str
    threshold: float
    score: float
    flagged: bool
    tokens: list[tuple[str, float]]
    sentences: list[Sentence]
    layer: Optional[int] = None

    # stays hand-written: writes tokens and sentences as arrays, not objects
    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "source": self.source,
            "threshold": self.threshold,
            "score": self.score,
            "flagged": self.flagged,
            "layer": self.layer,
            "tokens": [[t, s] for t, s in self.tokens],
            "sentences": [[s.first_token, s.last_token, s.score, s.flagged] for s in self.sentences],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Transcript":
        return cls(
            str(d["label"]),
            str(d.get("source", "")),
            float(d["threshold"]),
            float(d["score"]),
            bool(d["flagged"]),
            [(str(t), float(s)) for t, s in d["tokens"]],
            [Sentence(int(a), int(b), float(s), bool(f)) for a, b, s, f in d.get("sentences", [])],
            d.get("layer"),
        )

    @classmethod
    def from_monitor_result(cls, d: dict[str, Any]) -> "Transcript":
        """From `MonitorResult.to_dict()` plus ``label`` and ``source``."""
        label = str(d.get("label", "generation"))
        if label not in LABELS:
            raise InputError(f"monitor transcript label {label!r}: use one of {', '.join(LABELS)}")
        tokens = [(str(t["text"]), float(t["score"])) for t in d["tokens"]]
        if not tokens:
            raise InputError("a monitor transcript has no tokens: it cannot be shown")
        sentences = [
            Sentence(int(s["first_token"]), int(s["last_token"]), float(s["score"]), bool(s["flagged"]))
            for s in d.get("sentences", [])
        ]
        return cls(
            label,
            str(d.get("source", "")),
            float(d["threshold"]),
            float(d["score"]),
            bool(d["flagged"]),
            tokens,
            sentences,
            d.get("layer"),
        )


def _carrier(section: Section) -> Optional[int]:
    """Index of the row that carries the transcripts: the monitor's deception rate."""
    for i, m in enumerate(section.measures):
        if m.instrument == "monitor" and m.higher_is_deceptive is True:
            return i
    return None


def attach_transcripts(section: Section, raw: dict[str, Any]) -> Section:
    """Copy up to `MAX_PER_LABEL` transcripts per label from ``raw`` onto the monitor row."""
    items = raw.get("transcripts")
    if not items:
        return section
    i = _carrier(section)
    if i is None:
        return section
    picked: list[Transcript] = []
    for label in LABELS:
        picked += [Transcript.from_monitor_result(d) for d in items if d.get("label", "generation") == label][
            :MAX_PER_LABEL
        ]
    m: Measure = section.measures[i]
    section.measures[i] = replace(m, details={**m.details, "transcripts": [t.to_dict() for t in picked]})
    return section


def transcripts_of(measures: list[Measure]) -> list[Transcript]:
    """Every transcript carried by a report's rows (in row order)."""
    return [Transcript.from_dict(d) for m in measures for d in m.details.get("transcripts", [])]
