"""`liedar behavioral INSTRUMENT`: one subcommand per registered instrument.

Every instrument in `liedar.behavioral.registry` becomes a subcommand with the shared
arguments (``--model``/``--backend``/``--threads`` when it needs a model, ``--limit``,
``--interval``, ``--seed``, ``--output``, ``--quiet``) plus its own. Order of work, so that
bad input costs nothing: parse (value checks) → the instrument's cross-flag checks →
output-vs-input check → items (the same sampling rule the demo uses) → load the model →
run → print (every estimate with interval, n, method, kind) → write ``--output``
atomically. Examples::

    liedar behavioral consistency --model smollm2-135m --items 30
    liedar behavioral gap --model smollm2-135m --limit 45
    liedar behavioral noise --model smollm2-135m --limit 40 --seeds 3
    liedar behavioral episodes --episodes runs.jsonl
    liedar behavioral judge --judge grader.jsonl --human human.jsonl
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from liedar.behavioral.instrument import Instrument
from liedar.behavioral.registry import instruments
from liedar.commands.args import (
    DTYPE_CHOICES,
    add_interval_argument,
    add_model_arguments,
    add_output_argument,
    add_seed_argument,
    positive_int,
    refuse_overwrite,
)
from liedar.core._util.atomic import write_json_atomic
from liedar.core.errors import InputError
from liedar.models.backend import Backend
from liedar.models.served import is_served_spec, run_with
from liedar.models.served_cli import add_served_model_arguments, served_backend_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    for inst in instruments().values():
        p = subparsers.add_parser(inst.name, help=inst.title, description=inst.title)
        if inst.needs_model:
            add_model_arguments(p, backends=inst.backends)
            add_served_model_arguments(p)
            p.add_argument("--limit", type=positive_int, default=None, help=_limit_help(inst))
            p.add_argument(
                "--dtype",
                default="float32",
                choices=DTYPE_CHOICES,
                help="transformers weights (default float32); bfloat16 runs about twice as fast on a CPU with "
                "bfloat16 instructions, and the numbers are then the model's in that precision",
            )
        add_interval_argument(p)
        add_seed_argument(p, "the item sample, option orders and bootstraps")
        add_output_argument(p, "write the result (and per-item records) as JSON here")
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        inst.add_arguments(p)
        p.set_defaults(func=run, instrument=inst)


def _limit_help(inst: Instrument) -> str:
    default = "all" if inst.default_limit is None else str(inst.default_limit)
    return f"ask N items of the bank, sampled as in the demo (default {default})"


def run(args: argparse.Namespace) -> int:
    inst: Instrument = args.instrument
    options = inst.options(args)
    refuse_overwrite([args.output], inst.inputs(options))
    limit = getattr(args, "limit", None)
    items = inst.items(limit=limit, seed=args.seed, **options)
    if limit is not None and len(items) < limit:
        # a limit past the bank's size means "all of it": said, so a run is not read as N items
        print(f"liedar: note: {inst.limit_flag} {limit} capped at {len(items)}, the items the bank holds: "
              f"asking all {len(items)}", file=sys.stderr)  # fmt: skip
    backend: Optional[Backend] = None
    meta: dict[str, Any] = {"instrument": inst.name}
    if inst.needs_model:
        from liedar import models

        dtype = getattr(args, "dtype", "float32")
        local_transformers = args.backend == "transformers" and not is_served_spec(str(args.model))
        if dtype != "float32" and not local_transformers:
            raise InputError(
                f"--dtype {dtype} sets the weights of a local transformers model; {args.model} on "
                f"{'a server' if is_served_spec(str(args.model)) else args.backend} runs its own: drop --dtype"
            )
        load_kwargs = {"dtype": dtype} if dtype != "float32" else {}
        backend = served_backend_from_args(args, progress=not args.quiet) or models.load(
            args.model, backend=args.backend, n_threads=args.threads, **load_kwargs
        )
        if local_transformers:
            meta["dtype"] = dtype
        inst.check_backend(backend)
        kind = "served" if getattr(backend, "capabilities", None) is not None else args.backend
        meta.update(model=args.model, backend=kind, fingerprint=getattr(backend, "fingerprint", None))

    def work(b: Any) -> Any:
        return inst.run(b, items, interval=args.interval, seed=args.seed, progress=not args.quiet, **options)

    # a served backend collects the run's requests first and sends them concurrently
    result = run_with(backend, work) if backend is not None else work(None)
    if backend is not None and hasattr(backend, "usage_summary"):
        meta["usage"] = backend.usage_summary()  # calls, cache hits, tokens, scoring modes, no-answers
    print(inst.summary(result))
    if args.output:
        write_json_atomic(args.output, {**meta, **result.to_dict()})
        print(f"wrote {args.output}")
    return 0
