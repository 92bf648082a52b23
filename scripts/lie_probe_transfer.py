"""Lie-probe transfer: which training set gives a probe that finds lies in another style?

Three styles of honest-vs-deceptive text, each with its own items:

* ``apollo-instructed`` — Apollo Research's recipe as published (Goldowsky-Dill et al.
  2025, after RepE): Azaria & Mitchell's *true* facts (Truth-is-Universal's ``facts.csv``,
  nobody on this project wrote them) asserted after the honest or the dishonest persona
  instruction, read up to 5 words before the fact ends (`apollo_instructed_pairs`);
* ``instructed`` — liedar's own instructed pairs (the same personas on the built-in
  capitals / elements / animals facts, the whole assertion read): what the demo's and the
  validation matrix's lie probe is trained on;
* ``roleplay`` — liedar's role-play dialogues: a character who privately knows a fact
  answers a direct question truthfully or with a lie, no instruction to lie in sight.

Each training set (one style, or a mix with the role-play dialogues) × each test style:
AUROC (positive class = deceptive) with a 95% cluster-bootstrap interval over groups. A
style scored by a training set that contains it is scored out of fold (group folds; the
other styles always in training: `probes.evaluation.style_transfer`). Two probes, both
mean-pooled over the assistant's detect tokens, as Apollo pools:

* ``apollo`` — standardised logistic regression with C = 1/10 (Apollo's λ = 10), read at
  Apollo's relative depth (their layer 22 of 80 on Llama-3.3-70B, so round(0.275 · L));
* ``liedar`` — liedar's `LogisticProbe` (C chosen by inner group CV on the training data),
  at the middle block, as the demo reads it.

No choice is made on any test cell: both layers are fixed in advance by depth.

Beside the probes, the model's own log-likelihood of each reply given the turns before it
(`probes.evaluation.reply_loglik_scores`, no training) scores every test style: a probe
that does not beat it reads nothing the model's next-token probabilities do not already say.
``--styles`` runs a subset (the training sets made of those styles only).

    .venv/bin/python scripts/lie_probe_transfer.py ../shared/datasets --models smollm2-135m --threads 1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from liedar.core._util.atomic import write_json_atomic

APOLLO_DEPTH = 22 / 80  # Apollo's layer 22 of Llama-3.3-70B's 80
TRAINING_SETS = (
    ("apollo-instructed",),
    ("instructed",),
    ("roleplay",),
    ("apollo-instructed", "roleplay"),
    ("instructed", "roleplay"),
)
TEST_STYLES = ("apollo-instructed", "instructed", "roleplay")


def probes(n_layers: int) -> dict[str, tuple[int, object, str]]:
    """name -> (layer, probe factory, description)."""
    from liedar.probes.estimators import LogisticProbe

    def apollo() -> LogisticProbe:
        return LogisticProbe(Cs=(0.1,))

    def liedar() -> LogisticProbe:
        return LogisticProbe()

    return {
        "apollo": (round(APOLLO_DEPTH * n_layers), apollo, "standardised logistic, C = 0.1, Apollo's relative depth"),
        "liedar": (n_layers // 2, liedar, "liedar LogisticProbe (C by inner group CV), middle block"),
    }


def styles(datasets: str, names: tuple[str, ...] = TEST_STYLES) -> dict:
    from liedar.probes.datasets import apollo_instructed_pairs, instructed_pairs, load_csv, truth_is_universal_dir
    from liedar.probes.roleplay import roleplay_statements

    make = {
        "apollo-instructed": lambda: apollo_instructed_pairs(load_csv(truth_is_universal_dir(datasets) / "facts.csv")),
        "instructed": instructed_pairs,
        "roleplay": roleplay_statements,
    }
    return {name: make[name]() for name in TEST_STYLES if name in names}


def run_model(name: str, sets: dict, args) -> dict:
    from threadpoolctl import threadpool_limits

    from liedar import models
    from liedar.models.cache import cached_hidden_states
    from liedar.probes.evaluation import style_transfer

    t0 = time.perf_counter()
    backend = models.load(name, backend=args.backend, n_threads=args.threads)
    chosen = probes(backend.n_layers)
    layers = sorted({layer for layer, _, _ in chosen.values()})
    acts = {style: cached_hidden_states(backend, S.inputs, layers, "mean", progress=True) for style, S in sets.items()}
    out = {
        "model": name,
        "backend": backend.kind,
        "fingerprint": backend.fingerprint,
        "n_layers": backend.n_layers,
        "extract_seconds": round(time.perf_counter() - t0, 1),
        "probes": {},
    }
    loglik_styles = list(sets) if args.loglik_styles is None else [s for s in sets if s in args.loglik_styles]
    if loglik_styles:
        from liedar.probes.evaluation import auroc, reply_loglik_scores

        t1 = time.perf_counter()
        out["reply_loglik"] = {
            style: auroc(
                reply_loglik_scores(backend, S, progress=True), S.lie_labels, groups=S.group, seed=args.seed
            ).to_dict()
            for style, S in sets.items()
            if style in loglik_styles
        }
        out["loglik_seconds"] = round(time.perf_counter() - t1, 1)
    with threadpool_limits(args.threads):
        for pname, (layer, factory, what) in chosen.items():
            k = layers.index(layer)
            parts = {style: (acts[style][:, k], S) for style, S in sets.items()}
            cells = {}
            for train in training_sets(list(sets)):
                for test in sets:
                    score = style_transfer(factory, parts, train, test, n_splits=args.folds, seed=args.seed)
                    cells[f"{'+'.join(train)} -> {test}"] = score.to_dict()
            out["probes"][pname] = {"layer": layer, "what": what, "cells": cells}
            print(f"  {name} {pname} (layer {layer}): done", flush=True)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def fmt(cell: dict) -> str:
    a = cell["auroc"]
    return f"{a['value']:.2f} [{a['lo']:.2f}, {a['hi']:.2f}]"


def training_sets(styles: list[str]) -> list[tuple[str, ...]]:
    """The training sets made only of ``styles``, in `TRAINING_SETS`' order."""
    return [train for train in TRAINING_SETS if set(train) <= set(styles)]


def markdown(result: dict, styles: list[str]) -> str:
    lines = [f"#### {result['model']} ({result['n_layers']} blocks, {result.get('backend', 'transformers')})", ""]
    head = ["probe", "trained on"] + [f"→ {t}" for t in styles]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for pname, p in result["probes"].items():
        for train in training_sets(styles):
            key = "+".join(train)
            cells = [fmt(p["cells"][f"{key} -> {t}"]) for t in styles]
            lines.append(f"| {pname} (layer {p['layer']}) | {key} | " + " | ".join(cells) + " |")
    if "reply_loglik" in result:
        got = result["reply_loglik"]
        cells = [fmt({"auroc": got[t]}) if t in got else "not run" for t in styles]
        lines.append("| reply log-likelihood | no training | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="?", default="../shared/datasets", help="folder holding truth_is_universal/")
    ap.add_argument("--models", nargs="+", default=["smollm2-135m"])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--output", default="results/lie-probe-transfer.json")
    ap.add_argument("--record", type=Path, help="also write the results with the command, date and CPU here")
    ap.add_argument("--backend", default="transformers", choices=("transformers", "llamacpp"))
    ap.add_argument("--styles", nargs="+", default=list(TEST_STYLES), choices=TEST_STYLES, help="default: all three")
    ap.add_argument(
        "--loglik-styles",
        nargs="*",
        default=None,
        choices=TEST_STYLES,
        help="styles the reply log-likelihood baseline scores (default: every style run; none: skip it)",
    )
    args = ap.parse_args(argv)
    sets = styles(args.datasets, tuple(args.styles))
    for style, S in sets.items():
        print(f"{style}: {len(S)} dialogues, {len(set(S.group.tolist()))} groups", flush=True)
    results = {"sets": {s: S.summary() for s, S in sets.items()}, "seed": args.seed, "folds": args.folds, "models": []}
    for name in args.models:
        results["models"].append(run_model(name, sets, args))
        write_json_atomic(Path(args.output), results)
    for r in results["models"]:
        print()
        print(markdown(r, list(sets)))
    print(f"\nwrote {args.output}")
    if args.record:
        import capable_record

        print(f"record: {capable_record.write(args.record, {'what': __doc__.splitlines()[0], **results})}")
    return 0


if __name__ == "__main__":
    from liedar.core.errors import LiedarError

    try:
        sys.exit(main())
    except LiedarError as exc:
        print(f"lie_probe_transfer: error: {exc}", file=sys.stderr)
        sys.exit(2)
