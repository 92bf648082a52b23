"""Copying hidden states out of llama.cpp's compute graph: the capture buffers and the
eval callback that fills them (C, compiled on first use; or its Python mirror).

Why compiled here rather than at install time: liedar installs as pure Python, and the
callback (models/llamacpp_capture.c) is one small file with no headers or libraries to
link, so the system C compiler builds it in a fraction of a second into the cache, keyed
by the source's hash. Where no compiler exists, `load_capture_library` returns None and
`Capture.python_callback` does the same work in Python (same buffers, same checks, same
error codes), only slower; the backend says which one it uses (``capture_path``).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from liedar._util.atomic import atomic_path
from liedar.models.storage import cache_root

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


def load_capture_library() -> Optional[ctypes.CDLL]:
    """The compiled callback library, building it into the cache if needed; None when it
    cannot be built (no C compiler, or ``LIEDAR_NATIVE_CAPTURE=0``)."""
    if os.environ.get("LIEDAR_NATIVE_CAPTURE", "1") == "0":
        return None
    key = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    if key in _loaded:
        return _loaded[key]
    target = cache_root() / "native" / f"llamacpp_capture-{key}.so"
    lib = None
    try:
        if not target.is_file():
            _compile(target)
        lib = ctypes.CDLL(str(target))
        lib.liedar_eval_callback.restype = ctypes.c_bool
        lib.liedar_eval_callback.argtypes = [ctypes.c_void_p, ctypes.c_bool, ctypes.c_void_p]
    except (OSError, subprocess.SubprocessError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        warnings.warn(
            f"llama.cpp capture uses the slower Python callback ({detail}); "
            "install a C compiler (cc) to build models/llamacpp_capture.c",
            RuntimeWarning,
            stacklevel=2,
        )
    _loaded[key] = lib
    return lib


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
