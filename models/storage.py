"""Where liedar keeps things on disk, and how it writes them without ever leaving half a file.

One cache root for everything derived (assembled GGUFs, dequantized models, activations):
``$LIEDAR_CACHE`` if set, else the platform's user cache dir. Every write goes to a
temporary name in the same directory and is renamed into place with ``os.replace``, so a
reader (or a process killed mid-write) sees either the old state or the complete new one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def cache_root() -> Path:
    """The cache directory (created on demand)."""
    env = os.environ.get("LIEDAR_CACHE")
    if env:
        root = Path(env).expanduser()
    else:
        import platformdirs

        root = Path(platformdirs.user_cache_dir("liedar"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def atomic_file(target: Path) -> Iterator[Path]:
    """Yield a temporary path next to `target`; rename it onto `target` only on success."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o644)  # mkstemp makes it private; a cache entry is ordinary data
        with open(tmp_path, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def atomic_dir(target: Path) -> Iterator[Path]:
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
