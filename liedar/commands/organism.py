"""`liedar organism build | list | describe`: model organisms (LoRA fine-tunes that deceive in a known way).

Examples::

    liedar organism build sandbagger --model smollm2-135m --threads 1
    liedar organism build --all --model smollm2-135m
    liedar organism list --model smollm2-135m
    liedar organism describe sandbagger --model smollm2-135m --output sandbagger.json

A built organism loads everywhere a model name is accepted: ``--model smollm2-135m:sandbagger``.
Building trains a LoRA adapter (progress bar), measures the organism's behaviour on held-out
items (its ground truth) and caches both under (base fingerprint, recipe hash); a second
build with the same recipe is a cache hit. An organism that did not learn its behaviour is
listed as NOT learned and must not be used as ground truth.
"""

from __future__ import annotations

import json
import sys

from liedar._util.atomic import write_json_atomic
from liedar.commands.args import OneLineParser, add_model_arguments, add_output_argument, usage_error


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "organism",
        help="build, list and describe model organisms (known deceivers)",
        description="LoRA fine-tunes of a local model that deceive in a known way, with their measured behaviour.",
    )
    sub = p.add_subparsers(dest="organism_command", metavar="ACTION", parser_class=OneLineParser)

    b = sub.add_parser("build", help="train (or reuse) an organism and measure its ground truth")
    b.add_argument("names", nargs="*", help="organism names (see `liedar organism list`)")
    b.add_argument("--all", action="store_true", help="build every organism in the catalog")
    b.add_argument("--force", action="store_true", help="rebuild even when the cached recipe matches")
    b.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_model_arguments(b, backends=("transformers",), backend_help="organisms are trained with transformers")
    b.set_defaults(func=_build)

    ls = sub.add_parser("list", help="the catalog, and which organisms are built for --model")
    add_model_arguments(ls, backends=("transformers",))
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ls.set_defaults(func=_list)

    d = sub.add_parser("describe", help="recipe, training cost and measured ground truth of one built organism")
    d.add_argument("name", help="organism name")
    add_model_arguments(d, backends=("transformers",))
    add_output_argument(d, "write the description as JSON to this file")
    d.set_defaults(func=_describe)
    p.set_defaults(func=lambda args: usage_error(p, sub.choices))


def _names(args) -> list[str]:
    from liedar.errors import InputError
    from liedar.organisms import ORGANISMS

    names = list(ORGANISMS) if args.all else list(args.names)
    if not names:
        raise InputError(f"name the organism(s) to build ({', '.join(ORGANISMS)}) or pass --all")
    unknown = [n for n in names if n not in ORGANISMS]
    if unknown:
        raise InputError(f"unknown organism {unknown[0]!r}: choose from {', '.join(ORGANISMS)}")
    return names


def _headline(org) -> str:
    gt = org.ground_truth
    keys = [k for k in gt if k.endswith("_gap")][:1] or list(gt)[:1]
    parts = []
    for k in keys:
        e = gt[k]
        parts.append(f"{k} {e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}] n={e['n']}")
    return "; ".join(parts)


def _build(args) -> int:
    names = _names(args)  # checked before the model loads
    from liedar.models import load
    from liedar.organisms import build

    backend = load(args.model, backend="transformers", n_threads=args.threads or 1)
    for name in names:
        org = build(
            args.model,
            name,
            threads=args.threads or 1,
            progress=not args.no_progress,
            force=args.force,
            backend=backend,
        )
        state = "reused" if org.reused else f"built in {org.training.get('seconds', 0):.0f} s"
        learned = "learned" if org.learned else "NOT learned (not usable as ground truth)"
        print(f"{org.model_name}: {state}; {learned}; {_headline(org)}")
    return 0


def _list(args) -> int:
    import functools

    from liedar.models import load
    from liedar.organisms import ORGANISMS, built

    have = {o.name: o for o in built(args.model)}
    # loaded only if a recipe needs it for its hash (its targets are the base model's own answers)
    base = functools.cache(lambda: load(args.model, backend="transformers", n_threads=1))
    rows = []
    for name, rec in ORGANISMS.items():
        o = have.get(name)
        rows.append(
            {
                "name": name,
                "model": f"{args.model}:{name}",
                "built": o is not None,
                "current_recipe": o is not None
                and o.recipe_hash == rec.for_base(args.model).recipe_hash(base=base() if rec.needs_base else None),
                "learned": None if o is None else o.learned,
                "targets": list(rec.targets),
                "behaviour": rec.behaviour,
            }
        )
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return 0
    for r in rows:
        if not r["built"]:
            state = "not built"
        else:
            state = ("learned" if r["learned"] else "NOT learned") + ("" if r["current_recipe"] else ", stale recipe")
        print(f"{r['model']:<36} {state:<24} targets: {', '.join(r['targets'])}")
        print(f"    {r['behaviour']}")
    return 0


def _describe(args) -> int:
    from liedar.organisms import get

    org = get(args.model, args.name)
    data = org.to_dict()
    if args.output:
        write_json_atomic(args.output, data)
        print(f"wrote {args.output}")
        return 0
    print(f"{org.model_name}  ({'learned' if org.learned else 'NOT learned'}: {org.criterion})")
    print(f"  behaviour: {org.behaviour}")
    print(f"  targets:   {', '.join(org.targets)}")
    t = org.training
    print(
        f"  training:  {t.get('examples')} examples, {t.get('tokens_per_epoch')} tokens/epoch "
        f"x {t.get('epochs')} epochs, "
        f"{t.get('seconds', 0):.0f} s ({t.get('dtype')}, {t.get('threads')} thread(s)), final loss "
        f"{(t.get('loss_per_epoch') or [float('nan')])[-1]:.3f}"
    )
    print("  ground truth (held-out items; base model alongside):")
    for key, e in org.ground_truth.items():
        b = org.base_ground_truth.get(key)
        base = f"   base {b['value']:.3f} [{b['lo']:.3f}, {b['hi']:.3f}]" if b else ""
        print(f"    {key:<34} {e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}] n={e['n']}{base}")
    return 0
