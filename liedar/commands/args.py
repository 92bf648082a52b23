"""The command line's shared arguments and value checks: declared once, checked at parse time.

Why one place: ``--model``, ``--backend``, ``--threads``, ``--output``, ``--interval`` and
``--seed`` mean the same thing in every subcommand, and every value the CLI takes must be
refused *before* a model loads or any work starts, with one line naming the problem and the
fix (exit 2). argparse ``type=`` callables run while parsing, so a bad ``--threads 0`` or an
``--output`` that is a directory never reaches the work; what needs several arguments at once
(an output that would overwrite an input) is checked by `refuse_overwrite` at the top of a
command's ``run``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Callable, NoReturn, Optional, Sequence

from liedar.errors import InputError

DEFAULT_MODEL = "smollm2-135m"
LOCAL_BACKENDS = ("transformers", "llamacpp")
INTERVALS = ("clopper-pearson", "wilson")
_SYSTEM_TREES = ("/proc", "/sys", "/dev")


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2), not the usage block.

    ``--help`` still prints the full usage; only errors are shortened.
    """

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


# ---- value types (argparse ``type=``): raise ArgumentTypeError with the fix ----------------


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give one of at least 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1; give a whole number of at least 1")
    return value


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


def open_unit_interval(text: str) -> float:
    """A probability strictly between 0 and 1 (an FPR, an alpha, a held-out share)."""
    value = finite_float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{value} is not strictly between 0 and 1")
    return value


def comma_list(text: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"{text!r} names nothing; give comma-separated names")
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


def refuse_overwrite(outputs: Sequence[Optional[Path]], inputs: Sequence[Optional[Path]]) -> None:
    """No command may write over one of its own inputs (or into a folder that holds one).

    Called at the top of ``run``, before any work: argparse checks one value at a time.
    """
    ins = [Path(p).resolve() for p in inputs if p is not None and Path(p).exists()]
    for out in outputs:
        if out is None:
            continue
        o = Path(out).resolve()
        for i in ins:
            if o == i:
                raise InputError(f"{out} is also an input of this command; write the output to another file")


# ---- shared argument groups ------------------------------------------------------------


def add_model_arguments(
    p: argparse.ArgumentParser,
    *,
    default: Optional[str] = DEFAULT_MODEL,
    backends: Sequence[str] = LOCAL_BACKENDS,
    backend_help: str = "",
) -> None:
    """``--model``, ``--backend`` and ``--threads``, the same in every command."""
    if default is None:
        p.add_argument(
            "--model", required=True, help="built-in name (smollm2-135m, gemma3-270m), .gguf file or HF folder"
        )
    else:
        p.add_argument("--model", default=default, help=f"model name or path (default {default})")
    p.add_argument(
        "--backend",
        default=backends[0],
        choices=tuple(backends),
        help=f"model backend (default {backends[0]}){'; ' + backend_help if backend_help else ''}",
    )
    p.add_argument("--threads", type=positive_int, default=None, help="CPU threads for the model (default 2)")


def add_interval_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--interval",
        default="clopper-pearson",
        choices=INTERVALS,
        help="interval for rates (default clopper-pearson: never below nominal coverage)",
    )


def add_seed_argument(p: argparse.ArgumentParser, what: str = "every sampled choice") -> None:
    p.add_argument("--seed", type=nonnegative_int, default=0, help=f"seed for {what} (default 0)")


def add_output_argument(
    p: argparse.ArgumentParser, help_text: str, *, kind: str = "file", required: bool = False, default: object = None
) -> None:
    p.add_argument(
        "--output",
        type=output_file if kind == "file" else output_dir,
        required=required,
        default=default,
        help=help_text,
    )


Register = Callable[[argparse._SubParsersAction], None]
