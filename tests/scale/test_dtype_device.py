"""Device and dtype: refused combinations are one line; bf16 runs on the CPU, is close to fp32
but not equal, and has its own activation cache entries (never served an fp32 shard)."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.core.errors import InputError
from liedar.models.cache import activation_dir, cached_hidden_states
from liedar.models.hf import check_device_dtype, resolve_device

TEXTS = [f"Statement {i}: Paris is the capital of France {'and Rome ' * (i % 3)}." for i in range(12)]


def test_bad_device_and_dtype_are_one_line():
    import torch

    with pytest.raises(InputError, match="float16 cannot run on the CPU"):
        check_device_dtype("cpu", "float16")
    with pytest.raises(InputError, match="unknown dtype"):
        check_device_dtype("cpu", "int8")
    with pytest.raises(InputError, match="unknown device"):
        check_device_dtype("tpu", "float32")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no CUDA GPU"):
            check_device_dtype("cuda:0", "float32")
        assert resolve_device("auto") in ("cpu", "mps")
    else:
        assert resolve_device("auto") == "cuda"


@pytest.fixture(scope="module")
def fp32_bf16(tiny_model_dir):
    from liedar import models

    return (
        models.load(str(tiny_model_dir), n_threads=1),
        models.load(str(tiny_model_dir), n_threads=1, dtype="bfloat16"),
    )


def test_bf16_is_close_but_not_fp32_and_cached_apart(fp32_bf16, tmp_path):
    fp32, bf16 = fp32_bf16
    assert (fp32.dtype_name, bf16.dtype_name) == ("float32", "bfloat16")
    assert fp32.fingerprint == bf16.fingerprint  # same weights: only the dtype tells them apart
    layers = [1, 2, 3]
    a = cached_hidden_states(fp32, TEXTS, layers, root=tmp_path, shard_size=4)
    stats: dict = {}
    b = cached_hidden_states(bf16, TEXTS, layers, root=tmp_path, shard_size=4, stats=stats)
    assert stats["computed"] == len(TEXTS), "a bf16 run must not be served the fp32 shards"
    assert b.dtype == np.float32 and not np.array_equal(a, b)
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    assert cos.min() > 0.98, cos.min()  # bf16 keeps ~3 significant digits
    assert activation_dir(fp32, "last", tmp_path) != activation_dir(bf16, "last", tmp_path)
    assert activation_dir(bf16, "last", tmp_path).parent.name.endswith("-bfloat16")
    # each is reused by itself
    again: dict = {}
    np.testing.assert_array_equal(
        cached_hidden_states(bf16, TEXTS, layers, root=tmp_path, shard_size=4, stats=again), b
    )
    assert again == {"computed": 0, "reused": len(TEXTS)}
