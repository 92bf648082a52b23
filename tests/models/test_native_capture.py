"""The capture buffers and eval callbacks (models/native.py, models/llamacpp_capture.c),
driven with fake tensors: what is asked for, what is copied, and every refusal."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

from liedar.models import native

D = 4  # width of the fake tensors


class FakeTensor(ctypes.Structure):
    """Just the ggml_tensor fields the callback reads, at offsets of our choosing."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("ne", ctypes.c_int64 * 4),
        ("nb", ctypes.c_size_t * 4),
        ("name", ctypes.c_char * 64),
        ("data", ctypes.c_void_p),
    ]


def _tensor(name: bytes, values: np.ndarray, type_: int = 0) -> tuple[FakeTensor, np.ndarray]:
    values = np.ascontiguousarray(values, dtype=np.float32)
    t = FakeTensor(type=type_, name=name, data=values.ctypes.data)
    t.ne[:] = [values.shape[1], values.shape[0], 1, 1]
    t.nb[:] = [4, 4 * values.shape[1], 4 * values.size, 4 * values.size]
    return t, values


NBYTES = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p)(
    lambda p: FakeTensor.from_address(p).ne[0] * FakeTensor.from_address(p).ne[1] * 4
)
GET = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)(
    lambda p, dst, off, size: ctypes.memmove(dst, FakeTensor.from_address(p).data + off, size)
)


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty cache and no remembered library, so each test builds (or fails) anew."""
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path))
    monkeypatch.setattr(native, "_loaded", {})
    return tmp_path


INSTALLED = native.installed_library() is not None  # built at install when a C compiler existed


def _callback(which: str, cap: native.Capture) -> tuple:
    """(callback(t_ptr, ask, user), user): the compiled C function or its Python twin."""
    if which == "python":
        return cap.python_callback(), None
    if not INSTALLED:
        pytest.skip("liedar was installed without its compiled callback (no C compiler at install)")
    lib = native.load_capture_library()
    return lib.liedar_eval_callback, ctypes.cast(ctypes.pointer(cap.state), ctypes.c_void_p)


@pytest.mark.parametrize("which", ["c", "python"])
def test_callback_asks_for_wanted_names_copies_pieces_in_order_and_stops_on_request(fresh, which):
    cap = native.Capture(FakeTensor, D, NBYTES, GET)
    cb, user = _callback(which, cap)
    cap.arm({b"l_out-14", b"result_norm"}, n_rows=3)
    rng = np.random.default_rng(0)
    first, a = _tensor(b"l_out-14", rng.normal(size=(2, D)))  # two micro-batches: 2 rows, then 1
    second, b = _tensor(b"l_out-14", rng.normal(size=(1, D)))
    other, _ = _tensor(b"l_out-1", rng.normal(size=(3, D)))
    prefix, _ = _tensor(b"l_out-140", rng.normal(size=(3, D)))
    assert cb(ctypes.addressof(first), True, user) is True
    assert cb(ctypes.addressof(other), True, user) is False
    assert cb(ctypes.addressof(prefix), True, user) is False  # whole names, not prefixes
    assert cb(ctypes.addressof(first), False, user) is True
    assert cap.filled(b"l_out-14") == 2
    cap.state.stop_after_capture = 1
    assert cb(ctypes.addressof(second), False, user) is False  # the stop-after-capture request
    np.testing.assert_array_equal(cap.rows(b"l_out-14", 3), np.vstack([a, b]))
    with pytest.raises(native.CaptureError, match="produced no tensor result_norm"):
        cap.rows(b"result_norm", 3)
    cap.arm(set(), 0)
    assert cb(ctypes.addressof(first), True, user) is False


@pytest.mark.parametrize("which", ["c", "python"])
def test_bad_layout_and_overflow_are_refused_not_copied(fresh, which):
    cap = native.Capture(FakeTensor, D, NBYTES, GET)
    cb, user = _callback(which, cap)
    cap.arm({b"embd"}, n_rows=2)
    wrong_type, _ = _tensor(b"embd", np.ones((2, D)), type_=1)
    assert cb(ctypes.addressof(wrong_type), False, user) is True
    with pytest.raises(native.CaptureError, match=r"reads as type 1.*llama-cpp-python==0\.3\.36"):
        cap.rows(b"embd", 2)
    cap.arm({b"embd"}, n_rows=2)
    wide, _ = _tensor(b"embd", np.ones((2, D + 1)))
    cb(ctypes.addressof(wide), False, user)
    with pytest.raises(native.CaptureError, match="reads as type 0, shape"):
        cap.rows(b"embd", 2)
    cap.arm({b"embd"}, n_rows=2)
    strided, _ = _tensor(b"embd", np.ones((2, D)))
    strided.nb[1] = 4 * (D + 1)  # same byte count, rows not back to back
    cb(ctypes.addressof(strided), False, user)
    with pytest.raises(native.CaptureError, match="not contiguous"):
        cap.rows(b"embd", 2)
    cap.arm({b"embd"}, n_rows=2)
    too_long, _ = _tensor(b"embd", np.ones((3, D)))
    cb(ctypes.addressof(too_long), False, user)
    with pytest.raises(native.CaptureError, match="more rows than the 2 tokens decoded"):
        cap.rows(b"embd", 2)


@pytest.mark.skipif(not INSTALLED, reason="liedar was installed without its compiled callback")
def test_library_is_the_one_installed_with_the_package(fresh):
    lib = native.load_capture_library()
    assert lib is not None and Path(lib._name).parent == Path(native.__file__).resolve().parent
    assert native.load_capture_library() is lib
    assert not (fresh / "native").exists(), "nothing is compiled into or read from the cache"


def test_an_install_without_the_library_falls_back_with_one_warning(fresh, monkeypatch):
    monkeypatch.setattr(native, "installed_library", lambda: None)
    with pytest.warns(RuntimeWarning, match="slower Python callback.*reinstall liedar where a C compiler"):
        assert native.load_capture_library() is None


def test_native_capture_can_be_switched_off(fresh, monkeypatch):
    monkeypatch.setenv("LIEDAR_NATIVE_CAPTURE", "0")
    assert native.load_capture_library() is None
    assert not (fresh / "native").exists()


def test_too_many_names_is_a_clear_error():
    cap = native.Capture(FakeTensor, D, NBYTES, GET)
    with pytest.raises(ValueError, match="at most 256"):
        cap.arm({f"t{i}".encode() for i in range(native.MAX_WANT + 1)}, 1)
