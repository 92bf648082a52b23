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

from liedar.commands.args import (
    ALL_LAYERS,
    OneLineParser,
    add_compute_arguments,
    add_model_arguments,
    add_output_argument,
    add_seed_argument,
    compute_check,
    layers_or_all,
    load_kwargs,
    nonnegative_int,
    usage_error,
)
from liedar.core._util.atomic import write_bytes_atomic, write_json_atomic

PROBE_CHOICES = ("logistic", "mass-mean", "mass-mean-cov", "ttpd", "lat")

CSV_HELP = """\
A CSV given to --data needs a header with statement and label columns (label 1/0 or
true/false); optional columns: group, topic, polarity, style. For example:

  statement,label,group
  The sun rises in the east.,1,sun
  The sun rises in the west.,0,sun

Rows sharing a group stay in one CV fold. Without a group column, true/false minimal pairs
(rows differing in a few words, or a statement and its negation) are grouped automatically
and the count is printed; a statement labelled both ways is refused; exact duplicate rows
are dropped with a note."""


def _common(p: argparse.ArgumentParser, output_kind: str, recipe_defaults: bool = False) -> None:
    add_model_arguments(p, hidden_states_for=p.prog.removeprefix("liedar "))
    p.add_argument(
        "--data",
        nargs="+",
        required=True,
        help="built-in sets (capitals elements animals numbers instructed), CSV/JSONL files or a folder",
    )
    if recipe_defaults:  # `train`: neither given -> the default recipe decides both
        p.add_argument("--probe", choices=PROBE_CHOICES, default=None, help="probe type (bypasses the default recipe)")
        p.add_argument("--position", choices=["last", "mean"], default=None, help="token pooling (bypasses the recipe)")
    else:
        p.add_argument("--probe", choices=PROBE_CHOICES, default="logistic", help="probe type (default logistic)")
        p.add_argument("--position", choices=["last", "mean"], default="last", help="token pooling (default last)")
    add_seed_argument(p, "folds, splits and bootstrap")
    what = "the probe file (.npz + JSON metadata)" if output_kind == "file" else "output folder"
    add_output_argument(p, what, kind=output_kind, required=True)
    add_compute_arguments(p)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "probe",
        help="train and judge linear lie/truth probes",
        description="Linear probes on hidden states; higher score = false / deceptive.",
    )
    sub = p.add_subparsers(dest="probe_command", metavar="ACTION", parser_class=OneLineParser)

    t = sub.add_parser(
        "train",
        help="fit a probe on all given data and save it (.npz + JSON metadata)",
        description="Fit a probe at one layer; report its 5-fold group-CV AUROC; save it.",
        epilog=CSV_HELP
        + "\n\nexample:\n  liedar probe train --model smollm2-135m --data mine.csv --layer 12 --output probe.npz",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(t, "file", recipe_defaults=True)
    t.add_argument("--layer", type=nonnegative_int, required=True, help="layer (0 = embeddings, i = block i)")
    t.add_argument(
        "--recipe",
        default=None,
        help="a named probe recipe (liedar.probes.recipes: probe type, position, training mix). Default, unless "
        "--probe or --position is given: mix-builtin for true/false statements (your data plus the built-in "
        "sets), default for dialogues; see docs/probes.md 'Recipe leaderboard'",
    )
    t.set_defaults(func=run_train)

    e = sub.add_parser(
        "eval",
        help="transfer matrix: train on each set, test on each other",
        description="Train on each set (topic), test on every set; diagonal = group CV. "
        "Prints a table, writes transfer.json and transfer.png.",
    )
    _common(e, "dir")
    e.add_argument("--layer", type=nonnegative_int, required=True, help="layer (0 = embeddings, i = block i)")
    e.add_argument("--by", choices=["topic", "polarity", "style"], default="topic", help="what to transfer across")
    e.set_defaults(func=run_eval)

    s = sub.add_parser(
        "sweep",
        help="AUROC per layer (layer chosen on validation data), curve PNG",
        description="Group-aware 60/20/20 split; fit per layer on train, pick the layer by "
        "validation AUROC, report test AUROC. Writes sweep.json and sweep.png.",
    )
    _common(s, "dir")
    s.add_argument(
        "--layers", type=layers_or_all, default=ALL_LAYERS, help="all (default), a range 2-20, or a list 4,8,12"
    )
    s.set_defaults(func=run_sweep)
    p.set_defaults(func=lambda args: usage_error(p, sub.choices))


def _data(args: argparse.Namespace):
    """The --data sets as one StatementSet, after the compute options are checked (cheap: fails fast)."""
    from liedar.probes.datasets import StatementSet, resolve_data

    compute_check(args)
    data = StatementSet.concat([resolve_data(d, seed=args.seed) for d in args.data])
    for note in data.notes:
        print(f"note: {note}")
    return data


def _model(args: argparse.Namespace):
    from liedar import models

    return models.load(args.model, **load_kwargs(args))


def _load(args: argparse.Namespace):
    """Data first (cheap, fails fast on bad input), then the model."""
    data = _data(args)
    return data, _model(args)


def _session(args):
    """A local Ray cluster around extraction and fits with --ray (started and stopped here), else nothing."""
    import contextlib

    if getattr(args, "ray", None) is None:
        return contextlib.nullcontext()
    from liedar.models.distributed import ray_session

    return ray_session(None if args.ray == "local" else args.ray)


def _hidden(args, backend, data, layers):
    from liedar.models.cache import cached_hidden_states

    layers = backend.check_layers(layers)
    if getattr(args, "ray", None) is not None:  # inside _session: workers write the same cache
        from liedar.models.distributed import ray_hidden_states

        return ray_hidden_states(
            args.model,
            data.inputs,
            layers,
            args.position,
            load_kwargs=load_kwargs(args),
            concurrency=args.concurrency,
            num_cpus=args.num_cpus,
            num_gpus=args.num_gpus,
        )
    return cached_hidden_states(backend, data.inputs, layers, args.position, progress=True)


def _one_blas_thread():
    """Small probe fits run far faster on one BLAS thread than on many competing ones;
    applied after extraction so torch keeps its threads."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def _train_recipe(args: argparse.Namespace, data) -> tuple[str | None, object, str, object]:
    """(recipe name or None, probe factory, position, training mix or None) for `probe train`.

    No --recipe and no --probe/--position: the default recipe for this kind of data. An
    explicit --probe or --position alone is a bare probe on the given data (no recipe)."""
    from liedar.probes.recipes import builtin_mix, cli_probe, default_recipe_for, get_recipe

    name = args.recipe
    if name is None and args.probe is None and args.position is None:
        name = default_recipe_for(data)
    if name is None:
        return None, args.probe or "logistic", args.position or "last", None
    recipe = get_recipe(name)
    probe, position = cli_probe(recipe)
    return name, probe, position, builtin_mix(recipe, data, seed=args.seed)


def run_train(args: argparse.Namespace) -> int:
    from liedar import __version__
    from liedar.core.errors import InputError
    from liedar.probes.io import probe_path, save_probe
    from liedar.probes.training import cached_activations, train_lie_probe

    final = probe_path(args.output)
    if final.is_dir() or (final.exists() and not final.is_file()):
        raise InputError(f"{final} (where the probe is saved) is a folder; give another --output file name")
    data = _data(args)
    recipe, probe, args.position, mix = _train_recipe(args, data)  # bad input refused before the model loads
    backend = _model(args)
    parts = [data] if mix is None else [data, mix]
    if args.ray is not None:
        with _session(args):
            got = [_hidden(args, backend, S, [args.layer]) for S in parts]
    else:
        got = [cached_activations(backend)(S.inputs, [args.layer], args.position) for S in parts]  # torch's threads
    by_inputs = {id(S.inputs): X for S, X in zip(parts, got)}
    with _one_blas_thread():
        trained = train_lie_probe(
            backend,
            data,
            args.layer,
            probe=probe,
            position=args.position,
            seed=args.seed,
            activations=lambda inputs, layers, position: by_inputs[id(inputs)],
            training_sets=list(args.data) + ([f"built-in mix: {', '.join(sorted(set(mix.topic)))}"] if mix else []),
            mix=mix,
        )
    trained.metadata.liedar_version = __version__
    if recipe:
        trained.metadata.extra["recipe"] = recipe
    path = save_probe(args.output, trained.probe, trained.metadata)
    acc = trained.metadata.metrics["cv_accuracy"]["value"]
    added = f" (+{len(mix)} built-in statements in every fit, never scored)" if mix else ""
    print(
        f"{recipe or args.probe} probe on {backend.name} layer {args.layer}{added}: "
        f"5-fold group-CV AUROC {trained.auroc} ; "
        f"accuracy {acc:.3f} ; saved {path}"
    )
    return 0


def run_eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from liedar.probes.evaluation import transfer_matrix
    from liedar.report.figures import transfer_heatmap

    data, backend = _load(args)
    with _session(args):
        X = _hidden(args, backend, data, [args.layer])[:, 0]
        with _one_blas_thread():
            tm = transfer_matrix(
                args.probe, X, data, by=args.by, seed=args.seed, probe_name=args.probe, use_ray=args.ray is not None
            )
    tm.meta.update(
        model=backend.name,
        fingerprint=backend.fingerprint,
        layer=args.layer,
        position=args.position,
        data=list(args.data),
    )
    out = Path(args.output)
    write_json_atomic(out / "transfer.json", tm.to_dict())
    write_bytes_atomic(out / "transfer.png", transfer_heatmap(tm))
    print(tm.to_markdown())
    print(f"wrote {out / 'transfer.json'} and {out / 'transfer.png'}")
    return 0


def run_sweep(args: argparse.Namespace) -> int:
    from pathlib import Path

    from liedar.probes.evaluation import layer_sweep
    from liedar.report.figures import layer_sweep_curve

    data, backend = _load(args)
    layers = backend.check_layers(list(range(0, backend.n_layers + 2)) if args.layers == ALL_LAYERS else args.layers)
    with _session(args):
        X = _hidden(args, backend, data, layers)
        with _one_blas_thread():
            sweep = layer_sweep(
                args.probe, X, layers, data, seed=args.seed, probe_name=args.probe, use_ray=args.ray is not None
            )
    sweep.meta.update(model=backend.name, fingerprint=backend.fingerprint, position=args.position, data=list(args.data))
    out = Path(args.output)
    write_json_atomic(out / "sweep.json", sweep.to_dict())
    write_bytes_atomic(out / "sweep.png", layer_sweep_curve(sweep))
    print(sweep.to_markdown())
    print(f"chosen layer {sweep.chosen_layer} (on validation); test AUROC there {sweep.test_at_chosen}")
    print(f"wrote {out / 'sweep.json'} and {out / 'sweep.png'}")
    return 0
