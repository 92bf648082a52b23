"""One reader for every text file liedar takes (JSON lines: records, episodes, transcripts,
judge labels, statements; CSV: statements, judge labels): shape and encoding checked, every
problem reported as ``file:line`` with the shape that was expected.

Why one reader: a malformed line, a file in another encoding, a byte-order mark, a value
of the wrong type or a null where a label belongs are the same mistakes in every format,
and the user should get the same one-line message for each. Only `InputError` leaves this
module for any content of the file (fuzzed by tests/hardening/test_fuzz_loaders.py).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

from liedar.core.errors import InputError

#: the accepted kinds of a field, as named in messages
KINDS = {
    "str": (str,),
    "int": (int,),
    "number": (int, float),
    "bool": (bool,),
    "list": (list,),
    "object": (dict,),
    "id": (str, int),  # an identifier: a string or a whole number (bools refused)
}


def _not_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (write null, or a finite number)")


def _existing_file(path: "str | Path", what: str) -> Path:
    p = Path(path)
    if not p.is_file():
        if p.is_dir():
            raise InputError(f"{p} is a folder: give the path of {what}")
        raise InputError(f"file not found: {p} (give the path of an existing {what})")
    return p


def iter_jsonl(path: "str | Path", *, expected: str = "") -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a UTF-8 JSON-lines file.

    A byte-order mark is accepted; a missing file, bytes that are not UTF-8, NaN/Infinity
    (not JSON), or a line that is not a JSON object is reported with its line number and the
    fix. ``expected`` (e.g. ``{"id": ..., "label": ...}``) is quoted in every message.
    """
    p = _existing_file(path, "JSONL file")
    shape = f"; each line must be a JSON object like {expected}" if expected else "; write one JSON object per line"
    try:
        with p.open("rb") as fh:
            for lineno, raw in enumerate(fh, 1):  # binary lines split on b"\n" only (not on U+2028)
                try:
                    line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        f"{p}:{lineno}: not UTF-8 text (byte {exc.start + 1} of the line); save the file as UTF-8"
                    ) from None
                if not line.strip():
                    continue
                try:
                    row = json.loads(line, parse_constant=_not_json_constant)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{p}:{lineno}: not valid JSON ({exc.msg}){shape}") from None
                except (ValueError, RecursionError) as exc:
                    reason = str(exc) or "nested too deeply"
                    raise InputError(f"{p}:{lineno}: not valid JSON ({reason}){shape}") from None
                if not isinstance(row, Mapping):
                    raise InputError(f"{p}:{lineno}: expected a JSON object, got {type(row).__name__}{shape}")
                yield lineno, dict(row)
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror or exc}") from None


def kind_name(kinds: str) -> str:
    return {"str": "a string", "int": "a whole number", "number": "a number", "bool": "true or false"}.get(
        kinds, {"list": "a list", "object": "an object", "id": "a string or a whole number"}.get(kinds, kinds)
    )


def check_field(
    row: Mapping[str, Any], key: str, kind: str, where: str, *, required: bool = True, nonempty: bool = False
) -> Any:
    """``row[key]`` if it has the kind (see `KINDS`); None when optional and absent or null.

    A required field that is missing or null, a bool given for a number, a NaN, or an empty
    string where ``nonempty`` is asked are refused with ``where`` (``file:line``)."""
    value = row.get(key)
    if value is None:
        if required:
            state = "is null" if key in row else "is missing"
            raise InputError(f"{where}: {key!r} {state}; give {kind_name(kind)}")
        return None
    kinds = KINDS[kind]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise InputError(f"{where}: {key!r} must be {kind_name(kind)}, got {type(value).__name__} {_short(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{where}: {key!r} must be a finite number")
    if nonempty and isinstance(value, str) and not value.strip():
        raise InputError(f"{where}: {key!r} is empty; give a non-empty string")
    return value


def _short(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float, list, dict)) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read_records(
    path: "str | Path", required: Sequence[str], *, expected: str = ""
) -> list[tuple[int, dict[str, Any]]]:
    """``[(line number, object)]`` of a JSON-lines file whose objects hold the ``required``
    keys with non-null values; an empty file is refused (it measures nothing)."""
    shape = expected or "{" + ", ".join(f'"{k}": ...' for k in required) + "}"
    rows: list[tuple[int, dict[str, Any]]] = []
    for lineno, row in iter_jsonl(path, expected=shape):
        missing = [k for k in required if row.get(k) is None]
        if missing:
            nulls = [k for k in missing if k in row]
            what = f"null value(s) for {', '.join(nulls)}" if nulls else f"missing key(s) {', '.join(missing)}"
            raise InputError(f"{path}:{lineno}: {what}; each line needs {shape}")
        rows.append((lineno, row))
    if not rows:
        raise InputError(f"{path} holds no records: write one JSON object per line, like {shape}")
    return rows


def read_jsonl(path: "str | Path", required: Sequence[str], *, expected: str = "") -> list[dict[str, Any]]:
    """Read a JSON-lines file of objects, each holding the ``required`` keys (not null).

    Blank lines are skipped; a malformed line is reported with its line number.
    """
    return [row for _, row in read_records(path, required, expected=expected)]


def check_dialogue(value: Any, where: str) -> list[dict[str, Any]]:
    """A dialogue's messages as plain dicts ``{"role", "content", "detect"}``, validated.

    Expected shape: a non-empty list of objects with string ``role`` and ``content`` and an
    optional boolean ``detect`` (default false)."""
    shape = 'a list of {"role": "user"|"assistant"|..., "content": "...", "detect": true|false}'
    if not isinstance(value, list) or not value:
        raise InputError(f"{where}: 'dialogue' must be {shape}, got {type(value).__name__} {_short(value)}")
    out = []
    for i, msg in enumerate(value):
        if not isinstance(msg, Mapping):
            raise InputError(f"{where}: dialogue message {i} must be an object, got {type(msg).__name__}; use {shape}")
        here = f"{where}: dialogue message {i}"
        role = check_field(msg, "role", "str", here, nonempty=True)
        content = check_field(msg, "content", "str", here)
        detect = check_field(msg, "detect", "bool", here, required=False)
        out.append({"role": role, "content": content, "detect": bool(detect)})
    return out


def iter_csv(
    path: "str | Path", required: Sequence[str], *, expected: str = ""
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """(columns, [(line number, row)]) of a UTF-8 CSV with a header holding ``required``.

    A byte-order mark is accepted (so ``statement`` is not read as ``'\\ufeffstatement'``);
    bytes that are not UTF-8, NUL bytes, a row with more or fewer fields than the header, an
    empty required cell, or a missing column are refused with ``file:line``."""
    p = _existing_file(path, "CSV file")
    shape = expected or ",".join(required)
    rows: list[tuple[int, dict[str, str]]] = []
    lineno = 1
    try:
        with p.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            try:
                header = next(reader)
            except StopIteration:
                raise InputError(f"{p} is empty; give a CSV with a header line {shape}") from None
            header = [h.strip() for h in header]
            missing = [c for c in required if c not in header]
            if missing:
                raise InputError(
                    f"{p}:1: needs a header with {' and '.join(map(repr, required))} columns, like {shape} "
                    f"(missing {', '.join(map(repr, missing))}; found {', '.join(map(repr, header)) or 'none'})"
                )
            for cells in reader:
                lineno = reader.line_num
                if not cells or not any(c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    raise InputError(
                        f"{p}:{lineno}: {len(cells)} field(s) but the header has {len(header)}; "
                        "quote fields holding commas"
                    )
                if any("\x00" in c for c in cells):
                    raise InputError(f"{p}:{lineno}: holds a NUL byte (a binary file?); save the file as UTF-8 text")
                row = dict(zip(header, cells))
                empty = [c for c in required if not row[c].strip()]
                if empty:
                    raise InputError(f"{p}:{lineno}: empty {', '.join(empty)}; every row needs {shape}")
                rows.append((lineno, row))
    except UnicodeDecodeError:
        raise InputError(f"{p}:{lineno + 1}: not UTF-8 text; save the file as UTF-8") from None
    except csv.Error as exc:
        raise InputError(f"{p}:{lineno + 1}: not a readable CSV ({exc}); save it as plain UTF-8 CSV") from None
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror or exc}") from None
    return header, rows


def optional_str(row: Mapping[str, Any], key: str, where: str) -> Optional[str]:
    """An optional string field (None when absent or null)."""
    return check_field(row, key, "str", where, required=False)
