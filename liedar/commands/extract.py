"""`liedar extract`: hidden states of a statement file, cached, written as npz + JSON.

Example::

    liedar extract --model smollm2-135m --data cities.csv --layers 6,12 --position last --output out/

writes ``out/activations.npz`` (``hidden`` float32 [n, n_layers, d], ``labels``, ``layers``)
and ``out/metadata.json`` (model, backend, fingerprint, layers, position, counts, timing).
Activations go through the on-disk cache, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import argparse

from liedar.commands.args import (
    add_compute_arguments,
    add_model_arguments,
    add_output_argument,
    compute_check,
    layer_list,
    load_kwargs,
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "extract",
        help="extract hidden states of a statement file (cached, resumable)",
        description="Run a model over a statement,label CSV or a JSONL file and save the hidden states "
        "at the chosen layers (0 = embeddings, i = block i, n+1 = final norm).",
    )
    add_model_arguments(p, default=None, hidden_states_for="extract")
    p.add_argument(
        "--data", required=True, help="statement,label CSV (extra columns ignored), JSONL, or a built-in set"
    )
    p.add_argument("--layers", type=layer_list, required=True, help="layers: 12, 6,12,18 or a range 4-8")
    p.add_argument("--position", choices=["last", "mean"], default="last", help="token pooling (default: last)")
    add_output_argument(p, "output folder (activations.npz, metadata.json)", kind="dir", required=True)
    p.add_argument("--no-cache", action="store_true", help="skip the activation cache")
    add_compute_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    from liedar import models
    from liedar.models.cache import cached_hidden_states
    from liedar.probes.datasets import resolve_data

    layers = args.layers
    compute_check(args)
    data = resolve_data(args.data)
    if args.ray is not None:
        return _run_ray(args, data)
    backend = models.load(args.model, **load_kwargs(args))
    backend.check_layers(layers)
    started = time.perf_counter()
    stats: dict = {"computed": len(data.inputs), "reused": 0}
    if args.no_cache:
        hidden = backend.hidden_states(data.inputs, layers, args.position, progress=True)
    else:
        hidden = cached_hidden_states(backend, data.inputs, layers, args.position, progress=True, stats=stats)
    seconds = time.perf_counter() - started
    return _write(args, data, hidden, meta_of(backend), stats, seconds)


def meta_of(backend) -> dict:
    return {
        "name": backend.name,
        "backend": backend.kind,
        "fingerprint": backend.fingerprint,
        "dtype": getattr(backend, "dtype_name", "float32"),
        "n_layers": backend.n_layers,
        "d_model": backend.d_model,
    }


def _run_ray(args: argparse.Namespace, data) -> int:
    """The same extraction on Ray actors (models.distributed); the model loads only there."""
    import time

    from liedar.models.distributed import ray_hidden_states, ray_session

    if args.no_cache:
        from liedar.core.errors import InputError

        raise InputError(
            "--ray writes through the activation cache (that is how workers hand back shards); drop --no-cache"
        )
    started = time.perf_counter()
    stats: dict = {}
    with ray_session(None if args.ray == "local" else args.ray):
        hidden = ray_hidden_states(
            args.model,
            data.inputs,
            args.layers,
            args.position,
            load_kwargs=load_kwargs(args),
            concurrency=args.concurrency,
            num_cpus=args.num_cpus,
            num_gpus=args.num_gpus,
            stats=stats,
        )
    seconds = time.perf_counter() - started
    model = stats.pop("model")
    meta = {k: model[k] for k in ("name", "fingerprint", "dtype", "n_layers", "d_model")}
    meta["backend"] = model["kind"]
    meta["ray"] = {
        "address": args.ray,
        "concurrency": args.concurrency,
        "workers": stats.get("workers"),
        "num_cpus": args.num_cpus,
        "num_gpus": args.num_gpus,
    }
    return _write(args, data, hidden, meta, stats, seconds)


def _write(args, data, hidden, model_meta: dict, stats: dict, seconds: float) -> int:
    import json
    from pathlib import Path

    import numpy as np

    from liedar.models.storage import atomic_file

    layers = args.layers
    meta = {
        "model": args.model,
        **model_meta,
        "layers": layers,
        "position": args.position,
        "data": args.data,
        "n_inputs": len(data.inputs),
        "computed": stats["computed"],
        "reused_from_cache": stats["reused"],
        "seconds": round(seconds, 3),
        "arrays": {"hidden": list(hidden.shape), "labels": [len(data.labels)]},
    }
    out = Path(args.output)
    with atomic_file(out / "activations.npz") as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, hidden=hidden, labels=data.labels, layers=np.array(layers))
    with atomic_file(out / "metadata.json") as tmp:
        tmp.write_text(json.dumps(meta, indent=2))
    print(
        f"wrote {out / 'activations.npz'} {tuple(hidden.shape)} ({stats['reused']} inputs from cache) in {seconds:.1f}s"
    )
    return 0
