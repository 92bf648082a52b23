"""Value checks for command-line arguments (argparse ``type=`` callables).

Why in the bottom layer: the CLI's shared arguments (`liedar.commands.args`) and each
instrument's own flags (`liedar.behavioral.instrument.Instrument.add_arguments`) use the
same checks, and instruments sit below the CLI. Each raises
``argparse.ArgumentTypeError`` with the fix, which the CLI prints as one line (exit 2)
before any model is loaded.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Callable

from liedar.core._util.workers import max_workers

_SYSTEM_TREES = ("/proc", "/sys", "/dev")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give one of at least 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1; give a whole number of at least 1")
    return value


def int_up_to(most: int, why: str) -> "Callable[[str], int]":
    """A whole number in 1..``most``; above it, refused naming the bound and ``why`` it is one.

    Why a bound: a count far above what the work can use (a billion samples per menu, 10**12
    bootstrap draws) runs past any deadline without a word; refused while parsing, it costs
    nothing. ``why`` completes "give at most N: ...".

    Parameters
    ----------
    most : int
        The largest value taken.
    why : str
        Why nothing above it helps, e.g. ``"more samples per menu than a study can use"``.

    Returns
    -------
    callable
        An argparse ``type=``.
    """

    def parse(text: str) -> int:
        value = positive_int(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"{value} is above {most:,}, {why}; give at most {most:,}")
        return value

    return parse


def worker_count(text: str) -> int:
    """``--workers``: 1 .. twice this machine's cores (each worker is a one-thread process)."""
    most = max_workers()
    return int_up_to(most, f"twice this machine's {os.cpu_count() or 1} cores (each worker is one process)")(text)


def nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give one of at least 0") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; give a whole number of at least 0")
    return value


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; give a finite value")
    return value


def nonnegative_float(text: str) -> float:
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; give a value of at least 0")
    return value


def positive_float(text: str) -> float:
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} is not above 0; give a positive number")
    return value


def open_unit_interval(text: str) -> float:
    """A probability strictly between 0 and 1 (an FPR, an alpha, a held-out share)."""
    value = finite_float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{value} is not strictly between 0 and 1")
    return value


def comma_list(text: str) -> list[str]:
    """Comma-separated names; an empty entry (``a,,b``, a trailing comma) is refused, never dropped."""
    items = [x.strip() for x in text.split(",")]
    if not any(items):
        raise argparse.ArgumentTypeError(f"{text!r} names nothing; give comma-separated names")
    if not all(items):
        raise argparse.ArgumentTypeError(f"{text!r} has an empty name between commas; give e.g. a,b")
    return items


def float_list(text: str) -> list[float]:
    try:
        return [finite_float(x) for x in comma_list(text)]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r}: give comma-separated finite numbers, e.g. 0,0.001,0.002") from None


def layer_list(text: str) -> list[int]:
    """The one layer grammar: ``12``, ``6,12,18``, ``4-8`` (inclusive), or a mix (``1,4-6``).

    Layers count as everywhere in liedar: 0 = embeddings, i = output of block i,
    n_layers + 1 = after the final norm; the range is checked against the model later.
    """
    layers: list[int] = []
    for part in comma_list(text):
        lo, sep, hi = part.partition("-")
        try:
            if sep:
                a, b = int(lo), int(hi)
                if a > b:
                    raise ValueError
                layers.extend(range(a, b + 1))
            else:
                layers.append(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not a layer or an ascending range; write e.g. 12, 6,12,18 or 4-8"
            ) from None
    if any(x < 0 for x in layers):
        raise argparse.ArgumentTypeError(f"{text!r}: layers start at 0 (0 = embeddings)")
    return sorted(set(layers))


ALL_LAYERS = "all"


def layers_or_all(text: str) -> "list[int] | str":
    """`layer_list`, or ``all`` (every layer from 0 = embeddings to n_layers + 1 = final norm)."""
    return ALL_LAYERS if text.strip() == ALL_LAYERS else layer_list(text)


def _check_writable_parent(path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    probe = parent
    while not probe.exists():  # the nearest existing ancestor must let us create the rest
        probe = probe.parent
    if not probe.is_dir():
        raise argparse.ArgumentTypeError(f"{path}: {probe} is a file, not a folder; choose another location")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{path}: {probe} is not writable; choose a location you can write to")


def _check_not_system(path: Path) -> None:
    resolved = str(path.resolve())
    if any(resolved == t or resolved.startswith(t + "/") for t in _SYSTEM_TREES):
        raise argparse.ArgumentTypeError(f"{path} is under a system tree ({resolved}); write to an ordinary folder")


def output_file(text: str) -> Path:
    """A file the command will write (atomically): not an existing folder, parent writable."""
    path = Path(text).expanduser()
    _check_not_system(path)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a folder; give a file name (e.g. {path / 'result.json'})")
    if path.exists() and not path.is_file():
        raise argparse.ArgumentTypeError(f"{path} exists and is not a regular file; choose another name")
    _check_writable_parent(path)
    return path


def output_dir(text: str) -> Path:
    """A folder the command will write into: not an existing file, creatable."""
    path = Path(text).expanduser()
    _check_not_system(path)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} exists and is not a folder; give a folder name")
    if path.is_dir():
        if not os.access(path, os.W_OK | os.X_OK):
            raise argparse.ArgumentTypeError(f"{path} is not writable; choose a folder you can write to")
    else:
        _check_writable_parent(path)
    return path


def input_file(text: str) -> Path:
    """A file the command reads: must exist and be a regular, readable file."""
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{path} does not exist; give the path of an existing file")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{path} is not a regular file; give a file, not a folder")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"{path} is not readable; check its permissions")
    return path


def input_dir(text: str) -> Path:
    path = Path(text).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is not an existing folder")
    return path
