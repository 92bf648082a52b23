"""Write files so that a crash never leaves half of one.

Why one module: every artefact liedar writes (activation shards, dequantized models, saved
probes, step results, reports, figures, CLI outputs) must survive a kill mid-write — a
reader sees either the old file or the complete new one. The recipe is always the same:
write to a temporary name in the target's directory, flush to disk, rename into place.

Like `liedar.errors`, this module imports nothing from the project (and numpy only inside
`json_safe`), so every package, including the torch-free `behavioral`, can use it.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Union

PathLike = Union[str, Path]


def _default_file_mode() -> int:
    """The mode a plain open() would give a new file (mkstemp always makes 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_path(target: PathLike) -> Iterator[Path]:
    """Yield a temporary path next to `target`; rename it onto `target` only on success."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, _default_file_mode())
        with open(tmp_path, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def atomic_dir(target: PathLike) -> Iterator[Path]:
    """Yield a temporary directory next to `target`; rename it onto `target` on success.

    If another process finished the same directory first, theirs is kept (same content key).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a cache entry is ordinary data
        try:
            os.rename(tmp, target)
        except OSError:
            if not target.is_dir():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def write_bytes_atomic(path: PathLike, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def json_safe(value: Any) -> Any:
    """Plain JSON data: NaN/inf become None (JSON has no NaN), numpy scalars and arrays become
    Python numbers and lists, tuples become lists. Instruments mark "no data" with NaN."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def write_json_atomic(path: PathLike, data: Any, indent: int = 1) -> None:
    """Write `json_safe(data)` as JSON, atomically."""
    text = json.dumps(json_safe(data), indent=indent, allow_nan=False) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"))


class AtomicLines:
    """Lines streamed to a temporary file next to ``path``, renamed into place only by
    `commit`; `abort` (or an exception inside a ``with`` block) removes the temporary file.

    Why streamed: a monitor run writes one record per generated token as it goes; a reader
    must still never see half a file, and an interrupted run must leave nothing behind.
    """

    def __init__(self, path: PathLike) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        self.tmp = Path(tmp)
        self.fh = os.fdopen(fd, "w", encoding="utf-8")

    def write(self, line: str) -> None:
        self.fh.write(line + "\n")
        self.fh.flush()

    def commit(self) -> None:
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()
        os.chmod(self.tmp, _default_file_mode())
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        if not self.fh.closed:
            self.fh.close()
        if self.tmp.exists():
            self.tmp.unlink()

    def __enter__(self) -> "AtomicLines":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
