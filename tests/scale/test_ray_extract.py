"""Ray extraction on a local 2-CPU cluster: bit-equal to the single-process path, the same
cache in both directions, a killed worker retried without partial or duplicate shards, an
interrupted run resumed, bad input refused in one line. One cluster for the module."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import numpy as np
import pytest

from liedar.core.errors import InputError
from liedar.models.cache import activation_dir, cached_hidden_states

pytest.importorskip("ray")

TEXTS = [f"Statement {i}: Paris is the capital of France {'and Rome ' * (i % 4)}." for i in range(40)]
LAYERS = [1, 3]
SHARD = 8
KW = {"n_threads": 1}


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    from liedar import models

    return models.load(str(tiny_model_dir), **KW)


def _shards(root: Path, lm) -> list[Path]:
    return sorted(activation_dir(lm, "last", root).rglob("*"))


def _run(model_dir, texts, root, **kw):
    from liedar.models.distributed import ray_hidden_states

    stats: dict = {}
    out = ray_hidden_states(
        str(model_dir), texts, LAYERS, "last", load_kwargs=KW, root=root, shard_size=SHARD, stats=stats, **kw
    )
    return out, stats


def test_ray_equals_local_bit_for_bit_and_caches_are_shared(cluster, lm, tiny_model_dir, tmp_path):
    local = cached_hidden_states(lm, TEXTS, LAYERS, root=tmp_path / "a", shard_size=SHARD)
    got, stats = _run(tiny_model_dir, TEXTS, tmp_path / "b", concurrency=2)
    np.testing.assert_array_equal(got, local)
    assert stats["computed"] == len(TEXTS) and stats["shards"] == 5
    assert stats["model"]["fingerprint"] == lm.fingerprint and stats["model"]["dtype"] == "float32"
    # Ray wrote exactly the files the local path writes, byte-identical content names
    names_a = [p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.npz")]
    names_b = [p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*.npz")]
    assert sorted(names_a) == sorted(names_b) and len(names_a) == 5 * len(LAYERS)
    # local after Ray reuses everything ...
    st: dict = {}
    np.testing.assert_array_equal(
        cached_hidden_states(lm, TEXTS, LAYERS, root=tmp_path / "b", shard_size=SHARD, stats=st), local
    )
    assert st == {"computed": 0, "reused": len(TEXTS)}
    # ... and Ray after local too
    again, st2 = _run(tiny_model_dir, TEXTS, tmp_path / "a", concurrency=1)
    np.testing.assert_array_equal(again, local)
    assert st2["computed"] == 0 and st2["reused"] == len(TEXTS)


def test_killed_worker_is_retried_and_interrupted_run_resumes(cluster, lm, tiny_model_dir, tmp_path):
    root = tmp_path / "cache"
    # an "interrupted" run: only the first 3 of 5 shards landed
    _run(tiny_model_dir, TEXTS[:24], root, concurrency=1)
    marker = tmp_path / "killed"
    got, stats = _run(tiny_model_dir, TEXTS, root, concurrency=1, _fault_marker=str(marker))
    assert marker.exists(), "the fault was never injected: the test would prove nothing"
    assert stats["reused"] == 24 and stats["computed"] == 16  # resumed: only the 2 missing shards computed
    np.testing.assert_array_equal(got, cached_hidden_states(lm, TEXTS, LAYERS, root=tmp_path / "ref", shard_size=SHARD))
    files = _shards(root, lm)
    npz = [p for p in files if p.suffix == ".npz"]
    assert len(npz) == 5 * len(LAYERS) == len({p.name + p.parent.name for p in npz})  # no duplicates
    assert [p for p in files if p.is_file() and p.suffix != ".npz"] == []  # no partial/temp files
    st: dict = {}
    cached_hidden_states(lm, TEXTS, LAYERS, root=root, shard_size=SHARD, stats=st)
    assert st == {"computed": 0, "reused": len(TEXTS)}  # every shard verifies


def test_bad_input_is_one_line(cluster, lm, tiny_model_dir, tmp_path):
    from liedar.models.distributed import check_address

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.perf_counter()
    with pytest.raises(InputError, match="no Ray head answers"):
        check_address(f"127.0.0.1:{port}", timeout=1.0)
    assert time.perf_counter() - started < 5
    with pytest.raises(InputError, match="--num-gpus 1: the Ray cluster has 0 GPU"):
        _run(tiny_model_dir, TEXTS[:4], tmp_path, num_gpus=1)
    blocked = tmp_path / "a-file"  # a cache root nobody can create folders in (root ignores chmod)
    blocked.write_text("")
    with pytest.raises(InputError, match="not writable"):
        _run(tiny_model_dir, TEXTS[:4], blocked)
    with pytest.raises(InputError, match="layer"):  # raised inside the actor, surfaced as one line
        from liedar.models.distributed import ray_hidden_states

        ray_hidden_states(str(tiny_model_dir), TEXTS[:4], [99], load_kwargs=KW, root=tmp_path / "c")


def test_a_local_cluster_is_refused_outside_a_loopback_only_namespace(monkeypatch):
    """Ray binds every interface: liedar starts a local cluster only where every interface is
    loopback (a private network namespace), and says how to get one otherwise."""
    pytest.importorskip("ray")
    import liedar.models.distributed as distributed
    from liedar.core.errors import InputError

    monkeypatch.setattr(distributed, "loopback_only", lambda: False)
    monkeypatch.setattr(
        distributed, "_require_ray", lambda: type("R", (), {"is_initialized": staticmethod(lambda: False)})
    )
    with pytest.raises(InputError, match="private network namespace"):
        with distributed.ray_session(num_cpus=1):
            pass
