"""Long steps show a bar on a terminal and one line each in a log (liedar.core._util.progress)."""

from __future__ import annotations

import io
import sys

import pytest

from liedar.core._util import progress as mod


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


class _Log:
    """stderr as pytest captures it (not a terminal), read back as text."""

    def __init__(self, capsys) -> None:
        self.capsys = capsys

    def getvalue(self) -> str:
        return self.capsys.readouterr().err


@pytest.fixture
def log(capsys) -> _Log:
    assert not sys.stderr.isatty()
    return _Log(capsys)


def test_a_long_step_off_a_terminal_writes_one_line_when_it_ends(log, monkeypatch):
    monkeypatch.setattr(mod, "QUIET_BELOW", 0.0)
    assert list(mod.progress(["a", "b", "c"], desc="cross-check: asking", unit="item")) == ["a", "b", "c"]
    with mod.progress(total=5, desc="extract m", unit="input") as bar:
        bar.update(2)
    text = log.getvalue()
    lines = text.splitlines()
    assert len(lines) == 2 and "\r" not in text
    assert lines[0].startswith("cross-check: asking: 3 item in ") and lines[0].endswith(" s")
    assert lines[1].startswith("extract m: 2/5 input in ")  # an interrupted step says how far it got


def test_a_short_step_off_a_terminal_adds_nothing(log):
    for _ in mod.progress(range(3), desc="quick"):
        pass
    assert log.getvalue() == ""


def test_an_interrupted_iteration_still_writes_its_line(log, monkeypatch):
    monkeypatch.setattr(mod, "QUIET_BELOW", 0.0)
    with pytest.raises(RuntimeError):
        for i in mod.progress(range(10), desc="scoring", unit="item"):
            if i == 4:
                raise RuntimeError("stop")
    assert log.getvalue().startswith("scoring: 4/10 item in ")


def test_a_terminal_gets_a_tqdm_bar(monkeypatch):
    from tqdm.auto import tqdm

    stream = _Stream(tty=True)
    monkeypatch.setattr(sys, "stderr", stream)
    bar = mod.progress(range(2), desc="t")
    assert isinstance(bar, tqdm)
    bar.close()
    assert isinstance(mod.progress(range(2), desc="t", disable=True), tqdm)  # disabled: silent either way
