"""The pitfall instruments' flags through the real command line: one line, exit 2, before any model loads."""

from __future__ import annotations

import pytest

from liedar.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["contamination", "--fresh", "10"], "--fresh 10: give at least 80"),
        (["observer", "--families", "benchmark,grader"], "at least one evaluation and one deployment family"),
        (["observer", "--families", "benchmark,nope"], "no presentation family 'nope'"),
    ],
)
def test_bad_flags_one_line(argv, message, capsys) -> None:
    try:
        code = main(["behavioral", *argv])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
