"""Copying hidden states out of llama.cpp's compute graph: the capture buffers and the
eval callback that fills them (C, compiled at install; or its Python mirror).

Why compiled at install: the callback (models/llamacpp_capture.c) is native code run
inside llama.cpp's graph computation, so where it comes from must be as trustworthy as the
rest of the installed package. setuptools builds it with the package (pyproject's
``ext-modules``) into ``liedar/models/_llamacpp_capture*.so``, next to this file, like
any compiled wheel. liedar never compiles a library at run time and never loads one from
the user's cache: a cache can be written by anything running as the user, and a build
record stored beside a library authenticates nothing.

Where the install had no C compiler the extension is absent (it is optional), and
`load_capture_library` returns None: `Capture.python_callback` does the same work in Python
(same buffers, same checks, same error codes), only slower; the backend says which one
it uses (``capture_path``).
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import os
import stat
import warnings
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

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
LIBRARY_STEM = "_llamacpp_capture"  # pyproject's ext-modules name, last part
REINSTALL = "reinstall liedar where a C compiler (cc) exists: scripts/bootstrap.sh, or pip install -e ."


class UnsafeLibraryError(OSError):
    """The installed library (or its folder) can be written by another user: never loaded."""


def installed_library() -> Optional[Path]:
    """The capture library built at install, beside this module; None when it was not built.

    Only the package's own folder is searched (with this interpreter's extension suffixes),
    never the cache, the working directory or the loader's search path.
    """
    here = Path(__file__).resolve().parent
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = here / f"{LIBRARY_STEM}{suffix}"
        if path.is_file():
            return path
    return None


def load_capture_library() -> Optional[ctypes.CDLL]:
    """The compiled callback library installed with liedar; None when the install built
    none (no C compiler then), when ``LIEDAR_NATIVE_CAPTURE=0``, or when it is unsafe.

    Why the ownership check as well: ``dlopen`` runs a library's constructors, so the file
    and its folder must be writable only by their owner (this user or root), as any
    installed package is; a library failing that is not loaded and the slower Python
    callback is used, with a warning.
    """
    if os.environ.get("LIEDAR_NATIVE_CAPTURE", "1") == "0":
        return None
    if "installed" in _loaded:
        return _loaded["installed"]
    lib = None
    path = installed_library()
    try:
        if path is None:
            raise FileNotFoundError("liedar was installed without its compiled capture callback")
        _check_installed(path)
        lib = ctypes.CDLL(str(path))
        lib.liedar_eval_callback.restype = ctypes.c_bool
        lib.liedar_eval_callback.argtypes = [ctypes.c_void_p, ctypes.c_bool, ctypes.c_void_p]
    except (OSError, AttributeError) as exc:
        lib = None
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fix = "make it writable by its owner alone (chmod go-w)" if isinstance(exc, UnsafeLibraryError) else REINSTALL
        warnings.warn(
            f"llama.cpp capture uses the slower Python callback ({detail}); {fix}", RuntimeWarning, stacklevel=2
        )
    _loaded["installed"] = lib
    return lib


def _writable_by_others(st: os.stat_result) -> bool:
    return bool(st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _check_installed(path: Path) -> None:
    """Refuse a library that another user could have replaced: not a regular file, owned by
    someone other than this user or root, or writable by group/others (file or folder)."""
    uid = os.getuid()
    for what, target in (("library", path), ("folder", path.parent)):
        st = os.lstat(target)
        if what == "library" and not stat.S_ISREG(st.st_mode):
            raise UnsafeLibraryError(f"the installed {path.name} is not a regular file")
        if st.st_uid not in (uid, 0):
            raise UnsafeLibraryError(f"the installed {what} {target} belongs to another user (uid {st.st_uid})")
        if _writable_by_others(st) and not (what == "folder" and st.st_mode & stat.S_ISVTX):
            raise UnsafeLibraryError(f"the installed {what} {target} can be written by other users")
