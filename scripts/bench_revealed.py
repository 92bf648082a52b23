"""Benchmark liedar's SARP + Houtman-Maks against prefgraph, in the same run.

Workloads (seeded; choices = a random strict ranking's top item, except that with a
per-configuration noise rate a menu's choice is replaced by another item of the menu):

  (a) the study's: 150 configurations x 15 menus (10 pairs + 5 triples) of 5 actions;
  (b) large: 1000 configurations x 500 menus of 2-5 of 20 actions.

Each side runs in its own fresh subprocess on the same data (so peak memory is its own):
liedar (`MenuChoiceLog` + `check_sarp` + `houtman_maks`), prefgraph's Python API
(`MenuChoiceLog` + `validate_menu_sarp` + `compute_menu_efficiency`, which return the
dropped observations) and prefgraph's Rust batch engine (`Engine.analyze_menus`, which
returns only counts). Reported: analysis wall time after a warm-up call (imports and JIT
excluded), peak RSS and its rise over the post-import baseline, agreement on SARP
verdicts, how often the Houtman-Maks answers differ, and who is right: every returned
drop set is checked for feasibility (the kept observations must satisfy SARP), and the
smaller feasible one wins. The speed ratio for (a) is printed last.

    .venv/bin/python scripts/bench_revealed.py            # both workloads
    .venv/bin/python scripts/bench_revealed.py --part a   # the study's workload only
    .venv/bin/python scripts/bench_revealed.py --configs-b 200
    .venv/bin/python scripts/bench_revealed.py --part b --sides liedar,prefgraph-engine
    .venv/bin/python scripts/bench_revealed.py --part b --sides liedar,prefgraph-engine --ray   # liedar on Ray tasks

The sides run in interleaved rounds (``--rounds``, default 5: the configurations in five
chunks, liedar and the others taking turns, the order alternating), so that the load of
a shared machine falls on both; the load average is printed next to the ratio.

prefgraph is a benchmark-only dependency: pip install prefgraph==0.6.2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

import numpy as np

PAIRS = list(combinations(range(5), 2))
TRIPLES = [(0, 1, 2), (1, 2, 3), (2, 3, 4), (0, 3, 4), (0, 1, 4)]


def _noisy_choices(rng: np.random.Generator, menus: list[list[int]], n_items: int, noise: float) -> list[int]:
    rank = rng.permutation(n_items)
    out = []
    for menu in menus:
        best = min(menu, key=lambda i: rank[i])
        if rng.random() < noise:
            best = int(rng.choice([i for i in menu if i != best]))
        out.append(int(best))
    return out


def make_workload(part: str, n_configs: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    configs = []
    for _ in range(n_configs):
        if part == "a":
            menus = [list(m) for m in PAIRS + TRIPLES]
            noise, n_items = float(rng.choice([0.0, 0.05, 0.1, 0.2, 0.4])), 5
        else:
            n_items = 20
            menus = [sorted(int(i) for i in rng.choice(20, size=rng.integers(2, 6), replace=False)) for _ in range(500)]
            noise = float(rng.choice([0.005, 0.01, 0.02, 0.04]))
        configs.append({"menus": menus, "choices": _noisy_choices(rng, menus, n_items, noise), "n_items": n_items})
    return configs


# ---- one side per subprocess ------------------------------------------------------------


def _rss_mb() -> float:
    """Peak resident memory of *this* process (VmHWM: reset at exec, unlike ru_maxrss,
    which a child inherits from the parent it was forked from)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def side_liedar_ray(configs: list[dict], time_budget: float, address: str) -> dict:
    """The configurations as Ray tasks (`houtman_maks_many(use_ray=True)`: one chunk per
    cluster CPU); the cluster start and a warm-up job are excluded from the time."""
    from liedar.behavioral.revealed import MenuChoiceLog, check_sarp
    from liedar.behavioral.revealed.houtman_maks import houtman_maks_many
    from liedar.models.distributed import ray_session

    labels = [f"a{i:02d}" for i in range(20)]

    def log_of(c: dict):
        return MenuChoiceLog([[labels[i] for i in m] for m in c["menus"]], [labels[i] for i in c["choices"]])

    with ray_session(None if address == "local" else address, num_cpus=None if address != "local" else 2):
        houtman_maks_many([log_of(c) for c in configs[:4]], time_budget=time_budget, use_ray=True)  # warm-up
        base = _rss_mb()
        t0 = time.perf_counter()
        logs = [log_of(c) for c in configs]
        sarp = [check_sarp(log).consistent for log in logs]
        hms = houtman_maks_many(logs, time_budget=time_budget, use_ray=True)
        secs = time.perf_counter() - t0
    return {
        "seconds": secs,
        "rss_mb": _rss_mb(),
        "rss_rise_mb": _rss_mb() - base,
        "sarp": sarp,
        "hm": [r.n_drop for r in hms],
        "dropped": [r.dropped for r in hms],
        "exact": [r.exact for r in hms],
    }


def side_liedar(configs: list[dict], time_budget: float, jobs: int = 1) -> dict:
    from liedar.behavioral.revealed import MenuChoiceLog, check_sarp, houtman_maks

    labels = [f"a{i:02d}" for i in range(20)]

    def one(c: dict) -> tuple[bool, int, list[int], bool]:
        log = MenuChoiceLog([[labels[i] for i in m] for m in c["menus"]], [labels[i] for i in c["choices"]])
        hm = houtman_maks(log, time_budget=time_budget)
        return check_sarp(log).consistent, hm.n_drop, hm.dropped, hm.exact

    one({"menus": [[0, 1], [1, 2], [0, 2], [0, 1, 2]] * 3, "choices": [0, 1, 2, 1] * 3})  # warm-up
    base = _rss_mb()
    t0 = time.perf_counter()
    if jobs > 1:  # configurations spread over processes (houtman_maks_many does the same for logs)
        from joblib import Parallel, delayed

        rows = list(Parallel(n_jobs=jobs, batch_size=16)(delayed(one)(c) for c in configs))
    else:
        rows = [one(c) for c in configs]
    secs = time.perf_counter() - t0
    return {
        "seconds": secs,
        "rss_mb": _rss_mb(),
        "rss_rise_mb": _rss_mb() - base,
        "sarp": [r[0] for r in rows],
        "hm": [r[1] for r in rows],
        "dropped": [r[2] for r in rows],
        "exact": [r[3] for r in rows],
    }


def side_prefgraph_api(configs: list[dict]) -> dict:
    import prefgraph as pg

    def one(c: dict) -> tuple[bool, int, list[int]]:
        log = pg.MenuChoiceLog(menus=[frozenset(m) for m in c["menus"]], choices=list(c["choices"]))
        sarp = pg.validate_menu_sarp(log)
        hm = pg.compute_menu_efficiency(log)
        return bool(sarp.is_consistent), len(hm.removed_observations), [int(i) for i in hm.removed_observations]

    one({"menus": [[0, 1], [1, 2], [0, 2], [0, 1, 2]] * 3, "choices": [0, 1, 2, 1] * 3})  # warm-up (numba JIT)
    base = _rss_mb()
    t0 = time.perf_counter()
    rows = [one(c) for c in configs]
    secs = time.perf_counter() - t0
    return {
        "seconds": secs,
        "rss_mb": _rss_mb(),
        "rss_rise_mb": _rss_mb() - base,
        "sarp": [r[0] for r in rows],
        "hm": [r[1] for r in rows],
        "dropped": [r[2] for r in rows],
    }


def side_prefgraph_engine(configs: list[dict]) -> dict:
    import prefgraph as pg

    engine = pg.Engine()
    engine.analyze_menus([([[0, 1], [1, 2], [0, 2]], [0, 1, 2], 3)])  # warm-up
    users = [(c["menus"], c["choices"], c["n_items"]) for c in configs]
    base = _rss_mb()
    t0 = time.perf_counter()
    res = engine.analyze_menus(users)
    secs = time.perf_counter() - t0
    return {
        "seconds": secs,
        "rss_mb": _rss_mb(),
        "rss_rise_mb": _rss_mb() - base,
        "sarp": [bool(r.is_sarp) for r in res],
        "hm": [int(r.hm_total - r.hm_consistent) for r in res],
    }


def run_side(side: str, data_path: Path, time_budget: float, jobs: int = 1, ray: str | None = None) -> dict:
    """Run one side in a fresh interpreter and return its JSON report."""
    out = subprocess.run(
        [sys.executable, __file__, "--side", side, "--data", str(data_path), "--time-budget", str(time_budget)]
        + (["--jobs", str(jobs)] if side == "liedar" else [])
        + (["--ray", ray] if side == "liedar" and ray else []),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{side} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_rounds(
    sides: list[str], configs: list[dict], time_budget: float, jobs: int, rounds: int, ray: str | None = None
) -> dict[str, dict]:
    """Every side on the same configurations, cut into ``rounds`` chunks run side after side
    (the order alternating each round), so that on a shared machine both sides see the same
    load swings; seconds are summed, peak memory is the largest chunk's, lists are joined."""
    chunks = [c for c in np.array_split(np.arange(len(configs)), max(1, rounds)) if len(c)]
    merged: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, chunk in enumerate(chunks):
            path = Path(tmp) / f"configs-{k}.json"
            path.write_text(json.dumps([configs[i] for i in chunk]))
            for side in sides if k % 2 == 0 else sides[::-1]:
                r = run_side(side, path, time_budget, jobs, ray)
                m = merged.setdefault(side, {})
                for key, val in r.items():
                    if isinstance(val, list):
                        m[key] = m.get(key, []) + val
                    elif key == "seconds":
                        m[key] = m.get(key, 0.0) + val
                    else:
                        m[key] = max(m.get(key, val), val)
    return {side: merged[side] for side in sides}


# ---- comparison ---------------------------------------------------------------------------


def feasible(config: dict, dropped: list[int]) -> bool:
    from liedar.behavioral.revealed import MenuChoiceLog, restores_sarp

    labels = [f"a{i:02d}" for i in range(20)]
    log = MenuChoiceLog([[labels[i] for i in m] for m in config["menus"]], [labels[i] for i in config["choices"]])
    return restores_sarp(log, dropped)


def compare(part: str, configs: list[dict], results: dict[str, dict]) -> None:
    n = len(configs)
    ours = results["liedar"]
    print(f"\n({part}) {n} configurations x {len(configs[0]['menus'])} menus over {configs[0]['n_items']} actions")
    print(f"{'side':28s}{'seconds':>10s}{'ms/config':>11s}{'peak RSS MB':>13s}{'RSS rise MB':>13s}")
    for side, r in results.items():
        print(
            f"{side:28s}{r['seconds']:10.3f}{1000 * r['seconds'] / n:11.3f}{r['rss_mb']:13.1f}{r['rss_rise_mb']:13.1f}"
        )
    print(
        f"liedar: SARP-consistent {sum(ours['sarp'])}/{n}; Houtman-Maks proven exact {sum(ours['exact'])}/{n}; "
        f"mean drops {np.mean(ours['hm']):.2f}"
    )
    ours_ok = sum(feasible(c, d) for c, d in zip(configs, ours["dropped"]))
    print(f"liedar drop sets that restore SARP: {ours_ok}/{n}")
    for side, r in results.items():
        if side == "liedar":
            continue
        agree = sum(a == b for a, b in zip(ours["sarp"], r["sarp"]))
        differ = [i for i in range(n) if ours["hm"][i] != r["hm"][i]]
        smaller_theirs = sum(r["hm"][i] < ours["hm"][i] for i in differ)
        print(
            f"vs {side}: SARP verdicts agree {agree}/{n}; Houtman-Maks differs in {len(differ)}/{n} "
            f"(theirs larger in {len(differ) - smaller_theirs}, smaller in {smaller_theirs})"
        )
        if differ:
            extra = [r["hm"][i] - ours["hm"][i] for i in differ]
            print(
                f"   where they differ: prefgraph drops {np.mean(extra):+.1f} observations on average "
                f"(max {max(extra):+d}); e.g. config {differ[0]}: "
                f"liedar {ours['hm'][differ[0]]}, {side} {r['hm'][differ[0]]}"
            )
        if "dropped" in r:
            ok = sum(feasible(c, d) for c, d in zip(configs, r["dropped"]))
            print(f"   {side} drop sets that restore SARP: {ok}/{n}")
        print(f"   speed ratio {side} / liedar: {r['seconds'] / ours['seconds']:.1f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=("a", "b", "both"), default="both")
    ap.add_argument("--configs-a", type=int, default=150)
    ap.add_argument("--configs-b", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--time-budget", type=float, default=30.0, help="liedar's Houtman-Maks budget per configuration (s)"
    )
    ap.add_argument(
        "--sides",
        default="liedar,prefgraph-api,prefgraph-engine",
        help="comma-separated sides to run (liedar always runs; default all three)",
    )
    ap.add_argument("--jobs", type=int, default=1, help="processes for liedar's configurations (default 1)")
    ap.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="chunks of configurations, the sides alternating per chunk (shared-machine load; default 5)",
    )
    ap.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        help="liedar's configurations as Ray tasks: a local 2-CPU cluster (run through scripts/isolated.sh) or ADDRESS",
    )
    ap.add_argument("--side", choices=("liedar", "prefgraph-api", "prefgraph-engine"), help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        configs = json.loads(args.data.read_text())
        if args.side == "liedar" and args.ray:
            report = side_liedar_ray(configs, args.time_budget, args.ray)
        elif args.side == "liedar":
            report = side_liedar(configs, args.time_budget, args.jobs)
        elif args.side == "prefgraph-api":
            report = side_prefgraph_api(configs)
        else:
            report = side_prefgraph_engine(configs)
        print(json.dumps(report))
        return 0

    import importlib.util

    if importlib.util.find_spec("prefgraph") is not None:  # not imported here: children measure memory
        wanted = set(args.sides.split(","))
        sides = ["liedar"] + [s for s in ("prefgraph-api", "prefgraph-engine") if s in wanted]
    else:
        print("prefgraph is not installed: pip install prefgraph==0.6.2 into the venv to compare; running liedar only")
        sides = ["liedar"]
    ratio_a = ratio_b = None
    parts = ["a", "b"] if args.part == "both" else [args.part]
    for part in parts:
        configs = make_workload(part, args.configs_a if part == "a" else args.configs_b, args.seed)
        load0 = os.getloadavg()
        results = run_rounds(sides, configs, args.time_budget, args.jobs, args.rounds, args.ray)
        load1 = os.getloadavg()
        compare(part, configs, results)
        print(
            f"load average (1, 5, 15 min) before: {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}, "
            f"after: {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}; {args.rounds} interleaved round(s)"
        )
        if part == "a" and len(results) > 1:
            ratio_a = ", ".join(
                f"{side} {r['seconds'] / results['liedar']['seconds']:.1f}x"
                for side, r in results.items()
                if side != "liedar"
            )
        if part == "b" and "prefgraph-engine" in results:  # the goal: exact at <= 2x the greedy engine
            r = results["liedar"]["seconds"] / results["prefgraph-engine"]["seconds"]
            ms = 1000 * results["liedar"]["seconds"] / len(configs)
            ms_e = 1000 * results["prefgraph-engine"]["seconds"] / len(configs)
            ratio_b = f"{r:.2f}x ({ms:.1f} ms vs {ms_e:.1f} ms per configuration; goal <= 2x)"
    if ratio_b is not None:
        print(f"\n(b) time ratio, liedar exact Houtman-Maks / prefgraph greedy engine: {ratio_b}")
    if ratio_a is not None:
        print(f"\n(a) speed ratio, prefgraph in-process time / liedar time: {ratio_a}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
