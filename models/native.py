"""The C eval callback for llama.cpp (models/llamacpp_capture.c), compiled on first use.

Why compiled here rather than at install time: liedar installs as pure Python, and the
callback is 30 lines with no headers or libraries to link, so the system C compiler
builds it in a fraction of a second into the cache, keyed by the source's hash. Where no
compiler exists, `load_capture_library` returns None and the llama.cpp backend falls back
to a Python callback that gives the same tensors, only slower (it says so once).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Optional

from liedar.atomic import atomic_path
from models.storage import cache_root

SOURCE = Path(__file__).with_name("llamacpp_capture.c")
MAX_WANT = 256  # LIEDAR_MAX_WANT in the C source
NAME_LEN = 64  # LIEDAR_NAME_LEN (= GGML_MAX_NAME)

ON_DATA = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p)


class CaptureState(ctypes.Structure):
    """Mirror of ``struct liedar_capture``: which tensor names the callback stops for."""

    _fields_ = [
        ("name_offset", ctypes.c_size_t),
        ("n_want", ctypes.c_int),
        ("want", (ctypes.c_char * NAME_LEN) * MAX_WANT),
        ("on_data", ON_DATA),
    ]

    def set_want(self, names: set[bytes]) -> None:
        if len(names) > MAX_WANT:
            raise ValueError(f"at most {MAX_WANT} tensors can be captured at once, asked for {len(names)}")
        for i, name in enumerate(sorted(names)):
            self.want[i].value = name[: NAME_LEN - 1]
        self.n_want = len(names)


_loaded: dict[str, Optional[ctypes.CDLL]] = {}


def load_capture_library() -> Optional[ctypes.CDLL]:
    """The compiled callback library, building it into the cache if needed; None when it
    cannot be built (no C compiler, or ``LIEDAR_NATIVE_CAPTURE=0``)."""
    if os.environ.get("LIEDAR_NATIVE_CAPTURE", "1") == "0":
        return None
    source = SOURCE.read_bytes()
    key = hashlib.sha256(source).hexdigest()[:16]
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
    except (OSError, subprocess.CalledProcessError, FileNotFoundError) as exc:
        warnings.warn(
            f"llama.cpp capture uses the slower Python callback ({str(exc).splitlines()[0] if str(exc) else exc!r}); "
            "install a C compiler (cc) to build models/llamacpp_capture.c",
            RuntimeWarning,
            stacklevel=2,
        )
        lib = None
    _loaded[key] = lib
    return lib


def _compile(target: Path) -> None:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise FileNotFoundError("no C compiler found on PATH")
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE)],
            check=True,
            capture_output=True,
            timeout=120,
        )
