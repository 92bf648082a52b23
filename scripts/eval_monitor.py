"""Does the inline monitor catch lies? AUROC and recall at 1% FPR of its per-response score.

Measured on a real model (default smollm2-135m), for each probe layer and each aggregate
(mean / max / last over the response's tokens):

(a) instructed pairs (probes.datasets.instructed_pairs: the same true fact asserted after an
    honest or a dishonest persona instruction): group-aware K-fold; the probe is fitted on
    the training folds (pooled mean over the assistant's tokens) and the monitor scores the
    held-out folds token by token; out-of-fold scores are pooled.
(b) role-play dialogues (probes.roleplay, written by this project, never used for training
    or for choosing anything): the probe fitted on *all* instructed pairs scores them.

Recall at 1% FPR uses the 99th percentile of the *same set's* honest scores as threshold
(Apollo's metric, probes.evaluation.recall_at_fpr); with 30 honest role-play answers that
threshold is essentially their maximum, so read it with its interval. Nothing is chosen
on the role-play set: every layer is reported.

Scores come from `HonestyMonitor.score_dialogue` (the offline path, which the tests pin to
the streaming path). Each dialogue's token states are computed once for all layers.

    .venv/bin/python scripts/eval_monitor.py --output results/monitor_eval.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from liedar.core._util.atomic import write_json_atomic
from liedar.models.backend import Backend, TokenStates
from liedar.models.chat import TextInput
from liedar.probes.datasets import instructed_pairs
from liedar.probes.estimators import make_probe
from liedar.probes.evaluation import auroc, fit_probe, recall_at_fpr
from liedar.probes.monitor import AGGREGATES, HonestyMonitor, aggregate_scores
from liedar.probes.roleplay import roleplay_dialogues
from liedar.probes.splits import group_folds


class CachedStates:
    """A backend view that computes each input's token states once, for all eval layers.

    Why: K folds x layers would otherwise run the same forward pass dozens of times; the
    states are identical, only the probe changes.
    """

    def __init__(self, backend: Backend, layers: Sequence[int]) -> None:
        self._backend = backend
        self._layers = list(layers)
        self._cache: dict[Any, TokenStates] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def token_states(self, text: TextInput, layers: Sequence[int]) -> TokenStates:
        if text not in self._cache:
            self._cache[text] = self._backend.token_states(text, self._layers)
        full = self._cache[text]
        cols = [self._layers.index(int(layer)) for layer in layers]
        return TokenStates(
            full.hidden[:, cols, :], full.token_ids, full.token_texts, full.offsets, full.detect, full.text
        )

    def pooled(self, text: TextInput, layer: int) -> np.ndarray:
        """Mean over the detect tokens: the probe's training feature (position="mean")."""
        s = self.token_states(text, [layer])
        return s.hidden[s.detect, 0, :].mean(axis=0)


def _response_scores(monitor: HonestyMonitor, items: Sequence[TextInput]) -> dict[str, np.ndarray]:
    per_agg: dict[str, list[float]] = {a: [] for a in AGGREGATES}
    for item in items:
        tokens = monitor.score_dialogue(item).token_scores
        for a in AGGREGATES:
            per_agg[a].append(aggregate_scores(tokens, a))
    return {a: np.asarray(v) for a, v in per_agg.items()}


def _metrics(scores: np.ndarray, lie: np.ndarray, groups: np.ndarray, seed: int) -> dict[str, Any]:
    return {
        "auroc": auroc(scores, lie, groups=groups, seed=seed).to_dict(),
        "recall_at_1pct_fpr": recall_at_fpr(scores[lie == 0], scores[lie == 1], 0.01).to_dict(),
    }


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    from tqdm.auto import tqdm

    from liedar import models

    backend = models.load(args.model, backend=args.backend, n_threads=args.threads)
    layers = args.layers or list(range(3, backend.n_layers + 1, 3))
    cache = CachedStates(backend, layers)
    inst = instructed_pairs(seed=args.seed)
    inst_lie = inst.lie_labels
    rp_inputs, rp_labels, rp_groups = roleplay_dialogues()
    rp_lie, rp_groups = np.asarray(rp_labels), np.asarray(rp_groups)
    t0 = time.perf_counter()
    for item in tqdm(list(inst.inputs) + rp_inputs, desc=f"{backend.name}: token states", leave=False):
        cache.token_states(item, [layers[0]])
    extract_s = time.perf_counter() - t0
    folds = group_folds(inst.group, args.folds, args.seed)
    rows = []
    for layer in tqdm(layers, desc="layers", leave=False):
        X = np.stack([cache.pooled(x, layer) for x in inst.inputs])
        oof = {a: np.empty(len(inst)) for a in AGGREGATES}
        for train, test in folds:
            probe = fit_probe(make_probe(args.probe), X[train], inst.subset(train))
            mon = HonestyMonitor(cache, probe, layer=layer)
            scores = _response_scores(mon, [inst.inputs[i] for i in test])
            for a in AGGREGATES:
                oof[a][test] = scores[a]
        final = fit_probe(make_probe(args.probe), X, inst)
        rp_scores = _response_scores(HonestyMonitor(cache, final, layer=layer), rp_inputs)
        for a in AGGREGATES:
            rows.append(
                {
                    "layer": layer,
                    "aggregate": a,
                    "instructed_heldout": _metrics(oof[a], inst_lie, inst.group, args.seed),
                    "roleplay": _metrics(rp_scores[a], rp_lie, rp_groups, args.seed),
                }
            )
    return {
        "model": args.model,
        "backend": args.backend,
        "fingerprint": backend.fingerprint,
        "probe": args.probe,
        "folds": args.folds,
        "seed": args.seed,
        "n_instructed": len(inst),
        "n_roleplay": len(rp_inputs),
        "token_state_seconds": round(extract_s, 1),
        "rows": rows,
    }


def to_markdown(result: dict[str, Any]) -> str:
    def cell(e: dict) -> str:
        return f"{e['value']:.2f} [{e['lo']:.2f}, {e['hi']:.2f}]"

    lines = [
        "| layer | aggregate | instructed AUROC (held-out folds) | instructed recall@1%FPR "
        "| role-play AUROC | role-play recall@1%FPR |",
        "|---:|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        a, b = r["instructed_heldout"], r["roleplay"]
        lines.append(
            f"| {r['layer']} | {r['aggregate']} | {cell(a['auroc'])} | {cell(a['recall_at_1pct_fpr'])} | "
            f"{cell(b['auroc'])} | {cell(b['recall_at_1pct_fpr'])} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--backend", choices=("transformers", "llamacpp"), default="transformers")
    p.add_argument("--probe", default="logistic", help="probe type (probes.estimators.make_probe)")
    p.add_argument("--layers", type=int, nargs="*", help="default: every 3rd block")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--output", type=Path, default=Path("results/monitor_eval.json"))
    args = p.parse_args(argv)
    result = evaluate(args)
    write_json_atomic(args.output, result)
    print(to_markdown(result))
    best_inst = max(result["rows"], key=lambda r: r["instructed_heldout"]["auroc"]["value"])
    rp = best_inst["roleplay"]["auroc"]
    print(
        f"\nwritten to {args.output}. Layer/aggregate with the best *instructed held-out* AUROC: "
        f"layer {best_inst['layer']} ({best_inst['aggregate']}): instructed "
        f"{best_inst['instructed_heldout']['auroc']['value']:.3f}, role-play (never seen) "
        f"{rp['value']:.3f} [{rp['lo']:.3f}, {rp['hi']:.3f}]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
