"""One reader for every JSON-lines file liedar takes (records, episodes, transcripts, judge
labels): shape and encoding checked, every problem reported as ``file:line``.

Why one reader: a malformed line, a file in another encoding or a byte-order mark are the
same mistakes in every format, and the user should get the same one-line message for each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from liedar.errors import InputError


def iter_jsonl(path: "str | Path") -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a UTF-8 JSON-lines file.

    A byte-order mark is accepted; a missing file, bytes that are not UTF-8, or a line that
    is not a JSON object is reported with its line number and the fix.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"file not found: {p} (give the path of an existing JSONL file)")
    lineno = 0
    try:
        with p.open(encoding="utf-8-sig") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"{p}:{lineno}: not valid JSON ({exc.msg}); write one JSON object per line"
                    ) from None
                if not isinstance(row, Mapping):
                    raise InputError(f"{p}:{lineno}: expected a JSON object, got {type(row).__name__}")
                yield lineno, dict(row)
    except UnicodeDecodeError:
        raise InputError(f"{p}:{lineno + 1}: not UTF-8 text; save the file as UTF-8") from None


def read_jsonl(path: "str | Path", required: Sequence[str]) -> list[dict[str, Any]]:
    """Read a JSON-lines file of objects, each holding the ``required`` keys.

    Blank lines are skipped; a malformed line is reported with its line number.
    """
    rows: list[dict[str, Any]] = []
    for lineno, row in iter_jsonl(path):
        missing = [k for k in required if k not in row]
        if missing:
            raise InputError(
                f"{path}:{lineno}: missing key(s) {', '.join(missing)}; each line needs {', '.join(required)}"
            )
        rows.append(row)
    if not rows:
        raise InputError(f"{path} holds no records: write one JSON object per line")
    return rows
