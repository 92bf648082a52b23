"""Where liedar keeps things on disk, and how it writes them without ever leaving half a file.

One cache root for everything derived (assembled GGUFs, dequantized models, activations):
``$LIEDAR_CACHE`` if set, else the platform's user cache dir. Every write goes to a
temporary name in the same directory and is renamed into place with ``os.replace``, so a
reader (or a process killed mid-write) sees either the old state or the complete new one.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from liedar._util.atomic import atomic_dir
from liedar._util.atomic import atomic_path as atomic_file

__all__ = ["atomic_dir", "atomic_file", "cache_root", "sha256_file"]


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
