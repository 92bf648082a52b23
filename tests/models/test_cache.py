"""Activation cache: results equal direct extraction, resume after SIGKILL, no foreign reuse."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from liedar.models.cache import cached_hidden_states

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [f"Statement number {i}: Paris is the capital of France {'and Rome ' * (i % 4)}." for i in range(40)]


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    import torch

    from liedar import models

    torch.set_num_threads(1)
    return models.load(str(tiny_model_dir), n_threads=1)


def _count_forwarded(backend, monkeypatch) -> list[int]:
    seen: list[int] = []
    real = backend._forward

    def counting(batch, layers):
        seen.append(len(batch))
        return real(batch, layers)

    monkeypatch.setattr(backend, "_forward", counting)
    return seen


def test_cache_equals_direct_and_reuses(lm, tmp_path, monkeypatch):
    direct = lm.hidden_states(TEXTS[:10], [1, 3], "mean")
    stats: dict = {}
    first = cached_hidden_states(lm, TEXTS[:10], [1, 3], "mean", root=tmp_path, shard_size=4, stats=stats)
    np.testing.assert_allclose(first, direct, rtol=1e-4, atol=1e-4)
    assert stats == {"computed": 10, "reused": 0}
    seen = _count_forwarded(lm, monkeypatch)
    again = cached_hidden_states(lm, TEXTS[:10], [3, 1], "mean", root=tmp_path, shard_size=4, stats=stats)
    np.testing.assert_array_equal(again, first[:, ::-1])
    assert seen == [] and stats == {"computed": 0, "reused": 10}
    # a new layer computes only that layer
    cached_hidden_states(lm, TEXTS[:10], [1, 2], "mean", root=tmp_path, shard_size=4)
    assert sum(seen) == 10


def test_corrupt_shard_is_recomputed_not_served(lm, tmp_path):
    want = cached_hidden_states(lm, TEXTS[:8], [2], root=tmp_path, shard_size=4)
    files = sorted(tmp_path.rglob("*.npz"))
    files[0].write_bytes(files[0].read_bytes()[:100])
    np.testing.assert_allclose(
        cached_hidden_states(lm, TEXTS[:8], [2], root=tmp_path, shard_size=4), want, rtol=1e-4, atol=1e-4
    )


def test_cache_from_another_model_is_never_served(lm, tmp_path, tiny_model_dir):
    from tiny_model import build_tiny_model

    from liedar import models

    other = models.load(str(build_tiny_model(tmp_path / "other", seed=1)), n_threads=1)
    assert other.fingerprint != lm.fingerprint
    ours = cached_hidden_states(lm, TEXTS[:4], [2], root=tmp_path / "c", shard_size=4)
    # plant our files where the other model's cache would live
    src = next((tmp_path / "c" / "activations").iterdir())
    dst = src.parent / f"{other.fingerprint[:24]}-{other.kind}"
    os.rename(src, dst)
    theirs = cached_hidden_states(other, TEXTS[:4], [2], root=tmp_path / "c", shard_size=4)
    np.testing.assert_allclose(theirs, other.hidden_states(TEXTS[:4], [2]), rtol=1e-4, atol=1e-4)
    assert not np.allclose(theirs, ours)


def test_sigkill_mid_extraction_resumes_without_recomputing(lm, tmp_path, tiny_model_dir, monkeypatch):
    cache = tmp_path / "cache"
    script = textwrap.dedent(
        f"""
        import time, torch, models
        from liedar.models.cache import cached_hidden_states
        torch.set_num_threads(1)
        lm = models.load({str(tiny_model_dir)!r}, n_threads=1)
        real = lm._forward
        def slow(batch, layers):
            time.sleep(0.4)
            return real(batch, layers)
        lm._forward = slow
        cached_hidden_states(lm, {TEXTS!r}, [1, 3], "last", root={str(cache)!r}, shard_size=4)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=ROOT)
    deadline = time.time() + 120
    while time.time() < deadline and len(list(cache.rglob("layer-3/*.npz"))) < 3:
        assert proc.poll() is None, "extraction finished or crashed before it could be killed"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list(cache.rglob("layer-3/*.npz")))
    assert 3 <= done < 10
    for f in cache.rglob("*.npz"):  # whatever is in place is whole
        with np.load(f, allow_pickle=False) as npz:
            assert npz["hidden"].shape == (4, lm.d_model)
    seen = _count_forwarded(lm, monkeypatch)
    stats: dict = {}
    result = cached_hidden_states(lm, TEXTS, [1, 3], "last", root=cache, shard_size=4, stats=stats)
    assert stats["reused"] >= 4 * (done - 1)  # layer-1 of the last shard may not have landed
    assert sum(seen) == stats["computed"] == 40 - stats["reused"]
    np.testing.assert_allclose(result, lm.hidden_states(TEXTS, [1, 3], "last"), rtol=1e-4, atol=1e-4)
