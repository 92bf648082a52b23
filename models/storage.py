"""Where liedar keeps things on disk, how it writes them, and how it checks them on the way back.

One cache root for everything derived (assembled GGUFs, dequantized models, activations,
the compiled capture callback): ``$LIEDAR_CACHE`` if set, else the platform's user cache
dir. Every write goes to a temporary name in the same directory and is renamed into place
(`liedar.core._util.atomic`), so a reader (or a process killed mid-write) sees either the old
state or the complete new one.

Why manifests: an atomic rename protects against a crash, not against a file damaged
*after* it was written (a disk error, a stray write, a half-restored backup). Every cached
artefact therefore records, when it is written, the size and sha256 of each of its files
(`write_manifest`); `verify_manifest` recomputes both on load, and a mismatch makes the
caller rebuild the artefact with a one-line note (`note`) instead of serving it. Hashing
costs about 1 s per 500 MB (measured: the 538 MB smollm2-135m copy in 1.06 s), once per
process and file (`sha256_file` remembers a file's hash while its inode, size, mtime and
ctime are unchanged; ctime cannot be set back by a user).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Iterable, Mapping, Optional

from liedar.core._util.atomic import atomic_dir, write_bytes_atomic
from liedar.core._util.atomic import atomic_path as atomic_file

__all__ = [
    "atomic_dir",
    "atomic_file",
    "cache_root",
    "discard",
    "manifest_of",
    "note",
    "sha256_file",
    "verify_manifest",
    "write_manifest",
]

MANIFEST_VERSION = 1


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


_hash_memo: dict[tuple, str] = {}


def _stamp(path: Path) -> tuple:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """The file's sha256 (hex); remembered in this process while the file is unchanged."""
    key = _stamp(path)
    if key in _hash_memo:
        return _hash_memo[key]
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    _hash_memo[key] = digest.hexdigest()
    return _hash_memo[key]


def note(message: str) -> None:
    """One line on stderr telling the user that liedar repaired something on its own."""
    sys.stderr.write(f"liedar: note: {' '.join(message.split())}\n")
    sys.stderr.flush()


def manifest_of(base: Path, files: Iterable[Path]) -> dict:
    """``{"version", "files": {relative name: {"size", "sha256"}}}`` for files under `base`."""
    base = Path(base)
    out = {}
    for f in sorted(Path(p) for p in files):
        rel = f.relative_to(base).as_posix()
        out[rel] = {"size": f.stat().st_size, "sha256": sha256_file(f)}
    return {"version": MANIFEST_VERSION, "files": out}


def write_manifest(manifest_path: Path, base: Path, files: Optional[Iterable[Path]] = None) -> dict:
    """Record size + sha256 of `files` (default: every file under `base` except the manifest)."""
    manifest_path, base = Path(manifest_path), Path(base)
    if files is None:
        files = [p for p in base.rglob("*") if p.is_file() and p.resolve() != manifest_path.resolve()]
    manifest = manifest_of(base, files)
    write_bytes_atomic(manifest_path, (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode())
    return manifest


def verify_manifest(manifest_path: Path, base: Path, *, require: Iterable[str] = ()) -> Optional[str]:
    """None when every recorded file exists with its recorded size and sha256; else the reason.

    ``require`` names files that must be recorded (a manifest that omits the weights does not
    vouch for them). Sizes are checked for every file before any hash is computed, so a
    truncated artefact is caught without reading it."""
    manifest_path, base = Path(manifest_path), Path(base)
    if not manifest_path.is_file():
        return "no manifest (made by an older liedar, or its writing was interrupted)"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        files: Mapping[str, Mapping] = manifest["files"]
        if manifest.get("version") != MANIFEST_VERSION or not isinstance(files, Mapping):
            return "manifest of another format"
        entries = [(str(k), int(v["size"]), str(v["sha256"])) for k, v in files.items()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "damaged manifest"
    missing = [r for r in require if r not in files]
    if missing:
        return f"manifest does not record {', '.join(missing)}"
    for rel, size, _ in entries:
        path = base / rel
        if ".." in Path(rel).parts or not path.is_file():
            return f"{rel} is missing"
        actual = path.stat().st_size
        if actual != size:
            return f"{rel} has {actual} bytes, {size} were written"
    for rel, _, digest in entries:
        if sha256_file(base / rel) != digest:
            return f"{rel} does not match the sha256 recorded when it was written"
    return None


def discard(path: Path) -> None:
    """Move a failed cache entry out of the way (renamed first, so no reader can pick it up
    half-deleted), then delete it."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return
    trash = path.with_name(f".{path.name}.{os.getpid()}-discard.tmp")
    try:
        os.replace(path, trash)
    except OSError:
        trash = path
    if trash.is_dir() and not trash.is_symlink():
        shutil.rmtree(trash, ignore_errors=True)
    else:
        trash.unlink(missing_ok=True)
