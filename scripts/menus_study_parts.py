"""Run the menu study one scenario at a time on one loaded model, saving each part as it ends.

Why: on a shared machine a full run can outlast the time available, and the command line
writes its JSON only at the end; here every finished scenario is on disk (and its tables
printed), so a run that has to stop still leaves whole scenarios to report.

    OMP_NUM_THREADS=1 .venv/bin/python scripts/menus_study_parts.py --mode exact --framings minimal --out runs/menus
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", default="transformers", choices=("transformers", "llamacpp"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mode", default="exact", choices=("deterministic", "stochastic", "exact"))
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--scenarios", default=None, help="comma-separated (default all, in the bank's order)")
    ap.add_argument("--framings", default=None, help="comma-separated (default all)")
    ap.add_argument("--out", type=Path, required=True, help="folder for one JSON per scenario")
    args = ap.parse_args()

    from liedar import models
    from liedar._util.atomic import write_json_atomic
    from liedar.behavioral.items.menus import SCENARIOS
    from liedar.behavioral.menus_summary import study_tables
    from liedar.behavioral.runners.menus import check_study_arguments, run_menu_study

    scenarios = args.scenarios.split(",") if args.scenarios else list(SCENARIOS)
    framings = args.framings.split(",") if args.framings else None
    check_study_arguments(args.mode, args.samples, args.temperature, scenarios, None, framings)
    args.out.mkdir(parents=True, exist_ok=True)
    backend = models.load(args.model, backend=args.backend, n_threads=args.threads)
    for scenario in scenarios:
        load0, t0 = os.getloadavg()[0], time.perf_counter()
        res = run_menu_study(
            backend, mode=args.mode, samples=args.samples, temperature=args.temperature, scenarios=[scenario],
            framings=framings, progress=False,
        )  # fmt: skip
        secs = time.perf_counter() - t0
        data = {"seconds": secs, "load_before": load0, "load_after": os.getloadavg()[0], "result": res.to_dict()}
        write_json_atomic(args.out / f"{scenario}.json", data)
        print(f"{scenario}: {len(res.configs)} configurations in {secs:.0f} s (load {load0:.1f} -> "
              f"{data['load_after']:.1f})\n{study_tables(res)}\n", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
