"""Readings and caveats as short tags beside the row they qualify, and the grouped full list.

Why: a page that opens with thirty warning banners is not read. Each note (an instrument's
`Caveat` or a rule's `Reading`) is shown once, as a short tag on its row that expands to
its sentence; identical notes (same code and text) on several rows are one entry in the
full list, naming every row they apply to. Notes are keyed by their stable code (caveat
code, reading rule), never by parsing their text.

A reading is attached to the first row it refers to (`Reading.refs[0]`: the rule's
subject; e.g. the rate for ``incapable_not_honest``, the ceiling for
``ceiling_below_chance``); a reading that refers to no row (``step_not_run``) is shown
with the steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from liedar.core.results import ModelReport

# short tag per code; an unknown code is shown with its underscores as spaces
TAGS = {
    "incapable_not_honest": "may be incapable",
    "ceiling_below_chance": "below chance",
    "no_ceiling": "no ceiling",
    "intervals_overlap": "no difference shown",
    "null_in_interval": "no effect shown",
    "grader_unreliable": "grader unreliable",
    "small_n": "too few to call zero",
    "zero_width_interval": "zero-width interval",
    "published_reference": "published reference",
    "step_not_run": "step not run",
    "not_computable": "not computable",
    "instrument": "instrument caveat",
    "unclassified": "caveat",
    "contrast_reading": "contrast reading",
    "contrast_note": "contrast note",
    "pitfalls": "pitfalls",
}


def tag_of(code: str) -> str:
    return TAGS.get(code, code.replace("_", " "))


@dataclass(frozen=True)
class Note:
    code: str
    text: str
    source: str  # "caveat" (an instrument's warning) | "reading" (a rule over the numbers)
    severity: str = "caution"

    @property
    def tag(self) -> str:
        return tag_of(self.code)


def row_notes(mr: ModelReport) -> dict[str, list[Note]]:
    """Row id (measure or ceiling) -> its notes, caveats first; readings that repeat a row's
    not-computable reason are kept (the row says it, the tag explains why it is not zero)."""
    out: dict[str, list[Note]] = {}

    def add(row: str, note: Note) -> None:
        notes = out.setdefault(row, [])
        if note not in notes:
            notes.append(note)

    for c in mr.section.ceilings:
        for w in c.warnings:
            add(c.id, Note(w.code, w.text, "caveat"))
    for m in mr.section.measures:
        for w in m.warnings:
            add(m.id, Note(w.code, w.text, "caveat"))
    for r in mr.readings:
        if r.refs:
            add(r.refs[0], Note(r.rule, r.text, "reading", r.severity))
    return out


def unattached_readings(mr: ModelReport) -> list[Note]:
    return [Note(r.rule, r.text, "reading", r.severity) for r in mr.readings if not r.refs]


@dataclass
class NoteGroup:
    """One code's notes across the page: each distinct text with the rows it applies to."""

    code: str
    source: str
    entries: list[tuple[str, list[str]]]  # (text, ["model: row label", ...])

    @property
    def tag(self) -> str:
        return tag_of(self.code)

    @property
    def count(self) -> int:
        return sum(len(rows) or 1 for _, rows in self.entries)


def grouped_notes(models: list[ModelReport], many: bool) -> list[NoteGroup]:
    """Every note of every model, grouped by code, identical texts merged."""
    groups: dict[tuple[str, str], NoteGroup] = {}
    for mr in models:
        name = mr.model.get("name", "?")
        labels = {c.id: f"ceiling {c.label}" for c in mr.section.ceilings}
        labels.update({m.id: m.label for m in mr.section.measures})
        notes = [(row, n) for row, ns in row_notes(mr).items() for n in ns]
        notes += [("", n) for n in unattached_readings(mr)]
        for row, n in notes:
            g = groups.setdefault((n.source, n.code), NoteGroup(n.code, n.source, []))
            entry = next((e for e in g.entries if e[0] == n.text), None)
            if entry is None:
                entry = (n.text, [])
                g.entries.append(entry)
            if row:
                where = labels.get(row, row)
                entry[1].append(f"{name}: {where}" if many else where)
    return sorted(groups.values(), key=lambda g: (g.source != "caveat", g.code))
