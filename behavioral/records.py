"""Checks and readers shared by the instruments: one clear error per kind of bad input.

Why one module: "zero items", "records that don't pair", "a label outside the allowed
values" and "a malformed JSONL line" are the same mistakes in every instrument, and the
user should see the same kind of message (what was wrong, where, how to fix it) for each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator, Mapping, Sequence

from liedar.errors import InputError

def require_items(items: Collection[Any], what: str) -> None:
    """Raise when an instrument is given nothing to measure."""
    if len(items) == 0:
        raise InputError(f"no {what} given: an instrument needs at least one record to estimate a rate")

def require_same_ids(
    a: Iterable[str], b: Iterable[str], name_a: str, name_b: str, fix: str = "give both conditions for the same items"
) -> None:
    """Raise when two sets of paired records do not cover the same ids."""
    ids_a, ids_b = set(a), set(b)
    if ids_a == ids_b:
        return
    only_a, only_b = sorted(ids_a - ids_b), sorted(ids_b - ids_a)
    parts = []
    if only_a:
        parts.append(f"{len(only_a)} id(s) only in {name_a} (e.g. {', '.join(map(repr, only_a[:3]))})")
    if only_b:
        parts.append(f"{len(only_b)} id(s) only in {name_b} (e.g. {', '.join(map(repr, only_b[:3]))})")
    raise InputError(
        f"paired records do not pair: {'; '.join(parts)}; {fix}"
    )

def require_unique(ids: Sequence[str], what: str) -> None:
    seen: set[str] = set()
    dups: set[str] = set()
    for i in ids:
        (dups if i in seen else seen).add(i)
    if dups:
        raise InputError(f"duplicate {what} id(s) {', '.join(map(repr, sorted(dups)[:3]))}: each id must appear once")

def require_label(value: Any, allowed: Collection[str], field: str, where: str) -> None:
    """Raise when a label is not one of the allowed values."""
    if value not in allowed:
        raise InputError(
            f"{where}: {field}={value!r} is not an allowed value; use one of {', '.join(map(repr, sorted(allowed)))}"
        )

def iter_jsonl(path: "str | Path") -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a JSON-lines file.

    A missing file or a line that is not a JSON object is reported with its line number.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"file not found: {p} (give the path of an existing JSONL file)")
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{p}:{lineno}: not valid JSON ({exc.msg}); write one JSON object per line") from None
            if not isinstance(row, Mapping):
                raise InputError(f"{p}:{lineno}: expected a JSON object, got {type(row).__name__}")
            yield lineno, dict(row)


def read_jsonl(path: "str | Path", required: Sequence[str]) -> list[dict[str, Any]]:
    """Read a JSON-lines file of objects, each holding the ``required`` keys.

    Blank lines are skipped; a malformed line is reported with its line number.
    """
    rows: list[dict[str, Any]] = []
    for lineno, row in iter_jsonl(path):
        missing = [k for k in required if k not in row]
        if missing:
            raise InputError(f"{path}:{lineno}: missing key(s) {', '.join(missing)}; each line needs {', '.join(required)}")
        rows.append(row)
    if not rows:
        raise InputError(f"{path} holds no records: write one JSON object per line")
    return rows
