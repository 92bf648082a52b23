"""Exact coverage of the project's binomial intervals over p in [0.01, 0.5], n in [20, 500].

Why exact and not Monte Carlo: for a binomial the coverage at (n, p) is a finite sum,
sum_k P(X = k) * [lo_k <= p <= hi_k], so it can be computed without simulation noise.
The intervals are those `liedar.core.stats` ships (`wilson`, `clopper_pearson`), called
for every k, so the script measures the code the instruments use.

Requirement checked: Wilson's 95% interval covers >= 94% in every cell. The worst cell is
printed last. Usage::

    python scripts/check_interval_coverage.py [--p-step 0.001] [--n-step 1] [--output FILE.json]

With ``--paired`` it measures the audit's paired excess instead (`liedar.core.paired`), by
simulation, since its per-item differences take five values and have no finite sum to
compute: items where a model and the reference each score -1, 0 or +1 (the gap's right-then-
wrong, unchanged, wrong-then-right), the model sharing the reference's score on a share
``rho`` of items and drawing its own elsewhere, at the reference's discordance, the excess
and n of the audit's rows. Requirement: >= 0.93 in every cell (Monte Carlo error about
0.007 at 1,000 repetitions)::

    python scripts/check_interval_coverage.py --paired [--reps 1000] [--output FILE.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as st

from liedar.core.stats import clopper_pearson, wilson

REQUIREMENT = 0.94
PAIRED_REQUIREMENT = 0.93
# (n items in common, reference's discordance, model's added excess, share of items the model answers as the reference)
PAIRED_CELLS = [
    (n, disc, ex, rho)
    for n in (30, 64, 100)
    for disc in (0.05, 0.15, 0.30)
    for ex in (0.0, 0.10, 0.25)
    for rho in (0.0, 0.5, 0.8)
    if disc / 2 + ex / (1 - rho) + disc / 2 <= 1
]


def paired_coverage(n: int, disc: float, excess: float, rho: float, reps: int, seed: int = 0, draws: int = 1000):
    """Share of ``reps`` simulated audits whose paired-excess 95% interval holds the true excess.

    The reference scores +1 / -1 with probability disc / 2 each; the model copies the
    reference's score with probability ``rho`` and otherwise draws +1 with probability
    disc / 2 + excess / (1 - rho) (-1 with disc / 2), so its true excess over the reference
    is ``excess`` exactly. Returns (coverage, mean interval width)."""
    from liedar.core.paired import paired_excess

    rng = np.random.default_rng([seed, n, int(disc * 1000), int(excess * 1000), int(rho * 1000)])
    up = disc / 2 + excess / (1 - rho)
    down = disc / 2
    if up + down > 1:
        raise ValueError("cell outside the simplex")
    hit, width = 0, 0.0
    for r in range(reps):
        ref = rng.choice([1, 0, -1], size=n, p=[disc / 2, 1 - disc, disc / 2])
        own = rng.choice([1, 0, -1], size=n, p=[up, 1 - up - down, down])
        model = np.where(rng.random(n) < rho, ref, own)
        e = paired_excess(
            {f"i{i}": ["all", int(v)] for i, v in enumerate(model)},
            {f"i{i}": ["all", int(v)] for i, v in enumerate(ref)},
            draws=draws,
            seed=r,
        )
        assert e is not None
        hit += e.lo <= excess <= e.hi
        width += e.hi - e.lo
    return hit / reps, width / reps


def paired_main(reps: int, output) -> int:
    t0 = time.perf_counter()
    rows = []
    for n, disc, ex, rho in PAIRED_CELLS:
        cov, width = paired_coverage(n, disc, ex, rho, reps)
        rows.append({"n": n, "discordance": disc, "excess": ex, "rho": rho, "coverage": cov, "mean_width": width})
        print(f"n={n:3d} disc={disc:.2f} excess={ex:.2f} rho={rho:.1f}: coverage {cov:.3f}, mean width {width:.3f}")
    worst = min(rows, key=lambda r: r["coverage"])
    ok = worst["coverage"] >= PAIRED_REQUIREMENT
    print(
        f"worst paired cell: n={worst['n']} disc={worst['discordance']} excess={worst['excess']} rho={worst['rho']} "
        f"coverage={worst['coverage']:.3f} ({'meets' if ok else 'BELOW'} the {PAIRED_REQUIREMENT:.2f} requirement)"
    )
    if output:
        from datetime import datetime, timezone

        from liedar.core._util.atomic import write_json_atomic

        cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "")
        record = {
            "command": "python scripts/check_interval_coverage.py " + " ".join(sys.argv[1:]),
            "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "cpu": f"{cpu}, {os.cpu_count()} cores, native",
            "seconds": round(time.perf_counter() - t0, 1),
        }
        write_json_atomic(
            output, {**record, "reps": reps, "requirement": PAIRED_REQUIREMENT, "cells": rows, "worst": worst}
        )
    return 0 if ok else 1


def interval_table(method, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper limits for every possible count k = 0..n."""
    limits = [method(k, n) for k in range(n + 1)]
    return np.array([e.lo for e in limits]), np.array([e.hi for e in limits])


def coverage_grid(method, ns: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """coverage[i, j] = P(interval from Binomial(ns[i], ps[j]) contains ps[j]), exactly."""
    out = np.empty((len(ns), len(ps)))
    for i, n in enumerate(ns):
        lo, hi = interval_table(method, int(n))
        k = np.arange(n + 1)
        pmf = st.binom.pmf(k[None, :], n, ps[:, None])  # [P, n+1]
        covers = (lo[None, :] <= ps[:, None]) & (ps[:, None] <= hi[None, :])
        out[i] = (pmf * covers).sum(axis=1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--p-step", type=float, default=0.001, help="grid step for p (default 0.001)")
    ap.add_argument("--n-step", type=int, default=1, help="grid step for n (default 1: every n)")
    ap.add_argument("--output", type=Path, help="write the summary as JSON here")
    ap.add_argument("--paired", action="store_true", help="the audit's paired excess, by simulation")
    ap.add_argument("--reps", type=int, default=1000, help="simulated audits per cell (--paired)")
    args = ap.parse_args()
    if args.paired:
        return paired_main(args.reps, args.output)

    ps = np.round(np.arange(0.01, 0.5 + 1e-9, args.p_step), 6)
    ns = np.arange(20, 501, args.n_step)
    summary: dict = {
        "grid": {
            "p": [float(ps[0]), float(ps[-1]), args.p_step, len(ps)],
            "n": [int(ns[0]), int(ns[-1]), args.n_step, len(ns)],
        },
        "requirement": REQUIREMENT,
        "methods": {},
    }
    worst_wilson = None
    for name, method in (("clopper-pearson", clopper_pearson), ("wilson", wilson)):
        cov = coverage_grid(method, ns, ps)
        i, j = np.unravel_index(np.argmin(cov), cov.shape)
        below = cov < REQUIREMENT
        below_cells = [(int(ns[a]), float(ps[b]), float(cov[a, b])) for a, b in zip(*np.nonzero(below))]
        summary["methods"][name] = {
            "worst": {"n": int(ns[i]), "p": float(ps[j]), "coverage": float(cov[i, j])},
            "mean_coverage": float(cov.mean()),
            "cells": int(cov.size),
            "cells_below_requirement": int(below.sum()),
            "fraction_below_requirement": float(below.mean()),
            "p_range_of_cells_below": [min(c[1] for c in below_cells), max(c[1] for c in below_cells)]
            if below_cells
            else None,
            "worst_below_cells": sorted(below_cells, key=lambda c: c[2])[:10],
        }
        # Coverage by band of the expected count n*p: where the dips live.
        npv = ns[:, None] * ps[None, :]
        bands = [(0, 1), (1, 2), (2, 5), (5, 10), (10, np.inf)]
        summary["methods"][name]["min_coverage_by_np"] = {
            f"{a}<=np<{b}": float(cov[(npv >= a) & (npv < b)].min()) for a, b in bands if ((npv >= a) & (npv < b)).any()
        }
        summary["methods"][name]["fraction_below_by_np"] = {
            f"{a}<=np<{b}": float(below[(npv >= a) & (npv < b)].mean())
            for a, b in bands
            if ((npv >= a) & (npv < b)).any()
        }
        s = summary["methods"][name]
        print(
            f"{name:16s} mean coverage {s['mean_coverage']:.4f}; cells below {REQUIREMENT:.2f}: "
            f"{s['cells_below_requirement']} of {s['cells']} ({100 * s['fraction_below_requirement']:.2f}%)"
        )
        for band, v in s["min_coverage_by_np"].items():
            frac = s["fraction_below_by_np"][band]
            print(
                f"{'':16s}   where {band:12s} min coverage {v:.4f}, {100 * frac:5.2f}% of cells below {REQUIREMENT:.2f}"
            )
        if name == "wilson":
            worst_wilson = s["worst"]
    if args.output:
        from liedar.core._util.atomic import write_json_atomic

        write_json_atomic(args.output, summary)
    ok = worst_wilson["coverage"] >= REQUIREMENT
    print(
        f"worst Wilson 95% cell: n={worst_wilson['n']} p={worst_wilson['p']:.3f} "
        f"coverage={worst_wilson['coverage']:.4f} ({'meets' if ok else 'BELOW'} the {REQUIREMENT:.2f} requirement)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
