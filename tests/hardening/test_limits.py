"""Counts far above what the work can use are refused while parsing, naming the bound, before
any model loads: a menu study's samples and bootstrap draws, and every command's worker
processes (at most twice the machine's cores). A pool never starts more processes than that,
nor more than the pieces it is given (an audit's models). Each test is bounded: the argv cases
load nothing, and the one pool test starts at most two one-thread processes."""

from __future__ import annotations

import os

import pytest
from hardening_support import snapshot

from liedar.cli import main
from liedar.core._util.workers import WorkerPool, max_workers

CORES_X2 = 2 * (os.cpu_count() or 1)

MENUS = ["behavioral", "menus", "--model", "smollm2-135m", "--scenarios", "support_triage", "--tiers", "clear"]
CASES = [
    ("menus-samples-1e9", [*MENUS, "--mode", "stochastic", "--samples", "1000000000"], "above 10,000"),
    ("menus-bootstrap-1e12", [*MENUS, "--mode", "stochastic", "--bootstrap", str(10**12)], "above 100,000"),
    ("menus-workers-1e9", [*MENUS, "--workers", "1000000000"], f"above {CORES_X2:,}"),
    ("audit-workers-1e9", ["audit", "--model", "smollm2-135m", "--workers", "1000000000"], f"above {CORES_X2:,}"),
    ("validate-workers-1e9", ["validate", "--quick", "--workers", "1000000000"], f"above {CORES_X2:,}"),
    ("demo-workers-1e9", ["demo", "--workers", "1000000000", "--output", "rep"], f"above {CORES_X2:,}"),
]


@pytest.mark.parametrize(("argv", "names"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_count_far_above_the_work_is_refused_naming_its_bound(argv, names, workdir, no_model, capsys):
    before = snapshot(workdir)
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("liedar: error: ") and names in lines[0], lines
    assert "give at most" in lines[0] and snapshot(workdir) == before


def test_the_largest_worker_count_is_taken(workdir, no_model, capsys):
    """The bound itself is not refused: the run goes on to load the model (the guard stops it)."""
    from hardening_support import ModelLoaded

    with pytest.raises(ModelLoaded):
        main([*MENUS, "--workers", str(max_workers()), "--limit", "1"])


def test_a_pool_starts_no_more_processes_than_its_pieces_or_twice_the_cores():
    assert WorkerPool(10**9).workers == CORES_X2
    assert WorkerPool(10**9, pieces=3).workers == min(3, CORES_X2)
    assert WorkerPool(1, pieces=0).workers == 1
    with WorkerPool(10**9, pieces=2) as pool:
        pids = {f.result(timeout=120) for f in [pool.submit(os.getpid) for _ in range(6)]}
    assert 1 <= len(pids) <= 2 and os.getpid() not in pids
