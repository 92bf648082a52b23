"""Do llama.cpp and transformers read the same hidden states from qwen2.5-coder-1.5b?

liedar runs the capable rung two ways: llama.cpp on the Q4_K_M GGUF directly, and
transformers on the dequantized safetensors copy of the same file (bfloat16 where the CPU
computes it natively, float32 otherwise; `liedar.models.registry.native_dtype`). A probe
trained on one backend is only usable on the other if the states agree, so this script
reads the last-token state of 32 built-in statements at three depths through both and
prints the worst and mean cosine per layer (target: worst >= 0.999). ``--dtype`` adds
other transformers precisions to compare (each loads the model again).

    flock /tmp/liedar-cpu.lock .venv/bin/python scripts/capable_backends.py \
        --record docs/records/capable-backends.json

Writes the table and a record (command, date, CPU) with ``--record``.
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

import capable_record
import numpy as np

MODEL = "qwen2.5-coder-1.5b"


def statements(n: int) -> list[str]:
    from liedar.probes.datasets import builtin_set

    rows = builtin_set("capitals").inputs + builtin_set("elements").inputs
    step = max(1, len(rows) // n)
    return [str(x) for x in rows[::step][:n]]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def states(backend: str, texts: list[str], layers: list[int], threads: int, dtype: str | None) -> tuple:
    from liedar import models

    kw = {} if dtype is None else {"dtype": dtype}
    t0 = time.perf_counter()
    lm = models.load(MODEL, backend=backend, n_threads=threads, **kw)
    loaded = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = lm.hidden_states(texts, layers, "last")
    label = backend if backend == "llamacpp" else f"transformers ({lm.dtype_name})"
    took = time.perf_counter() - t0
    del lm
    gc.collect()
    return label, out, loaded, took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=32, help="statements (default 32)")
    ap.add_argument("--layers", default="7,14,21", help="layers, 1..28 = block outputs (default 7,14,21)")
    ap.add_argument("--dtype", action="append", default=[], help="also compare transformers in this dtype")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--record", type=Path, help="write the record JSON here")
    args = ap.parse_args()
    layers = [int(x) for x in args.layers.split(",")]
    texts = statements(args.n)
    label, ref, loaded, took = states("llamacpp", texts, layers, args.threads, None)
    print(f"{label}: loaded in {loaded:.1f} s, {len(texts)} statements in {took:.1f} s")
    rows = []
    for dtype in [None, *args.dtype]:
        other, got, loaded, took = states("transformers", texts, layers, args.threads, dtype)
        print(f"{other}: loaded in {loaded:.1f} s, {len(texts)} statements in {took:.1f} s")
        for j, layer in enumerate(layers):
            c = cosines(ref[:, j], got[:, j])
            rows.append(
                {"transformers": other, "layer": layer, "n": len(texts), "min": float(c.min()), "mean": float(c.mean())}
            )
    print(f"\n{'transformers':<28} {'layer':>5} {'n':>4} {'min cos':>9} {'mean cos':>9}  >= 0.999")
    for r in rows:
        ok = "yes" if r["min"] >= 0.999 else "NO"
        print(f"{r['transformers']:<28} {r['layer']:>5} {r['n']:>4} {r['min']:>9.5f} {r['mean']:>9.5f}  {ok}")
    if args.record:
        body = {"model": MODEL, "reference": "llamacpp", "position": "last", "rows": rows}
        print(f"record: {capable_record.write(args.record, body)}")


if __name__ == "__main__":
    main()
