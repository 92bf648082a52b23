"""Probe persistence: round trip, refusal of another model or width, no pickle, atomic."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from liedar.core.errors import IncompatibleError, InputError
from liedar.probes.estimators import PROBE_NAMES, LogisticProbe, make_probe
from liedar.probes.io import ProbeMetadata, load_probe, save_probe


def fitted(name: str, d: int = 12):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, d))
    y = (X[:, 0] + 0.3 * rng.normal(size=120) > 0).astype(int)
    return make_probe(name).fit(X, y), X


def meta(d: int = 12) -> ProbeMetadata:
    return ProbeMetadata(
        "smollm2-135m",
        "f" * 64,
        layer=15,
        position="last",
        d_model=d,
        training_sets=["capitals"],
        metrics={"auroc": 0.9},
        threshold=0.1,
    )


@pytest.mark.parametrize("name", PROBE_NAMES)
def test_round_trip_gives_identical_scores(tmp_path: Path, name: str) -> None:
    probe, X = fitted(name)
    path = save_probe(tmp_path / "p.npz", probe, meta())
    loaded, m = load_probe(path, expect_fingerprint="f" * 64, expect_d_model=12)
    assert type(loaded) is type(probe)
    assert np.allclose(loaded.decision_function(X), probe.decision_function(X))
    assert np.allclose(loaded.direction_, probe.direction_)
    assert m.probe_type == type(probe).__name__ and m.positive_class == "false"
    assert m.layer == 15 and m.training_sets == ["capitals"] and m.threshold == 0.1
    assert loaded.get_params() == probe.get_params()


def test_file_holds_no_pickle(tmp_path: Path) -> None:
    probe, _ = fitted("logistic")
    path = save_probe(tmp_path / "p.npz", probe, meta())
    with np.load(path, allow_pickle=False) as data:  # would raise on object arrays
        header = json.loads(str(data["__liedar_probe__"]))
    assert header["metadata"]["liedar_version"]


def test_refuses_other_model_and_width(tmp_path: Path) -> None:
    probe, _ = fitted("mass-mean")
    path = save_probe(tmp_path / "p.npz", probe, meta())
    with pytest.raises(IncompatibleError, match="trained on model 'smollm2-135m'.*retrain"):
        load_probe(path, expect_fingerprint="0" * 64)
    with pytest.raises(IncompatibleError, match="width 12.*width 576"):
        load_probe(path, expect_d_model=576)


def test_refuses_mismatched_metadata_and_unfitted(tmp_path: Path) -> None:
    probe, _ = fitted("logistic")
    with pytest.raises(InputError, match="d_model=99"):
        save_probe(tmp_path / "p.npz", probe, meta(d=99))
    with pytest.raises(InputError, match="not fitted"):
        save_probe(tmp_path / "p.npz", LogisticProbe(), meta())


def test_not_a_probe_file(tmp_path: Path) -> None:
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(InputError, match="not a liedar probe"):
        load_probe(tmp_path / "other.npz")
    (tmp_path / "junk.npz").write_bytes(b"junk")
    with pytest.raises(InputError, match="not a liedar probe file"):
        load_probe(tmp_path / "junk.npz")
    with pytest.raises(InputError, match="not found"):
        load_probe(tmp_path / "missing.npz")


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    probe, _ = fitted("ttpd")
    save_probe(tmp_path / "p.npz", probe, meta())
    save_probe(tmp_path / "p.npz", probe, meta())  # overwrite in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.npz"]
