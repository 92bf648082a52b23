"""What every capable-rung script writes beside its numbers: the command, the date, the CPU.

Why a module: a timing or an agreement without the machine it was measured on cannot be
compared with another, so `scripts/capable_backends.py`, `scripts/bench_capable.py` and
`scripts/measure_ceilings.py` stamp their records the same way.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import sys
from pathlib import Path

FLAGS = ("avx2", "fma", "f16c", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
EMULATION = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")


def cpu() -> dict:
    """The CPU's model, core count, the SIMD flags that decide speed, and any ISA cap in force."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    caps = {k: os.environ[k] for k in EMULATION if k in os.environ}
    return {
        "model": model,
        "cores": os.cpu_count(),
        "flags": [f for f in FLAGS if f in flags],
        "isa_caps": caps,
        "mode": "AVX2 emulation" if caps else "native",
    }


def header() -> dict:
    return {
        "command": " ".join(shlex.quote(a) for a in [".venv/bin/python", *sys.argv]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu(),
    }


def write(path: Path, body: dict) -> Path:
    """Write ``{command, date, cpu, **body}`` as JSON atomically (a killed run leaves the old record)."""
    from liedar.core._util.atomic import write_bytes_atomic

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, (json.dumps({**header(), **body}, indent=1) + "\n").encode())
    return path
