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
import sys
from pathlib import Path
from typing import Callable, Iterable, NoReturn, Optional, Sequence

from liedar._util.argtypes import (  # noqa: F401  (the shared value types, re-exported for command modules)
    ALL_LAYERS,
    comma_list,
    finite_float,
    float_list,
    input_dir,
    input_file,
    layer_list,
    layers_or_all,
    nonnegative_float,
    nonnegative_int,
    open_unit_interval,
    output_dir,
    output_file,
    positive_int,
)
from liedar.errors import InputError

DEFAULT_MODEL = "smollm2-135m"
LOCAL_BACKENDS = ("transformers", "llamacpp")
INTERVALS = ("clopper-pearson", "wilson")


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2), not the usage block.

    ``--help`` still prints the full usage; only errors are shortened.
    """

    def error(self, message: str) -> NoReturn:
        print(f"liedar: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def usage_error(parser: argparse.ArgumentParser, subcommands: Iterable[str]) -> int:
    """A command group called without its subcommand: one line naming the choices, exit 2."""
    print(f"liedar: error: {parser.prog} needs one of: {', '.join(subcommands)} (see {parser.prog} --help)",
          file=sys.stderr)  # fmt: skip
    return 2


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
