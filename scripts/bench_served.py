"""Served-model throughput, and the menu study through a served model.

Both modes start llama-cpp-python's OpenAI-compatible server on the shipped smollm2 GGUF
(127.0.0.1, a free port, ``--n_threads`` as given, flash attention on like the in-process
backend) and stop it at the end.

``bench`` (default): the same stochastic-menu generations (menu prompts, max_tokens 12,
temperature 0.7, distinct seeds) through the server at concurrency 1, 4 and 8 (each with a
fresh cache, so every request is a real call), and through the in-process llama.cpp backend,
in the same run. Prints calls/s for each and the ratio served/in-process last.

``study``: the menu study in stochastic mode (K samples at a temperature) through the server,
on the scenarios / vignettes / framings chosen, printing the study's tables, the usage, the
wall time, seconds per call by framing, and the extrapolation to the full study
(40 vignettes x 5 framings x 15 menus x K).

    .venv/bin/python scripts/bench_served.py --calls 24
    .venv/bin/python scripts/bench_served.py study --per-scenario 1 --framings minimal --samples 20
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, threads: int, log: Path):
        from liedar.models.registry import resolve

        self.gguf = resolve("smollm2-135m").path
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.threads, self.log = threads, log

    def __enter__(self) -> "Server":
        cmd = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.gguf), "--model_alias", "smollm2-135m",
            "--host", "127.0.0.1", "--port", str(self.port), "--n_threads", str(self.threads),
            "--n_threads_batch", str(self.threads), "--n_ctx", "2048", "--flash_attn", "true",
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
        for _ in range(300):
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2):
                    return self
            except OSError:
                if self.proc.poll() is not None:
                    raise SystemExit(f"the server exited; see {self.log}") from None
                time.sleep(0.3)
        raise SystemExit(f"the server did not start; see {self.log}")

    def __exit__(self, *exc) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=20)


def menu_prompts(n: int):
    from liedar.behavioral.items.menus import FRAMINGS, SCENARIOS, vignettes
    from liedar.behavioral.runners.menus import build_prompt

    out = []
    for v in vignettes():
        for menu in SCENARIOS[v.scenario].menus():
            out.append(build_prompt(v, FRAMINGS["minimal"], menu))
            if len(out) == n:
                return out
    return out


def bench(args: argparse.Namespace) -> None:
    from liedar import models
    from liedar.models.served import load_served

    prompts = menu_prompts(args.calls)
    jobs = [(p, 1000 + i) for i, p in enumerate(prompts)]
    work = Path(tempfile.mkdtemp(prefix="bench_served."))
    rates: dict[str, float] = {}
    try:
        with Server(args.threads, work / "server.log") as srv:
            for conc in (1, 4, 8):
                cache = work / f"cache{conc}"
                with load_served(
                    "openai:smollm2-135m", base_url=srv.base_url, cache_dir=str(cache), concurrency=conc, timeout=300
                ) as b:
                    t0 = time.perf_counter()
                    b.prefetch(lambda bk: [bk.generate(p, max_tokens=12, temperature=0.7, seed=s) for p, s in jobs])
                    dt = time.perf_counter() - t0
                    assert b.usage_summary()["calls"] == len(jobs)
                rates[f"served c={conc}"] = len(jobs) / dt
                print(f"served, concurrency {conc}: {len(jobs)} calls in {dt:.1f} s = {len(jobs) / dt:.2f} calls/s")
        lm = models.load("smollm2-135m", backend="llamacpp", n_threads=args.threads)
        lm.generate(prompts[0], max_tokens=2)  # warm-up, as the server was warmed by its first call
        t0 = time.perf_counter()
        for p, s in jobs:
            lm.generate(p, max_tokens=12, temperature=0.7, seed=s)
        dt = time.perf_counter() - t0
        rates["in-process"] = len(jobs) / dt
        print(f"in-process llama.cpp: {len(jobs)} choices in {dt:.1f} s = {len(jobs) / dt:.2f} choices/s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average: {os.getloadavg()[0]:.2f}")
    base = rates["in-process"]
    print("ratio served/in-process: " + ", ".join(f"c={c}: {rates[f'served c={c}'] / base:.2f}" for c in (1, 4, 8)))


def _cell(e) -> str:
    return "-" if e is None else f"{e['value']:.2f} [{e['lo']:.2f}, {e['hi']:.2f}] n={e['n']}"


def print_tables(d: dict) -> None:
    for title, key in (("SARP pass, scenario x prompt", "sarp_by_scenario_framing"),
                       ("SARP pass, scenario x tier", "sarp_by_scenario_tier")):  # fmt: skip
        print(f"\n{title}")
        for row, cols in d[key].items():
            print(f"  {row:20s} " + "  ".join(f"{k}: {_cell(v)}" for k, v in cols.items()))
    pf = _cell(d["sarp_pass_with_parse_fail"])
    print(f"\nSARP pass overall: {_cell(d['sarp_pass'])} (parse-fails as violations: {pf})")
    print(f"RUM not rejected: {_cell(d['rum_pass'])}; exact RUM: {_cell(d['rum_exact_pass'])}")
    print(f"mixed-menu share: {_cell(d['mixed_menu_share'])}")
    print(f"IIA reversals by scenario: {d['iia_reversals_by_scenario']}")
    print(f"parse failures by scenario: {d['parse_fails_by_scenario']}")
    by_rum: dict[str, list] = {}
    for c in d["configs"]:
        if c.get("rum"):
            by_rum.setdefault(c["scenario"], []).append(not c["rum"].get("reject", False))
    print("RUM pass by scenario: " + ", ".join(f"{k}: {sum(v)}/{len(v)}" for k, v in by_rum.items()))
    top = sorted(d["configs"], key=lambda c: -c["iia_reversals"])[:5]
    print("top IIA reversals: " + ", ".join(f"{c['vignette_id']}/{c['framing']}: {c['iia_reversals']}" for c in top))


def study(args: argparse.Namespace) -> None:
    from liedar.behavioral.items.menus import FRAMINGS, SCENARIOS, vignettes
    from liedar.behavioral.runners import menus as runner
    from liedar.models.served import load_served, run_with

    framings = args.framings.split(",") if args.framings else list(FRAMINGS)
    keep: list = []
    for i, s in enumerate(SCENARIOS):  # rotate the starting tier so a fraction still spans the tiers
        vs = [v for v in vignettes() if v.scenario == s]
        shift = (2 * i) % len(vs)
        keep += (vs[shift:] + vs[:shift])[: args.per_scenario or None]
    ids = {v.vignette_id for v in keep}
    all_v = runner.vignettes
    runner.vignettes = lambda: [v for v in all_v() if v.vignette_id in ids]  # the chosen fraction only
    cache = Path(args.cache) if args.cache else Path(tempfile.mkdtemp(prefix="served_study."))
    with Server(args.threads, cache.parent / f"{cache.name}.server.log") as srv:
        with load_served(
            "openai:smollm2-135m", base_url=srv.base_url, cache_dir=str(cache), concurrency=args.concurrency,
            timeout=600, progress=True,
        ) as b:  # fmt: skip
            t0 = time.perf_counter()
            result = run_with(
                b,
                lambda bk: runner.run_menu_study(
                    bk, mode="stochastic", samples=args.samples, temperature=args.temperature, framings=framings,
                    progress=False, seed=args.seed,
                ),
            )  # fmt: skip
            wall = time.perf_counter() - t0
            usage = b.usage_summary()
    runner.vignettes = all_v
    d = result.to_dict()
    print_tables(d)
    n_cfg = len(d["configs"])
    calls = usage["calls"]
    print(f"\n{n_cfg} configurations ({len(keep)} vignettes x {len(framings)} framings) x 15 menus x K={args.samples}")
    print(f"usage: {json.dumps({k: v for k, v in usage.items() if k != 'journal'})}")
    print(
        f"wall time {wall:.0f} s, {calls} calls, {wall / max(calls, 1):.3f} s/call (load avg {os.getloadavg()[0]:.2f})"
    )
    per_call = wall / max(calls, 1)
    full = 40 * 15 * 20  # configurations per framing x menus x K=20, the study's real size
    print(f"full study (K=20): {full * 5} calls ({full * 4} short-answer + {full} chain-of-thought)")
    part = full * len(framings)
    print(
        f"extrapolated: the framings run here ({', '.join(framings)}) at full size = {part} calls "
        f"x {per_call:.3f} s/call = {part * per_call / 3600:.1f} h"
    )
    (cache / "study.json").write_text(json.dumps(d))
    print(f"results: {cache / 'study.json'}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", nargs="?", choices=("bench", "study"), default="bench")
    p.add_argument("--calls", type=int, default=24)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--per-scenario", type=int, default=0, help="study: vignettes per scenario (0: all 8)")
    p.add_argument("--framings", default="", help="study: comma list (default: all five)")
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache", default="", help="study: cache dir (re-run resumes from it)")
    args = p.parse_args()
    bench(args) if args.mode == "bench" else study(args)


if __name__ == "__main__":
    main()
