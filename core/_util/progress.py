"""Progress for long steps: a tqdm bar on a terminal, one line per step elsewhere.

Why not tqdm everywhere: written to a pipe or a log file, a tqdm bar is a run of
carriage-return redraws with no newline, so a job's log reads as one ever-growing line
(and an error after it joined that line). Off a terminal a step here prints one line when
it ends — what it did, how many, how long — if it took at least `QUIET_BELOW` seconds, so
a log shows each long step finished and short ones add nothing. ``disable=True`` silences
both.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Iterable, Iterator, Optional

QUIET_BELOW = 2.0  # seconds: a step shorter than this prints no line off a terminal


def progress(
    iterable: Optional[Iterable[Any]] = None,
    *,
    desc: str = "",
    total: Optional[int] = None,
    unit: str = "it",
    disable: bool = False,
    leave: bool = True,
) -> Any:
    """A tqdm bar when stderr is a terminal; else a `StepLine` (same calls, one line at the end)."""
    if disable or sys.stderr.isatty():
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, unit=unit, disable=disable, leave=leave)
    return StepLine(iterable, desc=desc, total=total, unit=unit)


class StepLine:
    """The subset of tqdm liedar uses (iterate, ``update``, ``set_postfix_str``, ``close``,
    ``with``), printing ``desc: N unit in S s`` to stderr once, when a long step ends."""

    def __init__(self, iterable: Optional[Iterable[Any]], *, desc: str, total: Optional[int], unit: str) -> None:
        self.iterable, self.desc, self.unit, self.n = iterable, desc, unit, 0
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.total, self._started, self._closed = total, time.perf_counter(), False

    def __iter__(self) -> Iterator[Any]:
        try:
            for item in self.iterable or ():
                yield item
                self.n += 1
        finally:
            self.close()

    def __enter__(self) -> "StepLine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
        """Live detail belongs on a terminal bar; the one line at the end leaves it out."""

    set_postfix = set_description = refresh = set_postfix_str

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        done = f"{self.n}/{self.total}" if self.total is not None and self.n != self.total else f"{self.n}"
        seconds = time.perf_counter() - self._started
        if seconds < QUIET_BELOW:
            return
        print(f"{self.desc}: {done} {self.unit} in {seconds:.1f} s", file=sys.stderr, flush=True)
