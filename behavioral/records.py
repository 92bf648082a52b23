"""Checks and readers shared by the instruments: one clear error per kind of bad input.

Why one module: "zero items", "records that don't pair", "a label outside the allowed
values" and "a malformed JSONL line" are the same mistakes in every instrument, and the
user should see the same kind of message (what was wrong, where, how to fix it) for each.
"""

from __future__ import annotations

from typing import Any, Collection, Iterable, Sequence

from liedar.core.errors import InputError


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
    raise InputError(f"paired records do not pair: {'; '.join(parts)}; {fix}")


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
