"""Exact coverage of the project's binomial intervals over p in [0.01, 0.5], n in [20, 500].

Why exact and not Monte Carlo: for a binomial the coverage at (n, p) is a finite sum,
sum_k P(X = k) * [lo_k <= p <= hi_k], so it can be computed without simulation noise.
The intervals are those `liedar.core.stats` ships (`wilson`, `clopper_pearson`), called
for every k, so the script measures the code the instruments use.

Requirement checked: Wilson's 95% interval covers >= 94% in every cell. The worst cell is
printed last. Usage::

    python scripts/check_interval_coverage.py [--p-step 0.001] [--n-step 1] [--output FILE.json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats as st

from liedar.core.stats import clopper_pearson, wilson

REQUIREMENT = 0.94


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
    args = ap.parse_args()

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
