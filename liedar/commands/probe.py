"""`liedar probe train | eval | sweep`: lie/truth probes on a local model's hidden states.

Examples::

    liedar probe train --model smollm2-135m --data capitals elements --layer 15 --output probe.npz
    liedar probe eval  --model smollm2-135m --data capitals elements animals numbers --layer 15 --output out/
    liedar probe sweep --model smollm2-135m --data capitals --layers all --output out/

``--data`` takes built-in set names (capitals, elements, animals, numbers, instructed),
statement,label CSV / JSONL files, or a Truth-is-Universal folder. Probe scores are higher
for *false / deceptive* statements. Activations go through the on-disk cache.
"""

from __future__ import annotations

import argparse

from liedar._util.atomic import write_json_atomic

PROBE_CHOICES = ("logistic", "mass-mean", "mass-mean-cov", "ttpd", "lat")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model", default="smollm2-135m", help="built-in name (smollm2-135m, gemma3-270m), .gguf or HF folder"
    )
    p.add_argument("--backend", choices=["transformers", "llamacpp"], default="transformers")
    p.add_argument(
        "--data",
        nargs="+",
        required=True,
        help="built-in sets (capitals elements animals numbers instructed), CSV/JSONL files or a folder",
    )
    p.add_argument("--probe", choices=PROBE_CHOICES, default="logistic", help="probe type (default logistic)")
    p.add_argument("--position", choices=["last", "mean"], default="last", help="token pooling (default last)")
    p.add_argument("--seed", type=int, default=0, help="seed for folds, splits and bootstrap (default 0)")
    p.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    p.add_argument("--output", required=True, help="output file (train) or directory (eval, sweep)")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "probe",
        help="train and judge linear lie/truth probes",
        description="Linear probes on hidden states; higher score = false / deceptive.",
    )
    sub = p.add_subparsers(dest="probe_command", metavar="ACTION")

    t = sub.add_parser(
        "train",
        help="fit a probe on all given data and save it (.npz + JSON metadata)",
        description="Fit a probe at one layer; report its 5-fold group-CV AUROC; save it.",
    )
    _common(t)
    t.add_argument("--layer", type=int, required=True, help="layer (0 = embeddings, i = block i)")
    t.set_defaults(func=run_train)

    e = sub.add_parser(
        "eval",
        help="transfer matrix: train on each set, test on each other",
        description="Train on each set (topic), test on every set; diagonal = group CV. "
        "Prints a table, writes transfer.json and transfer.png.",
    )
    _common(e)
    e.add_argument("--layer", type=int, required=True, help="layer (0 = embeddings, i = block i)")
    e.add_argument("--by", choices=["topic", "polarity", "style"], default="topic", help="what to transfer across")
    e.set_defaults(func=run_eval)

    s = sub.add_parser(
        "sweep",
        help="AUROC per layer (layer chosen on validation data), curve PNG",
        description="Group-aware 60/20/20 split; fit per layer on train, pick the layer by "
        "validation AUROC, report test AUROC. Writes sweep.json and sweep.png.",
    )
    _common(s)
    s.add_argument("--layers", default="all", help="'all', a range '2-20', or a list '4,8,12' (default all)")
    s.set_defaults(func=run_sweep)
    p.set_defaults(func=lambda args: _missing(p))


def _missing(parser: argparse.ArgumentParser) -> int:
    import sys

    parser.print_help(sys.stderr)
    return 2


def parse_layer_spec(spec: str, n_layers: int) -> list[int]:
    """'all' (0..n_layers+1), 'a-b' (inclusive), or 'a,b,c'."""
    from liedar.errors import InputError

    spec = spec.strip()
    try:
        if spec == "all":
            return list(range(0, n_layers + 2))
        if "-" in spec and "," not in spec:
            a, b = (int(x) for x in spec.split("-"))
            layers = list(range(a, b + 1))
        else:
            layers = [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"--layers {spec!r}: use 'all', a range like 2-20, or a list like 4,8,12") from None
    if not layers:
        raise InputError(f"--layers {spec!r} selects no layer")
    return layers


def _load(args: argparse.Namespace):
    """Data first (cheap, fails fast on bad input), then the model."""
    from liedar import models
    from liedar.probes.datasets import StatementSet, resolve_data

    data = StatementSet.concat([resolve_data(d, seed=args.seed) for d in args.data])
    backend = models.load(args.model, backend=args.backend, n_threads=args.threads)
    return data, backend


def _hidden(args, backend, data, layers):
    from liedar.models.cache import cached_hidden_states

    return cached_hidden_states(backend, data.inputs, backend.check_layers(layers), args.position, progress=True)


def _one_blas_thread():
    """Small probe fits run far faster on one BLAS thread than on many competing ones;
    applied after extraction so torch keeps its threads."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def run_train(args: argparse.Namespace) -> int:
    from liedar import __version__
    from liedar.probes.estimators import make_probe
    from liedar.probes.evaluation import choose_threshold, cross_validated, fit_probe
    from liedar.probes.io import ProbeMetadata, save_probe

    data, backend = _load(args)
    X = _hidden(args, backend, data, [args.layer])[:, 0]
    with _one_blas_thread():
        cv = cross_validated(args.probe, X, data, n_splits=5, seed=args.seed)
        probe = fit_probe(make_probe(args.probe), X, data)
        threshold = choose_threshold(probe.decision_function(X), data.lie_labels)
    meta = ProbeMetadata(
        model_name=backend.name,
        model_fingerprint=backend.fingerprint,
        layer=args.layer,
        position=args.position,
        d_model=backend.d_model,
        training_sets=list(args.data),
        metrics={"cv_auroc": cv.auroc.to_dict(), "cv_accuracy": cv.accuracy.to_dict(), "n_train": len(data)},
        threshold=threshold,
        liedar_version=__version__,
        extra={"backend": backend.kind, "seed": args.seed, "labels": "fit on lie labels (1 = false / deceptive)"},
    )
    path = save_probe(args.output, probe, meta)
    print(
        f"{args.probe} probe on {backend.name} layer {args.layer}: 5-fold group-CV AUROC {cv.auroc} ; "
        f"accuracy {cv.accuracy.value:.3f} ; saved {path}"
    )
    return 0


def run_eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from liedar.probes.evaluation import transfer_matrix

    data, backend = _load(args)
    X = _hidden(args, backend, data, [args.layer])[:, 0]
    with _one_blas_thread():
        tm = transfer_matrix(args.probe, X, data, by=args.by, seed=args.seed, probe_name=args.probe)
    tm.meta.update(
        model=backend.name,
        fingerprint=backend.fingerprint,
        layer=args.layer,
        position=args.position,
        data=list(args.data),
    )
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "transfer.json", tm.to_dict())
    tm.plot(out / "transfer.png")
    print(tm.to_markdown())
    print(f"wrote {out / 'transfer.json'} and {out / 'transfer.png'}")
    return 0


def run_sweep(args: argparse.Namespace) -> int:
    from pathlib import Path

    from liedar.probes.evaluation import layer_sweep

    data, backend = _load(args)
    layers = backend.check_layers(parse_layer_spec(args.layers, backend.n_layers))
    X = _hidden(args, backend, data, layers)
    with _one_blas_thread():
        sweep = layer_sweep(args.probe, X, layers, data, seed=args.seed, probe_name=args.probe)
    sweep.meta.update(model=backend.name, fingerprint=backend.fingerprint, position=args.position, data=list(args.data))
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "sweep.json", sweep.to_dict())
    sweep.plot(out / "sweep.png")
    print(sweep.to_markdown())
    print(f"chosen layer {sweep.chosen_layer} (on validation); test AUROC there {sweep.test_at_chosen}")
    print(f"wrote {out / 'sweep.json'} and {out / 'sweep.png'}")
    return 0
