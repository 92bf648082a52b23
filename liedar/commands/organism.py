"""`liedar organism list | describe | verify | build | export`: model organisms (known deceivers).

Examples::

    liedar organism list --model smollm2-135m
    liedar organism verify --model smollm2-135m                  # re-measure every shipped card here
    liedar organism verify sandbagger --model smollm2-135m --backend llamacpp
    liedar organism describe sandbagger --model smollm2-135m --output sandbagger.json
    liedar organism build sandbagger --model smollm2-135m --threads 1 --compare

The organisms liedar validates against ship in the repository (``zoo/<base>/<name>/``: a
float16 LoRA adapter in safetensors and a card with its measured behaviour on held-out
items, beside the base model's). ``verify`` re-measures a card on this machine (inference
only) and says ``verified`` or what differs; ``build`` retrains an organism from its recipe
into the cache (never over a shipped one) and ``--compare`` prints the rebuild beside the
card. A model name ``smollm2-135m:sandbagger`` loads the shipped adapter (its sha256 checked
against its card); an organism nothing ships for that base loads from the cache's build.
"""

from __future__ import annotations

import json
import sys

from liedar.commands.args import (
    OneLineParser,
    add_model_arguments,
    add_output_argument,
    positive_int,
    usage_error,
)
from liedar.core._util.atomic import write_json_atomic


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "organism",
        help="build, list and describe model organisms (known deceivers)",
        description="LoRA fine-tunes of a local model that deceive in a known way, with their measured behaviour.",
    )
    sub = p.add_subparsers(dest="organism_command", metavar="ACTION", parser_class=OneLineParser)

    v = sub.add_parser(
        "verify",
        help="re-measure shipped organisms' cards on this machine (inference only)",
        description="Re-measure each shipped card on its held-out items and wordings: 'verified' when the learned "
        "criterion holds and the headline interval overlaps the card's. Exit 1 when one differs. "
        "Example: liedar organism verify --model smollm2-135m",
    )
    v.add_argument("names", nargs="*", help="organism names (default: every one shipped for --model)")
    add_model_arguments(v, backends=("transformers", "llamacpp"))
    v.add_argument("--limit", type=positive_int, help="measure only N held-out items, spread over the bank")
    v.add_argument("--no-cache", action="store_true", help="measure again even when this machine verified it before")
    v.add_argument("--no-progress", action="store_true", help="no progress bars")
    v.add_argument("--json", action="store_true", help="print the verifications as JSON")
    v.set_defaults(func=_verify)

    b = sub.add_parser("build", help="train (or reuse) an organism into the cache and measure its ground truth")
    b.add_argument("names", nargs="*", help="organism names (see `liedar organism list`)")
    b.add_argument("--all", action="store_true", help="build every organism in the catalog")
    b.add_argument("--force", action="store_true", help="rebuild even when the cached recipe matches")
    b.add_argument("--no-progress", action="store_true", help="no progress bars")
    b.add_argument(
        "--compare", action="store_true", help="print the rebuild's measured behaviour beside the shipped card's"
    )
    add_model_arguments(b, backends=("transformers",), backend_help="organisms are trained with transformers")
    b.set_defaults(func=_build)

    e = sub.add_parser(
        "export",
        help="write a learned build into the zoo as a shipped organism (float16 adapter + measured card)",
        description="For maintainers: the cache's build of NAME becomes zoo/<model>/<NAME>/ (float16 adapter, "
        "card measured on the float16 weights). Refuses an organism that did not learn, and an existing "
        "shipped one unless --replace. Example: liedar organism export sandbagger --model smollm2-135m",
    )
    e.add_argument("names", nargs="+", help="organism names")
    add_model_arguments(e, backends=("transformers",))
    e.add_argument("--replace", action="store_true", help="overwrite an organism already shipped under this name")
    e.add_argument("--no-progress", action="store_true", help="no progress bars")
    e.set_defaults(func=_export)

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
    from liedar.core.errors import InputError
    from liedar.organisms import ORGANISMS
    from liedar.organisms.zoo_recipes import ALL_RECIPES

    names = list(ORGANISMS) if getattr(args, "all", False) else list(args.names)
    if not names:
        raise InputError(f"name the organism(s) to build ({', '.join(ORGANISMS)}) or pass --all")
    for n in names:
        if not n.strip():
            raise InputError("an empty organism name was given: separate names with spaces, e.g. sandbagger liar")
    unknown = [n for n in names if n not in ALL_RECIPES]
    if unknown:
        raise InputError(f"unknown organism {unknown[0]!r}: choose from {', '.join(ALL_RECIPES)}")
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
        if args.compare:
            _print_comparison(args.model, org, backend.fingerprint)
    return 0


def _print_comparison(base: str, org, fingerprint: str) -> None:
    """The rebuild's numbers beside the shipped card's: reproducibility measured, not assumed."""
    from liedar.models.cards import find_shipped

    card = find_shipped(fingerprint, org.name)
    if card is None:
        print(f"  --compare: nothing ships as {base}:{org.name}; the rebuild stays in the cache only")
        return
    print(f"  rebuild (cache, float32) beside the shipped card ({card.adapter_dir}, float16):")
    for key, c in card.ground_truth.items():
        r = org.ground_truth.get(key)
        if c.get("value") is None or not r or r.get("value") is None:
            continue
        overlap = "overlap" if r["lo"] <= c["hi"] and c["lo"] <= r["hi"] else "DIFFER"
        print(
            f"    {key:<34} rebuild {r['value']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]   "
            f"card {c['value']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}]   {overlap}"
        )


def _export(args) -> int:
    names = _names(args)
    from liedar.models import load
    from liedar.organisms.shipped import export

    backend = load(args.model, backend="transformers", n_threads=args.threads or 1)
    for name in names:
        card = export(
            args.model,
            name,
            threads=args.threads or 1,
            progress=not args.no_progress,
            backend=backend,
            replace=args.replace,
        )
        e = card.ground_truth[card.headline]
        print(
            f"{card.model_name}: shipped in {card.folder} ({card.data['adapter']['bytes']:,} bytes); "
            f"{'learned' if card.learned else 'NOT learned'}; {card.headline} {e['value']:.3f} "
            f"[{e['lo']:.3f}, {e['hi']:.3f}] n={e['n']}"
        )
    return 0


def _verify(args) -> int:
    from liedar.organisms.shipped import cards_for, verify

    for n in args.names:
        if not n.strip():
            from liedar.core.errors import InputError

            raise InputError("an empty organism name was given: separate names with spaces, e.g. sandbagger liar")
    cards = cards_for(args.model, args.names or None)  # names, cards and adapter hashes checked before any load
    if not cards:
        print(f"no organism ships for {args.model}")
        return 0
    results = verify(
        args.model,
        [c.name for c in cards],
        backend=args.backend or "transformers",
        threads=args.threads or 1,
        progress=not args.no_progress and sys.stderr.isatty(),
        limit=args.limit,
        use_cache=not args.no_cache,
        cards=cards,
        say=(lambda s: None) if args.json else (lambda s: print(s, flush=True)),
    )
    if args.json:
        json.dump([v.to_dict() for v in results], sys.stdout, indent=1)
        print()
    return 0 if all(v.verified for v in results) else 1


def _list(args) -> int:
    import functools

    from liedar.models import load
    from liedar.models.cards import find_shipped, shipped_cards
    from liedar.organisms import ORGANISMS, built
    from liedar.organisms.build import model_fingerprint

    shipped_cards()  # every card in the zoo read, and in its base's folder, before a row is listed
    fingerprint = model_fingerprint(args.model)
    have = {o.name: o for o in built(args.model)}
    # loaded only if a recipe needs it for its hash (its targets are the base model's own answers)
    base = functools.cache(lambda: load(args.model, backend="transformers", n_threads=1))
    rows = []
    for name, rec in ORGANISMS.items():
        card = find_shipped(fingerprint, name)
        if card is not None:
            from liedar.models.cards import check_adapter_matches

            check_adapter_matches(card)  # a damaged shipped adapter is an error, never "not built"
        o = have.get(name)
        rows.append(
            {
                "name": name,
                "model": f"{args.model}:{name}",
                "shipped": card is not None,
                "shipped_learned": None if card is None else card.learned,
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
        if r["shipped"]:
            state = "shipped" + ("" if r["shipped_learned"] else ", NOT learned")
        elif not r["built"]:
            state = "not shipped, not built"
        else:
            state = ("built, learned" if r["learned"] else "built, NOT learned") + (
                "" if r["current_recipe"] else ", stale recipe"
            )
        print(f"{r['model']:<36} {state:<24} targets: {', '.join(r['targets'])}")
        print(f"    {r['behaviour']}")
    return 0


def _describe(args) -> int:
    from liedar.models.cards import find_shipped
    from liedar.organisms import get
    from liedar.organisms.build import model_fingerprint
    from liedar.organisms.shipped import describe_card

    card = find_shipped(model_fingerprint(args.model), args.name)
    if card is not None:
        from liedar.models.cards import check_adapter_matches

        check_adapter_matches(card)
        if args.output:
            write_json_atomic(args.output, card.data)
            print(f"wrote {args.output}")
            return 0
        print("\n".join(describe_card(card)))
        return 0
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
