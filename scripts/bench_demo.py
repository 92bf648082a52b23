"""Each step of `liedar demo` timed on the direct path and through the scoring engine, in one run.

    .venv/bin/python scripts/bench_demo.py [--full] [--model smollm2-135m] [--backend transformers]

The demo's steps (``--quick`` sizes unless ``--full``; the validation matrix is left out: it
runs the same instruments on the organisms) run twice in one process on one loaded model:

* **direct**: every step asks the bare backend, no engine, no model-call cache;
* **engine**: every step asks its `liedar.models.scoring.ScoringEngine` over an empty
  model-call cache in a temporary folder (cold: every distinct answer computed and stored).

``--paths engine direct`` runs the engine path first (its time is the budget's number on a
large model, where both paths take long); a path left out prints no ratio.

Both paths start from an empty cache folder of their own (the probes' activations are
computed on each), the model loaded once before either and not timed.

Per step it prints both wall times, engine/direct, and whether the two saved results are
the same (every field but wall-clock timings); then the CPU's model name and its vector
flags (avx2, avx512f, avx512_bf16, amx) and the torch / oneDNN ISA switches in the
environment, so a number is never read without the CPU it was measured on. Run it under
the CPU lock (it takes about twice a cold ``demo --quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

ISA_ENV = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS", "OMP_NUM_THREADS")
FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")


def cpu() -> dict[str, Any]:
    """The CPU's model name, which of `FLAGS` it has, and the ISA switches set in the environment."""
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    name = re.search(r"model name\s*:\s*(.+)", text)
    flags = set(re.search(r"flags\s*:\s*(.+)", text).group(1).split()) if "flags" in text else set()
    return {
        "model": name.group(1).strip() if name else "unknown",
        "cores": os.cpu_count(),
        "flags": [f for f in FLAGS if f in flags],
        "env": {k: os.environ[k] for k in ISA_ENV if k in os.environ},
    }


def untimed(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: untimed(v) for k, v in d.items() if k != "seconds" and not k.endswith("_seconds")}
    return [untimed(v) for v in d] if isinstance(d, list) else d


def run_steps(ctx: Any, steps: Any, hashes: dict[str, str], say: Any) -> dict[str, tuple[float, str, Any]]:
    """Each step run once on ``ctx`` (saved, so the steps after it can read it): seconds, status, raw."""
    from liedar.pipeline.context import StepUnavailable
    from liedar.report.store import StepResult, save_step

    out: dict[str, tuple[float, str, Any]] = {}
    for st in steps:
        ctx.begin_step()
        t0 = time.perf_counter()
        try:
            section, raw = st.run(ctx)
            status = "ok"
        except StepUnavailable as exc:
            section, raw, status = None, {"reason": str(exc)}, "not_run"
        seconds = time.perf_counter() - t0
        if status == "ok":
            save_step(
                ctx.results_dir, StepResult(st.name, hashes[st.name], "ok", ctx.model_info(), section, "", 1.0, raw)
            )
        out[st.name] = (seconds, status, json.loads(json.dumps(untimed(raw), default=str)))
        say(f"  {st.name}: {status} in {seconds:.1f} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the demo's full sizes (default: --quick's)")
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", default="transformers", choices=("transformers", "llamacpp"))
    ap.add_argument(
        "--paths",
        nargs="+",
        choices=("direct", "engine"),
        default=["direct", "engine"],
        help="which paths to run, in this order (default: direct engine)",
    )
    ap.add_argument("--json", type=Path, help="also write the numbers here")
    args = ap.parse_args()

    from liedar.pipeline.context import DemoConfig, DemoContext, step_hashes
    from liedar.pipeline.demo_steps import demo_steps

    quick = not args.full
    steps = demo_steps(quick)
    work = Path(tempfile.mkdtemp(prefix="bench-demo-"))
    direct_cfg = DemoConfig(args.model, backend=args.backend, quick=quick, output=work / "direct", call_cache=False)
    engine_cfg = DemoConfig(args.model, backend=args.backend, quick=quick, output=work / "engine")
    direct = DemoContext(direct_cfg)
    t = time.perf_counter()
    bare = direct.raw_model()
    print(f"model loaded in {time.perf_counter() - t:.1f} s (not counted)")
    direct.model = lambda: bare  # the direct path: the bare backend, no engine, no cache
    engine = DemoContext(engine_cfg)
    engine._backend = bare  # noqa: SLF001 (the same loaded model: only the path differs)
    timed: dict[str, dict[str, tuple[float, str, Any]]] = {}
    for path in args.paths:
        os.environ["LIEDAR_CACHE"] = str(work / f"{path}-cache")  # empty: activations and answers computed
        print("direct path:" if path == "direct" else "engine path (empty model-call cache):")
        ctx, cfg = (direct, direct_cfg) if path == "direct" else (engine, engine_cfg)
        timed[path] = run_steps(ctx, steps, step_hashes(cfg, steps), print)
    rows = []
    if len(timed) == 2:
        a, b = timed["direct"], timed["engine"]
        print(f"\n{'step':<14} {'direct s':>9} {'engine s':>9} {'engine/direct':>14}  same result")
        for name in a:
            (ta, sa, ra), (tb, sb, rb) = a[name], b[name]
            if sa != "ok" and sb != "ok":
                continue
            same = ra == rb
            rows.append(
                {
                    "step": name,
                    "direct_s": round(ta, 2),
                    "engine_s": round(tb, 2),
                    "ratio": round(tb / ta, 3),
                    "same": same,
                }
            )
            print(f"{name:<14} {ta:9.1f} {tb:9.1f} {tb / ta:14.3f}  {'yes' if same else 'NO'}")
        total_a = sum(r["direct_s"] for r in rows)
        total_b = sum(r["engine_s"] for r in rows)
        print(f"{'total':<14} {total_a:9.1f} {total_b:9.1f} {total_b / total_a:14.3f}")
    else:
        ((path, one),) = timed.items()
        rows = [{"step": n, f"{path}_s": round(t, 2), "status": st} for n, (t, st, _) in one.items()]
        print(f"{path} path total {sum(t for t, st, _ in one.values() if st == 'ok'):.1f} s (no ratio: one path run)")
    info = cpu()
    print(f"CPU: {info['model']}, {info['cores']} cores, flags {' '.join(info['flags'])}; env {info['env'] or 'none'}")
    print(f"load average {os.getloadavg()[0]:.2f}")
    if args.json:
        record = {
            "command": "scripts/bench_demo.py" + (" --full" if args.full else "") + " --paths " + " ".join(args.paths),
            "model": args.model,
            "backend": args.backend,
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "cpu": info,
            "steps": rows,
            "load_average": round(os.getloadavg()[0], 2),
        }
        args.json.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
