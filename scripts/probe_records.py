"""The capable rung's probe tables, generated from its probe records for docs/capable.md.

Why its own module: `scripts/results_tables.py` owns the pages and their markers; this one
only knows the two record shapes the probe scripts write with ``--record``
(`scripts/reproduce_probes.py`: Truth-is-Universal; `scripts/lie_probe_transfer.py`: lie
probes), so a new rung's probes are one more pair of files, not more page code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

RECORDS = Path(__file__).resolve().parents[1] / "docs" / "records"
PROBE_MODEL = "qwen2.5-coder-1.5b"


def _read(name: str) -> Optional[dict[str, Any]]:
    path = RECORDS / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _ci(e: dict[str, Any]) -> str:
    return f"{e['value']:.2f} [{e['lo']:.2f}, {e['hi']:.2f}]"


def _topic_mean(cells: dict[str, Any]) -> float:
    """The mean over topics of each topic's AUROC (each topic's interval is in the record)."""
    values = [c["auroc"]["value"] if "auroc" in c else c["value"] for c in cells.values()]
    return sum(values) / len(values)


def cpu_phrase(rec: dict[str, Any]) -> str:
    """The CPU a record was measured on, as every generated table names it."""
    cpu = rec["cpu"]
    return f"{cpu['model']}, {cpu['cores']} cores, {cpu['mode']}" if isinstance(cpu, dict) else str(cpu)


def _stamp(rec: dict[str, Any], seconds: float) -> str:
    return f"`{rec['command']}` ({rec['date']}, {cpu_phrase(rec)}; {seconds / 60:.1f} min)"


def truth_table(rec: dict[str, Any]) -> list[str]:
    m = rec["models"][0]
    sub = rec["subsample"]
    out = [
        f"Truth-is-Universal, {sub['n']:,} of {sub['n_full']:,} statements ({sub['cap_per_topic']} a topic, seed "
        f"{sub['seed']}) through {m['backend']}; layer {m['chosen_layer']} of {m['n_layers']} chosen on the built-in "
        "sets' validation split. AUROC, mean over the six topics; affirmative → negated with its interval:",
        "",
        "| probe | in-topic (5-fold group CV) | held-out topic | affirmative → negated |",
        "|---|---|---|---|",
    ]
    for name, p in m["probes"].items():
        neg = p["polarity_transfer"].get("affirmative->negated", {}).get("auroc")
        out.append(
            f"| {name} | {_topic_mean(p['in_distribution']):.2f} | {_topic_mean(p['leave_one_topic_out']):.2f} | "
            f"{_ci(neg) if neg else 'not run'} |"
        )
    for key, label in (
        ("zero_shot_loglik", "affirmative and negated"),
        ("zero_shot_loglik_affirmative_only", "affirmative only"),
    ):
        if m.get(key):
            out.append(f"| the model's log-likelihood, no training ({label}) | | {_topic_mean(m[key]):.2f} | |")
    total = m["extract_seconds"] + sum(p.get("seconds", 0.0) for p in m["probes"].values())
    return out + ["", f"- {_stamp(rec, total)}"]


def lie_table(rec: dict[str, Any]) -> list[str]:
    m = rec["models"][0]
    styles = list(rec["sets"])
    out = [
        f"Lie probes through {m['backend']}: trained on one style of dialogue, tested on each (AUROC, 5-fold group "
        "CV within a style):",
        "",
        "| probe | trained on | " + " | ".join(f"→ {s}" for s in styles) + " |",
        "|---|---|" + "---|" * len(styles),
    ]
    for name, p in m["probes"].items():
        for cell, results in _by_training_set(p["cells"]).items():
            row = [_ci(results[s]["auroc"]) if s in results else "not run" for s in styles]
            out.append(f"| {name} (layer {p['layer']}) | {cell} | " + " | ".join(row) + " |")
    loglik = m.get("reply_loglik") or {}
    out.append(
        "| the model's reply log-likelihood | no training | "
        + " | ".join(_ci(loglik[s]) if s in loglik else "not run" for s in styles)
        + " |"
    )
    return out + ["", f"- {_stamp(rec, m['seconds'])}"]


def _by_training_set(cells: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"a -> b": result}`` as ``{a: {b: result}}``."""
    out: dict[str, dict[str, Any]] = {}
    for key, result in cells.items():
        train, _, test = key.partition(" -> ")
        out.setdefault(train, {})[test] = result
    return out


def probe_block(model: str = PROBE_MODEL) -> str:
    """The truth and lie probe tables of ``model``, or a line saying which are not measured."""
    out = [f"## Probes on {model}", ""]
    for suffix, table in (("tiu", truth_table), ("lie", lie_table)):
        rec = _read(f"probes-{model}-{suffix}.json")
        out += (table(rec) if rec else [f"- not measured: `docs/records/probes-{model}-{suffix}.json`"]) + [""]
    return "\n".join(out).rstrip()


__all__ = ["PROBE_MODEL", "lie_table", "probe_block", "truth_table"]
