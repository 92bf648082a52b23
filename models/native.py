"""Copying hidden states out of llama.cpp's compute graph: the capture buffers and the
eval callback that fills them (C, compiled on first use; or its Python mirror).

Why compiled here rather than at install time: liedar installs as pure Python, and the
callback (models/llamacpp_capture.c) is one small file with no headers or libraries to
link, so the system C compiler builds it in a fraction of a second into the cache, keyed
by the source's hash. Where no compiler exists, `load_capture_library` returns None and
`Capture.python_callback` does the same work in Python (same buffers, same checks, same
error codes), only slower; the backend says which one it uses (``capture_path``).

The library is loaded only if it is the one liedar built for this source, from a folder
only the user can write (see `load_capture_library`); anything else is rebuilt or refused.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import stat
import subprocess
import warnings
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from liedar._util.atomic import atomic_path, write_bytes_atomic
from liedar.models.storage import cache_root, discard, note, sha256_file

SOURCE = Path(__file__).with_name("llamacpp_capture.c")
MAX_WANT = 256  # LIEDAR_MAX_WANT in the C source
NAME_LEN = 64  # LIEDAR_NAME_LEN (= GGML_MAX_NAME)
OK, BAD_LAYOUT, OVERFLOW = 0, 1, 2  # slot error codes, as in the C source
GGML_TYPE_F32 = 0


class Slot(ctypes.Structure):
    """``struct liedar_slot``: one wanted tensor and the buffer its rows go to."""

    _fields_ = [
        ("name", ctypes.c_char * NAME_LEN),
        ("dest", ctypes.c_void_p),
        ("capacity", ctypes.c_size_t),
        ("used", ctypes.c_size_t),
        ("error", ctypes.c_int),
        ("type", ctypes.c_int),
        ("ne", ctypes.c_int64 * 4),
    ]


class CaptureState(ctypes.Structure):
    """``struct liedar_capture``: tensor-layout offsets, ggml functions and the slots."""

    _fields_ = [
        ("type_offset", ctypes.c_size_t),
        ("ne_offset", ctypes.c_size_t),
        ("nb_offset", ctypes.c_size_t),
        ("name_offset", ctypes.c_size_t),
        ("d_model", ctypes.c_int64),
        ("stop_after_capture", ctypes.c_int),
        ("n_want", ctypes.c_int),
        ("nbytes", ctypes.c_void_p),
        ("tensor_get", ctypes.c_void_p),
        ("want", Slot * MAX_WANT),
    ]


class CaptureError(Exception):
    """A wanted tensor could not be copied; the message says which and why."""


class Capture:
    """Which tensors the next decode copies, and the float32 buffers they land in.

    `arm` before a decode (an empty set copies nothing), `rows` after it. The buffers
    are numpy arrays owned here, so they outlive the decode that fills them.
    """

    def __init__(self, tensor_struct: type, d_model: int, nbytes: Any, tensor_get: Any) -> None:
        self.d_model = int(d_model)
        self.state = CaptureState(
            type_offset=tensor_struct.type.offset,
            ne_offset=tensor_struct.ne.offset,
            nb_offset=tensor_struct.nb.offset,
            name_offset=tensor_struct.name.offset,
            d_model=self.d_model,
            nbytes=ctypes.cast(nbytes, ctypes.c_void_p).value,
            tensor_get=ctypes.cast(tensor_get, ctypes.c_void_p).value,
        )
        self._nbytes, self._tensor_get = nbytes, tensor_get
        self.buffers: dict[bytes, np.ndarray] = {}
        self._slot_of: dict[bytes, int] = {}
        self.python_error: Optional[str] = None

    @property
    def names(self) -> set[bytes]:
        return set(self._slot_of)

    def arm(self, names: set[bytes], n_rows: int) -> None:
        if len(names) > MAX_WANT:
            raise ValueError(f"at most {MAX_WANT} tensors can be captured at once, asked for {len(names)}")
        self.buffers, self._slot_of, self.python_error = {}, {}, None
        for i, name in enumerate(sorted(names)):
            buf = np.empty((n_rows, self.d_model), dtype=np.float32)
            slot = self.state.want[i]
            slot.name = name[: NAME_LEN - 1]
            slot.dest, slot.capacity, slot.used, slot.error = buf.ctypes.data, buf.nbytes, 0, OK
            self.buffers[name], self._slot_of[name] = buf, i
        self.state.n_want = len(names)

    def filled(self, name: bytes) -> int:
        """Rows of `name` copied by the last decode."""
        return int(self.state.want[self._slot_of[name]].used) // (4 * self.d_model)

    def rows(self, name: bytes, expected: int) -> np.ndarray:
        """The copied rows of `name`; CaptureError unless exactly `expected` arrived."""
        slot = self.state.want[self._slot_of[name]]
        label = name.decode()
        if slot.error == BAD_LAYOUT:
            raise CaptureError(
                f"tensor {label} reads as type {slot.type}, shape {list(slot.ne)} (or is not contiguous): "
                "the ggml_tensor layout in "
                "models/llamacpp.py does not match this llama.cpp build; use llama-cpp-python==0.3.36"
            )
        got = self.filled(name)
        if slot.error == OK and got == 0:
            raise CaptureError(f"llama.cpp produced no tensor {label}: this architecture names its layers differently")
        if slot.error == OVERFLOW:
            raise CaptureError(f"tensor {label} has more rows than the {expected} tokens decoded")
        if got != expected:
            raise CaptureError(f"tensor {label} has {got} rows for {expected} tokens")
        return self.buffers[name]

    def python_callback(self) -> Callable[[int, bool, Any], bool]:
        """The C callback's twin in Python (the fallback without a compiler)."""
        state = self.state

        def on_tensor(t_ptr: int, ask: bool, _user: Any) -> bool:
            try:
                index = self._slot_of.get(ctypes.string_at(t_ptr + state.name_offset))
                if index is None:
                    return not ask
                if ask:
                    return True
                slot = state.want[index]
                slot.type = ctypes.c_int.from_address(t_ptr + state.type_offset).value
                ne = (ctypes.c_int64 * 4).from_address(t_ptr + state.ne_offset)
                nb = (ctypes.c_size_t * 4).from_address(t_ptr + state.nb_offset)
                slot.ne[:] = list(ne)
                size = int(self._nbytes(t_ptr))
                if (
                    slot.type != GGML_TYPE_F32
                    or ne[0] != self.d_model
                    or ne[2] != 1
                    or ne[3] != 1
                    or nb[0] != 4
                    or nb[1] != ne[0] * 4
                    or size != ne[0] * ne[1] * 4
                ):
                    slot.error = BAD_LAYOUT
                    return True
                if slot.used + size > slot.capacity:
                    slot.error = OVERFLOW
                    return True
                self._tensor_get(t_ptr, slot.dest + slot.used, 0, size)
                slot.used += size
                return not state.stop_after_capture
            except Exception as exc:  # never let an exception cross into C
                self.python_error = f"eval callback failed: {exc}"
                return True

        return on_tensor


_loaded: dict[str, Optional[ctypes.CDLL]] = {}


class UnsafeLibraryError(OSError):
    """The cached library (or its folder) could be written by someone else: never loaded."""


def load_capture_library() -> Optional[ctypes.CDLL]:
    """The compiled callback library, building it into the cache if needed; None when it
    cannot be built (no C compiler, or ``LIEDAR_NATIVE_CAPTURE=0``) or cannot be trusted.

    Why the checks: ``dlopen`` runs a library's constructors, so a shared object planted at
    the cache path would run as the user on the next llama.cpp extraction. A library is
    loaded only when (1) it sits in a folder that only this user (or root) can write, every
    folder above it included (sticky folders like /tmp count as safe), (2) it is a regular
    file owned by this user and writable by nobody else, and (3) its size and sha256 match
    the record liedar wrote when it compiled it, for this very source (its full sha256).
    A library failing (3) is deleted and rebuilt (one note line); a folder failing (1) is
    tightened when it is ours, else the slower Python callback is used, with a warning.
    """
    if os.environ.get("LIEDAR_NATIVE_CAPTURE", "1") == "0":
        return None
    source_sha = hashlib.sha256(SOURCE.read_bytes()).hexdigest()
    key = source_sha[:16]
    if key in _loaded:
        return _loaded[key]
    folder = cache_root() / "native"
    target = folder / f"llamacpp_capture-{key}.so"
    record = target.with_suffix(".json")
    lib = None
    try:
        _secure_folder(folder)
        problem = _verify_library(target, record, source_sha)
        if problem is not None:
            if target.exists() or record.exists() or target.is_symlink():
                note(f"the compiled capture callback {target.name} failed verification ({problem}); rebuilding it")
            discard(target)
            discard(record)
            _compile(target)
            _write_record(target, record, source_sha)
            problem = _verify_library(target, record, source_sha)
            if problem is not None:
                raise UnsafeLibraryError(f"the freshly built {target} failed verification ({problem})")
        lib = ctypes.CDLL(str(target))
        lib.liedar_eval_callback.restype = ctypes.c_bool
        lib.liedar_eval_callback.argtypes = [ctypes.c_void_p, ctypes.c_bool, ctypes.c_void_p]
    except (OSError, subprocess.SubprocessError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fix = (
            "make the cache folder writable by you alone (chmod 700)"
            if isinstance(exc, UnsafeLibraryError)
            else "install a C compiler (cc) to build models/llamacpp_capture.c"
        )
        warnings.warn(
            f"llama.cpp capture uses the slower Python callback ({detail}); {fix}",
            RuntimeWarning,
            stacklevel=2,
        )
    _loaded[key] = lib
    return lib


def _writable_by_others(st: os.stat_result) -> bool:
    return bool(st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _secure_folder(folder: Path) -> None:
    """Create `folder` private (0700); refuse it when it, or a folder above it, can be written
    by another user (a sticky, world-writable folder such as /tmp is safe)."""
    folder.mkdir(parents=True, exist_ok=True)
    uid = os.getuid()
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise UnsafeLibraryError(f"{folder} is not a plain folder")
    if st.st_uid != uid:
        raise UnsafeLibraryError(f"{folder} belongs to another user (uid {st.st_uid})")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(folder, 0o700)
    for parent in folder.resolve().parents:
        pst = os.stat(parent)
        if pst.st_uid not in (uid, 0):
            raise UnsafeLibraryError(f"{parent}, above the cache, belongs to another user (uid {pst.st_uid})")
        if _writable_by_others(pst) and not pst.st_mode & stat.S_ISVTX:
            raise UnsafeLibraryError(f"{parent}, above the cache, can be written by other users")


def _verify_library(target: Path, record: Path, source_sha: str) -> Optional[str]:
    """None when `target` is the library liedar built for this source; else the reason."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return "not built yet"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.getuid() or _writable_by_others(st):
        return "owned or writable by another user"
    try:
        rec = json.loads(record.read_text(encoding="utf-8"))
        size, digest, built_from = int(rec["size"]), str(rec["sha256"]), str(rec["source_sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return "no build record"
    if built_from != source_sha:
        return "built from another source"
    if st.st_size != size:
        return f"{st.st_size} bytes, {size} were built"
    if sha256_file(target) != digest:
        return "its sha256 differs from the one recorded at build time"
    return None


def _write_record(target: Path, record: Path, source_sha: str) -> None:
    data = {"source_sha256": source_sha, "size": target.stat().st_size, "sha256": sha256_file(target)}
    write_bytes_atomic(record, (json.dumps(data, sort_keys=True) + "\n").encode())


def _compile(target: Path) -> None:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise FileNotFoundError("no C compiler found on PATH")
    with atomic_path(target) as tmp:
        subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE)],
            check=True,
            capture_output=True,
            timeout=120,
        )
    os.chmod(target, stat.S_IMODE(os.stat(target).st_mode) & ~0o022)
