"""Reproduce liedar's probe numbers on Bürger et al.'s Truth-is-Universal statements.

For each model (default smollm2-135m and gemma3-270m):

1. choose the layer by a logistic-probe layer sweep on liedar's *own* built-in sets
   (capitals, elements, animals, numbers; group-aware 60/20/20 split, chosen on the
   validation part) — no Truth-is-Universal statement influences the choice;
2. on a seeded subsample of the six topics (at most ``--cap`` items per topic, whole
   groups: a statement, its negated twin and rows sharing a subject stay together), at
   that layer, for each probe type:
   * in-distribution AUROC per topic (5-fold group CV inside the topic, affirmative + negated),
   * leave-one-topic-out AUROC (train on the other five topics, test on the held-out one),
   * affirmative -> negated transfer (train on affirmative statements of half the groups,
     test on the other half's affirmative and negated statements);
3. the zero-shot baseline: the model's own summed log-probability of the statement
   (after a newline), negated so that higher = "false"; no training at all.

Prints Markdown tables and writes JSON (``--output``). AUROC intervals are cluster
bootstraps over groups (seeded).

    .venv/bin/python scripts/reproduce_probes.py ../shared/datasets --output results/probes.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from liedar import models
from liedar.commands.args import LOCAL_BACKENDS, add_compute_arguments, compute_check, load_kwargs
from liedar.core._util.atomic import write_json_atomic
from liedar.models.cache import cached_hidden_states
from liedar.probes.datasets import StatementSet, builtin_set, load_truth_is_universal
from liedar.probes.estimators import PROBE_NAMES
from liedar.probes.evaluation import (
    auroc,
    cross_validated,
    layer_sweep,
    leave_one_topic_out,
    loglik_scores,
    polarity_transfer,
)
from liedar.probes.splits import cap_per_topic

SWEEP_SETS = ("capitals", "elements", "animals", "numbers")
LOGLIK_PREFIX = "\n"


def cached_loglik(backend, statements: StatementSet, cache_dir: Path, stats: dict | None = None) -> np.ndarray:
    """Log-likelihood scores, cached per model fingerprint and statement text (JSON).

    ``stats`` (if given) receives ``computed`` and ``reused`` counts, so a timing says cold or warm.
    """
    path = cache_dir / f"loglik-{backend.fingerprint[:24]}.json"
    known = json.loads(path.read_text()) if path.is_file() else {}
    todo = [t for t in dict.fromkeys(statements.inputs) if t not in known]
    if stats is not None:
        stats.update({"computed": len(todo), "reused": len(set(statements.inputs)) - len(todo)})
    if todo:
        sub = StatementSet(
            "todo",
            todo,
            np.ones(len(todo), int),
            np.full(len(todo), "x"),
            np.full(len(todo), "affirmative"),
            np.full(len(todo), "plain"),
            np.arange(len(todo)),
        )
        for text, s in zip(todo, loglik_scores(backend, sub, prefix=LOGLIK_PREFIX, progress=True)):
            known[text] = float(s)
        write_json_atomic(path, known)
    return np.array([known[t] for t in statements.inputs])


def fmt(est) -> str:
    return f"{est.value:.2f} [{est.lo:.2f}, {est.hi:.2f}]"


def run_model(name: str, tiu: StatementSet, args: argparse.Namespace) -> dict:
    t0 = time.perf_counter()
    kw = load_kwargs(args)
    backend = models.load(name, **kw)
    timing: dict = {"load_s": time.perf_counter() - t0}
    t_ex = time.perf_counter()
    layers = list(range(0, backend.n_layers + 2))
    builtin = StatementSet.concat([builtin_set(s, seed=args.seed) for s in SWEEP_SETS], name="builtin")
    if args.ray is not None:  # the same cache, filled by Ray actors (docs/scale.md)
        from liedar.models.distributed import ray_hidden_states, ray_session

        with ray_session(None if args.ray == "local" else args.ray):
            ray_kw = {
                "load_kwargs": kw,
                "concurrency": args.concurrency,
                "num_cpus": args.num_cpus,
                "num_gpus": args.num_gpus,
            }
            Xb = ray_hidden_states(name, builtin.inputs, layers, "last", **ray_kw)
            Xt = ray_hidden_states(name, tiu.inputs, layers, "last", **ray_kw)
    else:
        stats_b: dict = {}
        stats_t: dict = {}
        Xb = cached_hidden_states(backend, builtin.inputs, layers, "last", progress=True, stats=stats_b)
        Xt = cached_hidden_states(backend, tiu.inputs, layers, "last", progress=True, stats=stats_t)
        timing["extract_cache"] = {"builtin": stats_b, "truth_is_universal": stats_t}
    timing["extract_s"] = time.perf_counter() - t_ex
    t_ll = time.perf_counter()
    ll_stats: dict = {}
    ll = cached_loglik(backend, tiu, Path(args.cache_dir), stats=ll_stats) if args.loglik else None
    timing["loglik_s"] = time.perf_counter() - t_ll
    timing["loglik_cache"] = ll_stats
    extract_s = time.perf_counter() - t0
    with threadpool_limits(1):
        t_sw = time.perf_counter()
        sweep = layer_sweep("logistic", Xb, layers, builtin, seed=args.seed, probe_name="logistic")
        timing["sweep_fit_s"] = time.perf_counter() - t_sw
        k = layers.index(sweep.chosen_layer)
        X = Xt[:, k]
        result = {
            "model": name,
            "backend": backend.kind,
            "fingerprint": backend.fingerprint,
            "n_layers": backend.n_layers,
            "d_model": backend.d_model,
            "chosen_layer": sweep.chosen_layer,
            "sweep": sweep.to_dict(),
            "probes": {},
            "extract_seconds": round(extract_s, 1),
        }
        topics = sorted(set(tiu.topic.tolist()))
        for probe in args.probes:
            t1 = time.perf_counter()
            per_topic = {
                t: cross_validated(probe, X[tiu.topic == t], tiu.subset(tiu.topic == t), seed=args.seed) for t in topics
            }
            loto = leave_one_topic_out(probe, X, tiu, seed=args.seed)
            pol = polarity_transfer(probe, X, tiu, seed=args.seed)
            result["probes"][probe] = {
                "in_distribution": {t: s.to_dict() for t, s in per_topic.items()},
                "leave_one_topic_out": {t: s.to_dict() for t, s in loto.items()},
                "polarity_transfer": {k2: s.to_dict() for k2, s in pol.items()},
                "seconds": round(time.perf_counter() - t1, 1),
            }
            print(f"  {name} {probe}: done in {time.perf_counter() - t1:.0f}s", flush=True)
        if ll is None:
            result["zero_shot_loglik_skipped"] = "--no-loglik"
        else:
            result.update(zero_shot_rows(ll, tiu, topics, args.seed))
    timing["probe_fit_s"] = sum(r["seconds"] for r in result["probes"].values())
    result["timing"] = {k: round(v, 1) if isinstance(v, float) else v for k, v in timing.items()}
    result["seconds"] = round(time.perf_counter() - t0, 1)
    t = result["timing"]
    print(
        f"  {name} timing: load {t['load_s']}s, extraction {t['extract_s']}s, log-likelihood {t['loglik_s']}s, "
        f"layer sweep fit {t['sweep_fit_s']}s, probe fits {t['probe_fit_s']}s, total {result['seconds']}s "
        f"(cache: {t.get('extract_cache', 'ray')}, log-lik {t['loglik_cache']})",
        flush=True,
    )
    return result


def zero_shot_rows(ll: np.ndarray, tiu: StatementSet, topics: list[str], seed: int) -> dict:
    """The model's own log-likelihood as a probe-free baseline, per topic (both polarities, and
    affirmative statements only)."""
    aff = ~tiu.is_negated
    return {
        "zero_shot_loglik": {
            t: auroc(
                ll[tiu.topic == t], tiu.lie_labels[tiu.topic == t], groups=tiu.group[tiu.topic == t], seed=seed
            ).to_dict()
            for t in topics
        },
        "zero_shot_loglik_affirmative_only": {
            t: auroc(
                ll[aff & (tiu.topic == t)],
                tiu.lie_labels[aff & (tiu.topic == t)],
                groups=tiu.group[aff & (tiu.topic == t)],
                seed=seed,
            ).to_dict()
            for t in topics
        },
    }


def markdown(result: dict, topics: list[str]) -> str:
    from liedar.core.stats import Estimate

    E = Estimate.from_dict
    lines = [
        f"### {result['model']} — layer {result['chosen_layer']} of {result['n_layers']} "
        "(chosen on built-in sets' validation split"
        + (
            f"; test AUROC there {fmt(E(result['sweep']['test_at_chosen']))})"
            if "test_at_chosen" in result["sweep"]
            else ")"
        ),
        "",
    ]
    head = "| probe | evaluation | " + " | ".join(topics) + " | mean |"
    lines += [head, "|---|---|" + "---|" * (len(topics) + 1)]
    for probe, r in result["probes"].items():
        for label, key in (("in-topic CV", "in_distribution"), ("leave-one-topic-out", "leave_one_topic_out")):
            vals = [E(r[key][t]["auroc"]) for t in topics]
            lines.append(
                f"| {probe} | {label} | "
                + " | ".join(fmt(v) for v in vals)
                + f" | {np.mean([v.value for v in vals]):.2f} |"
            )
    for label, key in (
        ("zero-shot log-lik (aff + neg)", "zero_shot_loglik"),
        ("zero-shot log-lik (affirmative only)", "zero_shot_loglik_affirmative_only"),
    ):
        if key not in result:  # --no-loglik
            lines.append(f"| baseline | {label} | " + " | ".join("not run" for _ in topics) + " | – |")
            continue
        vals = [E(result[key][t]) for t in topics]
        lines.append(
            f"| baseline | {label} | "
            + " | ".join(fmt(v) for v in vals)
            + f" | {np.mean([v.value for v in vals]):.2f} |"
        )
    lines += [
        "",
        "| probe | aff→aff AUROC | aff→neg AUROC | aff→neg accuracy (threshold from training) |",
        "|---|---|---|---|",
    ]
    for probe, r in result["probes"].items():
        p = r["polarity_transfer"]
        lines.append(
            f"| {probe} | {fmt(E(p['affirmative->affirmative']['auroc']))} | "
            f"{fmt(E(p['affirmative->negated']['auroc']))} | {fmt(E(p['affirmative->negated']['accuracy']))} |"
        )
    lines += [
        "",
        "| probe | leave-one-topic-out accuracy, mean over topics (threshold from training topics) |",
        "|---|---|",
    ]
    for probe, r in result["probes"].items():
        accs = [r["leave_one_topic_out"][t]["accuracy"]["value"] for t in topics]
        lines.append(f"| {probe} | {np.mean(accs):.3f} (range {min(accs):.2f}–{max(accs):.2f}) |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "datasets",
        nargs="?",
        default="../shared/datasets",
        help="folder holding truth_is_universal/ (default ../shared/datasets)",
    )
    ap.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma3-270m"])
    ap.add_argument("--probes", nargs="+", default=list(PROBE_NAMES), choices=PROBE_NAMES)
    ap.add_argument(
        "--cap",
        type=int,
        default=100,
        help="at most about this many items per topic (whole groups, seeded; default 100)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache-dir", default=None, help="where log-likelihood scores are cached (default: liedar cache)")
    ap.add_argument("--output", default="results/probes.json")
    ap.add_argument("--record", type=Path, help="also write the results with the command, date and CPU here")
    ap.add_argument(
        "--no-loglik",
        dest="loglik",
        action="store_false",
        help="skip the zero-shot log-likelihood baseline (hours at full size on a 262k-token vocabulary)",
    )
    ap.add_argument("--backend", default="transformers", choices=LOCAL_BACKENDS, help="default transformers")
    add_compute_arguments(ap)
    args = ap.parse_args(argv)
    compute_check(args)  # also refuses --device/--dtype with llamacpp, before any work
    if args.cache_dir is None:
        from liedar.models.storage import cache_root

        args.cache_dir = str(cache_root())
    full = load_truth_is_universal(args.datasets)
    tiu = full.subset(cap_per_topic(full.topic, full.group, args.cap, seed=args.seed), name="truth_is_universal")
    topics = sorted(set(tiu.topic.tolist()))
    print(
        f"Truth-is-Universal subsample: {len(tiu)} of {len(full)} statements "
        f"(cap {args.cap} per topic, seed {args.seed}); {tiu.summary()['n_groups']} groups",
        flush=True,
    )
    results = {
        "subsample": {
            "cap_per_topic": args.cap,
            "seed": args.seed,
            "n": len(tiu),
            "n_full": len(full),
            "per_topic": {t: int((tiu.topic == t).sum()) for t in topics},
        },
        "loglik_prefix": LOGLIK_PREFIX,
        "models": [],
    }
    for name in args.models:
        results["models"].append(run_model(name, tiu, args))
        write_json_atomic(Path(args.output), results)  # after each model: a crash keeps the finished ones
    for r in results["models"]:
        print()
        print(markdown(r, topics))
    print(f"\nwrote {args.output}")
    if args.record:
        import capable_record

        print(f"record: {capable_record.write(args.record, {'what': __doc__.splitlines()[0], **results})}")
    return 0


if __name__ == "__main__":
    from liedar.core.errors import LiedarError

    try:
        sys.exit(main())
    except LiedarError as exc:  # bad input: one line, exit 2
        print(f"reproduce_probes: error: {exc}", file=sys.stderr)
        sys.exit(2)
