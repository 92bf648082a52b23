"""The C eval callback (models/llamacpp_capture.c): what it asks for, and its fallbacks."""

from __future__ import annotations

import ctypes
import shutil

import pytest

from models import native


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty cache and no remembered library, so each test builds (or fails) anew."""
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path))
    monkeypatch.setattr(native, "_loaded", {})
    return tmp_path


def _fake_tensor(name: bytes, offset: int = 40) -> ctypes.Array:
    buf = ctypes.create_string_buffer(offset + 64)
    ctypes.memmove(ctypes.addressof(buf) + offset, name, len(name))
    return buf


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler on PATH")
def test_callback_asks_only_for_wanted_names_and_passes_on_the_data_verdict(fresh):
    lib = native.load_capture_library()
    assert lib is not None and list((fresh / "native").glob("llamacpp_capture-*.so"))
    seen = []
    verdict = {"go_on": True}

    def on_data(ptr):
        seen.append(ptr)
        return verdict["go_on"]

    keep = native.ON_DATA(on_data)
    state = native.CaptureState(name_offset=40, n_want=0, on_data=keep)
    state.set_want({b"l_out-14", b"result_norm"})
    user = ctypes.cast(ctypes.pointer(state), ctypes.c_void_p)
    wanted, other, prefix = _fake_tensor(b"l_out-14"), _fake_tensor(b"l_out-1"), _fake_tensor(b"l_out-140")
    ask = lib.liedar_eval_callback
    assert ask(ctypes.addressof(wanted), True, user) is True
    assert ask(ctypes.addressof(other), True, user) is False
    assert ask(ctypes.addressof(prefix), True, user) is False  # names compare whole, not by prefix
    assert ask(ctypes.addressof(wanted), False, user) is True and seen == [ctypes.addressof(wanted)]
    verdict["go_on"] = False
    assert ask(ctypes.addressof(wanted), False, user) is False  # the stop-after-capture request
    state.set_want(set())
    assert ask(ctypes.addressof(wanted), True, user) is False
    assert native.load_capture_library() is lib  # built once, then remembered


def test_no_compiler_falls_back_with_one_warning(fresh, monkeypatch):
    monkeypatch.setenv("CC", str(fresh / "no-such-compiler"))
    with pytest.warns(RuntimeWarning, match="slower Python callback.*C compiler"):
        assert native.load_capture_library() is None


def test_native_capture_can_be_switched_off(fresh, monkeypatch):
    monkeypatch.setenv("LIEDAR_NATIVE_CAPTURE", "0")
    assert native.load_capture_library() is None
    assert not (fresh / "native").exists()


def test_too_many_names_is_a_clear_error():
    state = native.CaptureState()
    with pytest.raises(ValueError, match="at most 256"):
        state.set_want({f"t{i}".encode() for i in range(native.MAX_WANT + 1)})
