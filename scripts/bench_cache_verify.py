"""What verifying the cached model copy costs: cold-process loads of smollm2-135m
(transformers, 1 thread) with verification ("on") and with the manifest check replaced by
a no-op ("off"), alternated in fresh processes so both see the same machine load.

    .venv/bin/python scripts/bench_cache_verify.py [REPS]      # default 2 pairs

Prints each run's CPU and wall seconds, and last the ratio of mean CPU seconds on/off.
"""

import subprocess
import sys
import time


def child(mode: str) -> None:
    from liedar.models import registry

    if mode == "off":
        # the check's cost is what is measured; users get no switch to skip it
        registry._check_copy = lambda folder, digest: None  # noqa: SLF001
    t, c0 = time.perf_counter(), time.process_time()
    from liedar import models

    models.load("smollm2-135m", backend="transformers", n_threads=1)
    print(f"{time.process_time() - c0:.3f} {time.perf_counter() - t:.3f}")


def main(reps: int) -> None:
    cpu: dict[str, list[float]] = {"on": [], "off": []}
    for _ in range(reps):
        for mode in ("on", "off"):
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode], capture_output=True, text=True, check=True
            )
            c, w = map(float, out.stdout.split()[-2:])
            cpu[mode].append(c)
            print(f"{mode}: {c:.2f} s cpu, {w:.2f} s wall", flush=True)
    on, off = (sum(v) / len(v) for v in (cpu["on"], cpu["off"]))
    print(f"cpu ratio verified/unverified: {on / off:.3f} ({on:.2f} s vs {off:.2f} s, {reps} pairs)")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
