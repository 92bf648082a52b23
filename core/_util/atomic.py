"""Write files so that a crash never leaves half of one.

Why one module: every artefact liedar writes (activation shards, dequantized models, saved
probes, step results, reports, figures, CLI outputs) must survive a kill mid-write — a
reader sees either the old file or the complete new one. The recipe is always the same:
write to a temporary name in the target's directory, flush to disk, rename into place,
flush the directory.

The guarantees, each pinned by tests/hardening/test_faults.py:

* the target is either untouched or complete (a SIGKILL, a full disk, an exception in the
  caller's block, a failed rename all leave the old file intact);
* no temporary file is left after any error inside this process; a temporary left by a
  process that was *killed* carries that process's pid in its name and is removed by the
  next write of the same target once that pid no longer runs;
* new files get the mode a plain ``open()`` would give them (the user's umask), new
  directories likewise (``mkstemp``/``mkdtemp`` alone would make them private);
* an ``OSError`` while writing (no space, read-only file system, permission, a folder where
  the file should go) becomes a one-line `WriteError` naming the file and the fix.

Like `liedar.core.errors`, this module imports nothing from the project but the errors (and numpy
only inside `json_safe`), so every package, including the torch-free `behavioral`, can use it.
"""

from __future__ import annotations

import errno
import glob
import json
import math
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Union

from liedar.core.errors import LiedarError

PathLike = Union[str, Path]

__all__ = [
    "AtomicLines",
    "WriteError",
    "atomic_dir",
    "atomic_path",
    "json_safe",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_lines_atomic",
]


class WriteError(LiedarError, OSError):
    """A file could not be written (the old one, if any, is intact; no temporary is left).

    Also an ``OSError`` so that code which already handles write failures keeps working."""

    def __init__(self, target: PathLike, exc: OSError) -> None:
        self.target = Path(target)
        reason = exc.strerror or type(exc).__name__
        fix = {
            errno.ENOSPC: "free disk space or write to another disk",
            errno.EROFS: "the file system is read-only; write somewhere else",
            errno.EACCES: "choose a location you can write to",
            errno.EPERM: "choose a location you can write to",
            errno.EISDIR: "a folder has that name; choose a file name",
            errno.ENOTDIR: "a file stands where a folder should be; choose another location",
        }.get(exc.errno or 0, "choose another location")
        super().__init__(exc.errno, f"cannot write {self.target}: {reason}; {fix} (nothing was changed)")

    def __str__(self) -> str:
        return str(self.strerror)


def _default_file_mode() -> int:
    """The mode a plain open() would give a new file (mkstemp always makes 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _default_dir_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def _temp_prefix(target: Path) -> str:
    return f".{target.name}.{os.getpid()}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's live process (or a pid we cannot judge): leave it
    return True


def sweep_stale(target: PathLike) -> int:
    """Remove temporaries of `target` left by processes that were killed; return how many.

    Only names of the form ``.<name>.<pid>-<random>.tmp`` whose pid no longer runs are
    touched, so a concurrent writer's temporary is never removed."""
    target = Path(target)
    removed = 0
    pattern = str(target.parent / f"{glob.escape('.' + target.name)}.*-*.tmp")
    for name in glob.glob(pattern):
        stem = Path(name).name[len(target.name) + 2 :]
        pid_text = stem.split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _pid_alive(int(pid_text)):
            continue
        try:
            if os.path.isdir(name) and not os.path.islink(name):
                shutil.rmtree(name, ignore_errors=True)
            else:
                os.unlink(name)
            removed += 1
        except OSError:
            pass
    return removed


_WRITE_ERRNOS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EROFS,
    errno.EFBIG,
    errno.EIO,
    errno.EACCES,
    errno.EPERM,
    errno.EISDIR,
    errno.ENOTDIR,
}


def _is_write_failure(exc: BaseException) -> bool:
    """An OSError raised inside the caller's block is ours to report only when it is the kind
    a write produces (a missing *input* file raised there keeps its own type)."""
    return isinstance(exc, OSError) and not isinstance(exc, LiedarError) and exc.errno in _WRITE_ERRNOS


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the rename itself is still atomic
    finally:
        os.close(fd)


def _prepare_parent(target: Path) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(target, exc) from None
    sweep_stale(target)


@contextmanager
def atomic_path(target: PathLike) -> Iterator[Path]:
    """Yield a temporary path next to `target`; rename it onto `target` only on success."""
    target = Path(target)
    _prepare_parent(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(target), suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise WriteError(target, exc) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        try:
            yield tmp_path
        except OSError as exc:
            if _is_write_failure(exc):
                raise WriteError(target, exc) from None
            raise
        try:
            os.chmod(tmp_path, _default_file_mode())
            with open(tmp_path, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp_path, target)
        except OSError as exc:
            raise WriteError(target, exc) from None
        _fsync_dir(target.parent)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def atomic_dir(target: PathLike) -> Iterator[Path]:
    """Yield a temporary directory next to `target`; rename it onto `target` on success.

    If another process finished the same directory first, theirs is kept (same content key).
    """
    target = Path(target)
    _prepare_parent(target)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), suffix=".tmp", dir=target.parent))
    except OSError as exc:
        raise WriteError(target, exc) from None
    try:
        try:
            yield tmp
        except OSError as exc:
            if _is_write_failure(exc):
                raise WriteError(target, exc) from None
            raise
        try:
            _umask_modes(tmp)  # mkdtemp (and some writers, e.g. safetensors) make things private
            try:
                os.rename(tmp, target)
            except OSError:
                if not target.is_dir():
                    raise
        except OSError as exc:
            raise WriteError(target, exc) from None
        _fsync_dir(target.parent)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _umask_modes(folder: Path) -> None:
    """Give a finished folder and everything in it the modes the user's umask asks for."""
    file_mode, dir_mode = _default_file_mode(), _default_dir_mode()
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                keep_x = os.stat(p).st_mode & 0o111
                os.chmod(p, file_mode | (keep_x & dir_mode))
        for name in dirnames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, dir_mode)
    os.chmod(folder, dir_mode)


def check_inside(folder: PathLike, *subfolders: str) -> None:
    """Refuse (one line) an output subfolder that is a link leading out of ``folder``.

    Why: a page's ``figures/`` that is a symlink to elsewhere would have its files written
    there, outside the output folder the user named. ``folder`` itself may be a link (it is
    followed, as users expect); only what lies inside it must stay inside it.

    Raises
    ------
    InputError
        When ``folder/sub`` resolves outside ``folder``.
    """
    from liedar.core.errors import InputError

    root = Path(folder).resolve()
    for sub in subfolders:
        where = (Path(folder) / sub).resolve()
        if where != root and root not in where.parents:
            raise InputError(
                f"{Path(folder) / sub} is a link to {where}, outside the output folder {folder}: remove the link "
                "or choose another --output"
            )


def write_bytes_atomic(path: PathLike, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_lines_atomic(path: PathLike, lines: Iterable[str]) -> None:
    """Write text lines (each gets a newline) as UTF-8, atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line + "\n")


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
        _prepare_parent(self.path)
        try:
            fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(self.path), suffix=".tmp", dir=self.path.parent)
        except OSError as exc:
            raise WriteError(self.path, exc) from None
        self.tmp = Path(tmp)
        self.fh = os.fdopen(fd, "w", encoding="utf-8")

    def write(self, line: str) -> None:
        try:
            self.fh.write(line + "\n")
            self.fh.flush()
        except OSError as exc:
            self.abort()
            raise WriteError(self.path, exc) from None

    def commit(self) -> None:
        try:
            self.fh.flush()
            os.fsync(self.fh.fileno())
            self.fh.close()
            os.chmod(self.tmp, _default_file_mode())
            os.replace(self.tmp, self.path)
        except OSError as exc:
            self.abort()
            raise WriteError(self.path, exc) from None
        _fsync_dir(self.path.parent)

    def abort(self) -> None:
        if not self.fh.closed:
            try:
                self.fh.close()
            except OSError:
                pass  # the data is being thrown away; a failed flush does not matter
        if self.tmp.exists():
            self.tmp.unlink()

    def __enter__(self) -> "AtomicLines":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
