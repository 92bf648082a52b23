"""Probe recipe leaderboard: which way of reading a truth direction transfers?

For each model and each recipe (`liedar.probes.recipes.RECIPES`):

1. **choices on validation data only** — the recipe's layer (or band, or layer set) is
   chosen on liedar's own built-in sets (capitals, elements, animals, numbers): a seeded
   group-aware 60/20/20 split; fit on the 60% with C fixed at 0.1, choose by AUROC on the
   20% validation part. No Truth-is-Universal statement and no built-in *test* row is read
   (`tests/probes/test_recipes_leaderboard.py` asserts it). C is then chosen by each fit's
   own inner group cross-validation on its training rows.
2. **leave-one-topic-out** on Bürger et al.'s six Truth-is-Universal topics (seeded cap per
   topic, whole groups, affirmative + negated): train on five topics, test on the sixth;
3. **polarity transfer**: train on the affirmative (or negated) statements of half the
   groups, test on the other half's negated (or affirmative) statements;
4. **transfer to the built-in sets**: train on all six topics, test on the built-in test
   part (never used for any choice);
5. **zero-shot baselines** in the same table: the statement's own log-likelihood, and the
   answer log-odds at the plain and chat templates' answer slot (no training).

All AUROCs: positive class = false; 95% cluster-bootstrap intervals over groups (seeded);
the mean over topics / sets gets its interval from the same bootstrap (groups resampled
within each topic, AUROCs averaged). Activations go through liedar's activation cache.

    .venv/bin/python scripts/probe_leaderboard.py ../shared/datasets --models smollm2-135m --cap 100 --threads 1
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional

import numpy as np

from liedar.core._util.atomic import write_json_atomic
from liedar.core.errors import InputError
from liedar.core.stats import Estimate
from liedar.probes.datasets import StatementSet, builtin_set, load_truth_is_universal
from liedar.probes.evaluation import auc_value
from liedar.probes.recipes import (
    BASELINES,
    CHAT_ANSWERS,
    MIX_SETS,
    PLAIN_ANSWERS,
    RECIPES,
    Recipe,
    choose_layers,
    fit_recipe,
    read_inputs,
)
from liedar.probes.splits import cap_per_topic, group_split

SELECTION_SETS = MIX_SETS  # the sets `mix-builtin` adds are the ones choices are made on
SELECTION_FRACTIONS = (0.6, 0.2, 0.2)
FINAL_CS = (1e-2, 1e-1, 1.0)
SELECTION_CS = (1e-1,)


# ---- data and splits ----------------------------------------------------------------------


def selection_split(builtin: StatementSet, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(train, validation, test) rows of the built-in sets: choices read train + validation only."""
    train, val, test = group_split(builtin.group, SELECTION_FRACTIONS, seed)
    return train, val, test


def polarity_halves(tiu: StatementSet, seed: int) -> tuple[np.ndarray, np.ndarray]:
    # group_split returns a list of as many index arrays as fractions: two here
    return tuple(group_split(tiu.group, (0.5, 0.5), seed))  # type: ignore[return-value]


# ---- intervals ----------------------------------------------------------------------------


def _boot_members(groups: np.ndarray) -> list[np.ndarray]:
    _, inv = np.unique(groups, return_inverse=True)
    return [np.flatnonzero(inv == k) for k in range(inv.max() + 1)]


def mean_auroc(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], seed: int, n_boot: int = 1000) -> Estimate:
    """Mean of per-part AUROCs (scores, lie labels, groups) with a cluster-bootstrap interval
    (groups resampled within each part; one part alone = that part's AUROC)."""
    rng = np.random.default_rng(seed)
    members = [_boot_members(g) for _, _, g in parts]
    value = float(np.mean([auc_value(s[y == 1], s[y == 0]) for s, y, _ in parts]))
    boots = []
    for _ in range(n_boot):
        vals = []
        for (s, y, _), mem in zip(parts, members):
            idx = np.concatenate([mem[k] for k in rng.integers(0, len(mem), len(mem))])
            yb = y[idx]
            if not 0 < yb.sum() < len(yb):
                break
            vals.append(auc_value(s[idx][yb == 1], s[idx][yb == 0]))
        else:
            boots.append(np.mean(vals))
    lo, hi = np.quantile(boots, [0.025, 0.975])
    n = int(sum(len(s) for s, _, _ in parts))
    return Estimate(
        value, float(lo), float(hi), n, "cluster-bootstrap", "quality", None, 0.95, "", {"n_boot": len(boots)}
    )


def one_auroc(s: np.ndarray, S: StatementSet, seed: int) -> Estimate:
    return mean_auroc([(np.asarray(s, float), S.lie_labels, S.group)], seed)


# ---- one recipe ---------------------------------------------------------------------------


def evaluate_recipe(
    recipe: Recipe,
    Xt: np.ndarray,
    tiu: StatementSet,
    Xb: np.ndarray,
    builtin: StatementSet,
    layers: list[int],
    n_layers: int,
    seed: int,
    roleplay: Optional[tuple[np.ndarray, StatementSet]] = None,
) -> dict:
    """Choose on built-in train/validation, then measure on TiU and the built-in test part
    (and, given ``roleplay`` = (activations, set), on the role-play dialogues)."""
    tr, va, te = selection_split(builtin, seed)
    choice, trail = choose_layers(
        recipe, Xb, layers, n_layers, builtin.subset(tr), tr, builtin.subset(va), va, Cs=SELECTION_CS
    )
    out: dict = {"choice": choice.to_dict(), "selection": trail}
    sel = np.concatenate([tr, va])

    def fit(rows: np.ndarray):
        """Fit on TiU ``rows`` (a bool mask or indices), plus the built-in train/validation
        rows of the same polarities when the recipe's mix asks for them."""
        X, S = Xt[rows], tiu.subset(rows)
        if recipe.mix == "plus-builtin":
            extra = sel[np.isin(builtin.polarity[sel], np.unique(S.polarity))]
            X, S = np.concatenate([X, Xb[extra]]), StatementSet.concat([S, builtin.subset(extra)])
        return fit_recipe(recipe, choice, X, layers, S, Cs=FINAL_CS)

    topics = sorted(set(tiu.topic.tolist()))
    parts, per_topic = [], {}
    for t in topics:
        train, test = tiu.topic != t, tiu.topic == t
        S_te = tiu.subset(test)
        s = fit(train).score(Xt[test], S_te)
        parts.append((s, S_te.lie_labels, S_te.group))
        per_topic[t] = one_auroc(s, S_te, seed).to_dict()
    out["loto"] = per_topic
    out["loto_mean"] = mean_auroc(parts, seed).to_dict()
    # polarity transfer (contrast pairs use both polarities by construction: not applicable)
    if not recipe.needs_pairs:
        a, b = polarity_halves(tiu, seed)
        pol = {}
        for src, dst in (("affirmative", "negated"), ("negated", "affirmative")):
            tr_rows = a[(tiu.polarity[a] == src)]
            te_rows = b[(tiu.polarity[b] == dst)]
            fitted = fit(tr_rows)
            S_te = tiu.subset(te_rows)
            pol[f"{src}->{dst}"] = one_auroc(fitted.score(Xt[te_rows], S_te), S_te, seed).to_dict()
        out["polarity"] = pol
    # TiU (all six topics) -> built-in test part, per set
    fitted = fit(np.ones(len(tiu), bool))
    S_bt = builtin.subset(te)
    s = fitted.score(Xb[te], S_bt)
    bparts, per_set = [], {}
    for name in SELECTION_SETS:
        m = S_bt.topic == name
        bparts.append((s[m], S_bt.lie_labels[m], S_bt.group[m]))
        per_set[name] = one_auroc(s[m], S_bt.subset(m), seed).to_dict()
    out["builtin"] = per_set
    out["builtin_mean"] = mean_auroc(bparts, seed).to_dict()
    if roleplay is not None and recipe.read == "statement" and not recipe.needs_pairs:
        Xr, Sr = roleplay
        out["roleplay"] = one_auroc(fitted.score(Xr, Sr), Sr, seed).to_dict()
    return out


def evaluate_baseline(scores_t: np.ndarray, tiu: StatementSet, scores_b: np.ndarray, builtin: StatementSet, seed: int):
    topics = sorted(set(tiu.topic.tolist()))
    out: dict = {"choice": {"label": "no training"}}
    parts = []
    per_topic = {}
    for t in topics:
        m = tiu.topic == t
        parts.append((scores_t[m], tiu.lie_labels[m], tiu.group[m]))
        per_topic[t] = one_auroc(scores_t[m], tiu.subset(m), seed).to_dict()
    out["loto"], out["loto_mean"] = per_topic, mean_auroc(parts, seed).to_dict()
    a, b = polarity_halves(tiu, seed)
    out["polarity"] = {
        f"{src}->{dst}": one_auroc(
            scores_t[b[tiu.polarity[b] == dst]], tiu.subset(b[tiu.polarity[b] == dst]), seed
        ).to_dict()
        for src, dst in (("affirmative", "negated"), ("negated", "affirmative"))
    }
    _, _, te = selection_split(builtin, seed)
    S_bt, s = builtin.subset(te), scores_b[te]
    bparts, per_set = [], {}
    for name in SELECTION_SETS:
        m = S_bt.topic == name
        bparts.append((s[m], S_bt.lie_labels[m], S_bt.group[m]))
        per_set[name] = one_auroc(s[m], S_bt.subset(m), seed).to_dict()
    out["builtin"], out["builtin_mean"] = per_set, mean_auroc(bparts, seed).to_dict()
    return out


# ---- model side ---------------------------------------------------------------------------


def statement_loglik(backend, statements: StatementSet, cache_dir: Path) -> np.ndarray:
    """-log p(statement | newline), cached per model fingerprint and text (JSON)."""
    from liedar.probes.evaluation import loglik_scores

    path = cache_dir / f"recipes-loglik-{backend.fingerprint[:24]}.json"
    known = json.loads(path.read_text()) if path.is_file() else {}
    todo = [t for t in dict.fromkeys(statements.inputs) if t not in known]
    if todo:
        n = len(todo)
        sub = StatementSet(
            "todo", todo, np.ones(n, int), np.full(n, "x"), np.full(n, "affirmative"), np.full(n, "plain"), np.arange(n)
        )
        for text, s in zip(todo, loglik_scores(backend, sub, prefix="\n", progress=True)):
            known[text] = float(s)
        write_json_atomic(path, known)
    return np.array([known[t] for t in statements.inputs])


def run_model(name: str, tiu: StatementSet, builtin: StatementSet, args) -> dict:
    from liedar import models
    from liedar.models.cache import cached_hidden_states
    from liedar.probes.recipes import answer_logodds

    t0 = time.perf_counter()
    backend = models.load(name, backend="transformers", n_threads=args.threads)
    layers = list(range(0, backend.n_layers + 2))
    recipes = [RECIPES[r] for r in args.recipes]
    slots = {("prompt-plain", "last"), ("prompt-chat", "last")} if args.slot_baselines else set()
    needed = sorted({(r.read, r.position) for r in recipes} | slots)
    acts: dict = {}
    for read, pos in needed:
        acts[(read, pos)] = tuple(
            cached_hidden_states(backend, read_inputs(read, S), layers, pos, progress=True) for S in (tiu, builtin)
        )
    baselines, skipped = {}, {}
    if args.statement_baseline:
        baselines["loglik-statement"] = tuple(
            statement_loglik(backend, S, Path(args.cache_dir)) for S in (tiu, builtin)
        )
    for bname, read, answers in (
        ("loglik-prompt-plain", "prompt-plain", PLAIN_ANSWERS),
        ("loglik-prompt-chat", "prompt-chat", CHAT_ANSWERS),
    ):
        if not args.slot_baselines:
            continue
        try:
            baselines[bname] = tuple(answer_logodds(backend, X[:, -1], answers) for X in acts[(read, "last")])
        except InputError as exc:  # e.g. an answer that is two tokens for this model: say so, keep going
            skipped[bname] = str(exc)
            print(f"  {name}: {bname} not computed: {exc}", flush=True)
    rp = {}
    if args.roleplay:
        from liedar.probes.roleplay import roleplay_statements

        Sr = roleplay_statements()
        for pos in sorted({r.position for r in recipes if r.read == "statement"}):
            rp[pos] = (cached_hidden_states(backend, Sr.inputs, layers, pos, progress=True), Sr)
    extract_s = time.perf_counter() - t0
    result = {
        "model": name,
        "fingerprint": backend.fingerprint,
        "n_layers": backend.n_layers,
        "extract_seconds": round(extract_s, 1),
        "recipes": {},
        "baselines": {},
        "baselines_not_computed": skipped,
    }
    from threadpoolctl import threadpool_limits

    with threadpool_limits(args.threads):
        for bname, (st, sb) in baselines.items():
            result["baselines"][bname] = evaluate_baseline(st, tiu, sb, builtin, args.seed)
        for r in recipes:
            t1 = time.perf_counter()
            Xt, Xb = acts[(r.read, r.position)]
            result["recipes"][r.name] = evaluate_recipe(
                r, Xt, tiu, Xb, builtin, layers, backend.n_layers, args.seed, roleplay=rp.get(r.position)
            )
            result["recipes"][r.name]["seconds"] = round(time.perf_counter() - t1, 1)
            print(f"  {name} {r.name}: {result['recipes'][r.name]['seconds']:.0f}s", flush=True)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


# ---- table --------------------------------------------------------------------------------


def fmt(d: Optional[dict]) -> str:
    if not d:
        return "n/a"
    return f"{d['value']:.2f} [{d['lo']:.2f}, {d['hi']:.2f}]"


def markdown(result: dict, topics: list[str]) -> str:
    lines = [f"#### {result['model']} ({result['n_layers']} blocks)", ""]
    head = ["recipe", "choice (validation)"] + topics
    head += ["LOTO mean", "aff→neg", "neg→aff", "→ built-in (mean)", "→ role-play"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows = [(n, r) for n, r in result["recipes"].items()] + [(n, r) for n, r in result["baselines"].items()]
    for name, r in rows:
        pol = r.get("polarity") or {}
        cells = [name, r["choice"]["label"]] + [fmt(r["loto"][t]) for t in topics]
        cells += [
            f"**{fmt(r['loto_mean'])}**",
            fmt(pol.get("affirmative->negated")),
            fmt(pol.get("negated->affirmative")),
            fmt(r["builtin_mean"]),
            fmt(r.get("roleplay")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| recipe | " + " | ".join(SELECTION_SETS) + " |", "|---|" + "---|" * len(SELECTION_SETS)]
    for name, r in rows:
        lines.append(f"| {name} | " + " | ".join(fmt(r["builtin"][s]) for s in SELECTION_SETS) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="?", default="../shared/datasets", help="folder holding truth_is_universal/")
    ap.add_argument("--models", nargs="+", default=["smollm2-135m"])
    ap.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    ap.add_argument("--cap", type=int, default=100, help="about this many items per topic (whole groups, seeded)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache-dir", default=None, help="where log-likelihood scores are cached (default: liedar cache)")
    ap.add_argument("--output", default="results/probe-leaderboard.json")
    ap.add_argument(
        "--no-statement-baseline",
        dest="statement_baseline",
        action="store_false",
        help="skip the statement log-likelihood baseline (slow on large-vocabulary models)",
    )
    ap.add_argument(
        "--no-slot-baselines",
        dest="slot_baselines",
        action="store_false",
        help="skip the answer-slot log-likelihood baselines (and their template extractions)",
    )
    ap.add_argument(
        "--no-roleplay",
        dest="roleplay",
        action="store_false",
        help="skip the role-play dialogues column (truth probes scored on the assistant's turn)",
    )
    args = ap.parse_args(argv)
    if args.cache_dir is None:
        from liedar.models.storage import cache_root

        args.cache_dir = str(cache_root())
    full = load_truth_is_universal(args.datasets)
    tiu = full.subset(cap_per_topic(full.topic, full.group, args.cap, seed=args.seed), name="truth_is_universal")
    builtin = StatementSet.concat([builtin_set(s, seed=args.seed) for s in SELECTION_SETS], name="builtin")
    topics = sorted(set(tiu.topic.tolist()))
    print(f"Truth-is-Universal: {len(tiu)} of {len(full)} statements (cap {args.cap}, seed {args.seed})", flush=True)
    results = {
        "subsample": {"cap_per_topic": args.cap, "seed": args.seed, "n": len(tiu), "n_full": len(full)},
        "selection": {"sets": list(SELECTION_SETS), "fractions": list(SELECTION_FRACTIONS), "C": list(SELECTION_CS)},
        "final_Cs": list(FINAL_CS),
        "baselines": BASELINES,
        "models": [],
    }
    for name in args.models:
        results["models"].append(run_model(name, tiu, builtin, args))
        write_json_atomic(Path(args.output), results)
    for r in results["models"]:
        print()
        print(markdown(r, topics))
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    from liedar.core.errors import LiedarError

    try:
        sys.exit(main())
    except LiedarError as exc:
        print(f"probe_leaderboard: error: {exc}", file=sys.stderr)
        sys.exit(2)
