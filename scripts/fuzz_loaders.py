"""A longer run of the loader fuzzing (tests/hardening/test_fuzz_loaders.py): the same
properties, many more examples each.

    .venv/bin/python scripts/fuzz_loaders.py [EXAMPLES] [-k EXPR]    # default 5000 per loader

Why a script: the test suite runs a few hundred examples per loader so it stays bounded on
shared machines; a release (or a change to a loader) deserves a longer search. Every
example must give a valid result or liedar's one-line input error (`LiedarError`, or
argparse's error for ``--threshold FILE``); anything else fails with the smallest input
Hypothesis finds. Prints pytest's summary and Hypothesis' per-test statistics (examples
run, time); exits with pytest's code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    examples = argv[0] if argv and argv[0].isdigit() else "5000"
    rest = argv[1:] if argv and argv[0].isdigit() else argv
    env = {**os.environ, "LIEDAR_FUZZ_EXAMPLES": examples, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    cmd = [sys.executable, "-m", "pytest", "tests/hardening/test_fuzz_loaders.py", "-q", "-p", "no:cacheprovider"]
    cmd += ["--hypothesis-show-statistics", *rest]
    print(f"fuzzing every loader with {examples} examples each: {' '.join(cmd[2:])}", flush=True)
    return subprocess.call(cmd, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
