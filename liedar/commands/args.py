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
from typing import Any, Callable, Iterable, NoReturn, Optional, Sequence

from liedar.core._util.argtypes import (  # noqa: F401  (the shared value types, re-exported for command modules)
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
    worker_count,
)
from liedar.core.errors import InputError

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


SERVED_PREFIX = "openai:"
SERVED_COMMANDS = "`liedar behavioral INSTRUMENT` (the black-box instruments, see `liedar behavioral --help`)"


def local_model(command: str) -> Callable[[str], str]:
    """An argparse ``type=`` for ``--model`` in a command that reads hidden states.

    Why at parse time: a served model (``openai:MODEL``) answers with text and
    log-probabilities, never hidden states, so a white-box command cannot use it; refusing
    while parsing means no model loads, no server is asked and no file is written first.
    """

    def check(text: str) -> str:
        if str(text).startswith(SERVED_PREFIX):
            raise argparse.ArgumentTypeError(
                f"{text} is a served model: a server returns text and log-probabilities, not the hidden states "
                f"`liedar {command}` reads; give a local model (smollm2-135m, gemma3-270m, a .gguf file or an HF "
                f"folder), or use a served model with {SERVED_COMMANDS}"
            )
        return text

    return check


def add_model_arguments(
    p: argparse.ArgumentParser,
    *,
    default: Optional[str] = DEFAULT_MODEL,
    backends: Sequence[str] = LOCAL_BACKENDS,
    backend_help: str = "",
    hidden_states_for: Optional[str] = None,
) -> None:
    """``--model``, ``--backend`` and ``--threads``, the same in every command.

    ``hidden_states_for`` names a command that reads hidden states (``"extract"``,
    ``"probe train"``, ...): its ``--model`` then refuses a served model at parse time
    (`local_model`).
    """
    kind: dict[str, Any] = {"type": local_model(hidden_states_for)} if hidden_states_for else {}
    if default is None:
        p.add_argument(
            "--model",
            required=True,
            help="built-in name (smollm2-135m, gemma3-270m), .gguf file or HF folder",
            **kind,
        )
    else:
        p.add_argument("--model", default=default, help=f"model name or path (default {default})", **kind)
    p.add_argument(
        "--backend",
        default=backends[0],
        choices=tuple(backends),
        help=f"model backend (default {backends[0]}){'; ' + backend_help if backend_help else ''}",
    )
    p.add_argument("--threads", type=positive_int, default=None, help="CPU threads for the model (default 2)")


def add_call_cache_argument(p: argparse.ArgumentParser) -> None:
    """``--no-call-cache``: ask the model every question again instead of replaying stored answers."""
    p.add_argument(
        "--no-call-cache",
        dest="call_cache",
        action="store_false",
        help="ask the model every question again instead of replaying its stored answers, and "
        "compute every step again instead of reading another output folder's results from the cache "
        "(replays are bit-identical; see docs/report.md, 'The model-call cache')",
    )


def add_workers_argument(p: argparse.ArgumentParser) -> None:
    """``--workers N``: processes a run's models are spread over, one thread each (the validation
    matrix's, an audit's after its references); None: `liedar.core._util.workers.default_workers`,
    resolved when the command runs."""
    p.add_argument(
        "--workers",
        type=worker_count,
        default=None,
        metavar="N",
        help="processes the models run on, one thread each "
        "(default: 2 on a machine with two cores or more, else 1; 1 runs them in this process)",
    )


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


Register = Callable[[argparse._SubParsersAction], None]  # noqa: SLF001 - argparse names the type only so


# ---- compute: device, dtype, Ray (docs/scale.md) ------------------------------------------

DTYPE_CHOICES = ("float32", "bfloat16", "float16")


def add_compute_arguments(p: argparse.ArgumentParser) -> None:
    """``--device``/``--dtype`` (transformers backend) and ``--ray [ADDRESS]`` with its
    per-actor resources; `compute_check` refuses what this machine or cluster cannot run."""
    g = p.add_argument_group("compute (docs/scale.md)")
    g.add_argument("--device", default="cpu", help="transformers device: cpu (default), auto, cuda, cuda:N, mps")
    g.add_argument("--dtype", default="float32", choices=DTYPE_CHOICES, help="model precision (default float32)")
    g.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="extract on Ray actors: no ADDRESS starts a local cluster (stopped at the end); 'auto' or host:port "
        "joins a running one",
    )
    g.add_argument("--num-cpus", type=positive_int, default=1, help="CPUs per Ray actor (default 1)")
    g.add_argument("--num-gpus", type=nonnegative_float, default=0.0, help="GPUs per Ray actor (default 0)")
    g.add_argument("--concurrency", type=positive_int, default=1, help="Ray actors, one model each (default 1)")


def load_kwargs(args: argparse.Namespace) -> dict:
    """Keyword arguments for ``models.load`` from the model and compute arguments."""
    kw: dict = {"backend": args.backend, "n_threads": args.threads}
    device, dtype = getattr(args, "device", "cpu"), getattr(args, "dtype", "float32")
    if args.backend == "transformers":
        kw.update(device=device, dtype=dtype)
    elif (device, dtype) != ("cpu", "float32"):
        raise InputError(f"--device/--dtype apply to the transformers backend; {args.backend} runs its GGUF as built")
    return kw


def compute_check(args: argparse.Namespace) -> None:
    """Before any work: a device/dtype this machine cannot run (unless the work goes to Ray
    workers, which check on their node), Ray-only resources without --ray, a Ray address
    that does not answer; each one line, exit 2."""
    ray = getattr(args, "ray", None)
    if ray is None:
        if args.num_gpus or args.concurrency != 1 or args.num_cpus != 1:
            raise InputError("--num-gpus, --num-cpus and --concurrency size Ray actors: add --ray, or use --device")
        if args.backend == "transformers":
            from liedar.models.hf import check_device_dtype

            check_device_dtype(args.device, args.dtype)
    else:
        from liedar.models.distributed import check_address

        check_address(None if ray == "local" else ray)
        if ray == "local" and args.num_gpus:
            import torch

            if not torch.cuda.is_available():
                raise InputError(f"--num-gpus {args.num_gpus:g}: torch sees no GPU on this machine; drop --num-gpus")
    load_kwargs(args)
