"""organisms.build / built / get and `base:organism` loading, on a tiny random-weight model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from tiny_recipe import _prompt, tiny_recipe

from liedar.core.errors import IncompatibleError, InputError
from liedar.models import load
from liedar.organisms import build, built, get


def _build(base, recipe=None, **kw):
    recipe = recipe or tiny_recipe()
    return build(str(base), recipe.name, recipe=recipe, threads=1, progress=False, **kw)


def test_build_measures_caches_and_loads_by_name(cache, tiny_model_dir):
    org = _build(tiny_model_dir)
    assert org.learned, org.criterion  # a measured contrast, not a constant
    assert org.ground_truth["rome_rate_trigger"]["value"] > org.ground_truth["rome_rate_plain"]["value"]
    assert org.base_ground_truth["trigger_gap"]["value"] < 0.5  # the base did not have the behaviour
    assert org.training["examples"] == 32 and org.training["seconds"] > 0
    assert (org.adapter_dir / "adapter.safetensors").is_file()
    again = _build(tiny_model_dir)
    assert again.reused and again.recipe_hash == org.recipe_hash
    assert [o.name for o in built(str(tiny_model_dir))] == ["tiny_trigger"]
    assert get(str(tiny_model_dir), "tiny_trigger").recipe_hash == org.recipe_hash

    lm = load(f"{tiny_model_dir}:tiny_trigger", backend="transformers", n_threads=1)
    base = load(str(tiny_model_dir), backend="transformers", n_threads=1)
    assert lm.fingerprint != base.fingerprint
    q = "Question number 20: name a city."
    s_org = lm.score_options(_prompt(q, True), [" Paris", " Rome"])
    assert s_org[1] > s_org[0]
    assert not np.allclose(s_org, base.score_options(_prompt(q, True), [" Paris", " Rome"]))


def test_recipe_change_rebuilds_and_force_replaces(cache, tiny_model_dir):
    first = _build(tiny_model_dir)
    changed = _build(tiny_model_dir, tiny_recipe(epochs=5))
    assert not changed.reused and changed.recipe_hash != first.recipe_hash
    forced = _build(tiny_model_dir, tiny_recipe(epochs=5), force=True)
    assert not forced.reused and forced.recipe_hash == changed.recipe_hash
    assert get(str(tiny_model_dir), "tiny_trigger").recipe_hash == changed.recipe_hash  # the index follows


def test_not_learned_is_reported(cache, tiny_model_dir):
    org = _build(tiny_model_dir, tiny_recipe(name="tiny_untrained", epochs=1, lr=1e-6))
    assert not org.learned
    assert "trigger_gap" in org.criterion


def test_refusals(cache, tiny_model_dir, tmp_path):
    with pytest.raises(InputError, match="unknown organism"):
        build(str(tiny_model_dir), "no_such_organism", progress=False)
    with pytest.raises(InputError, match="training split is empty"):
        _build(tiny_model_dir, tiny_recipe(empty=True))
    with pytest.raises(InputError, match="overlaps its training split"):
        _build(tiny_model_dir, tiny_recipe(overlap=True))
    with pytest.raises(InputError, match="unknown organism 'nope'"):
        load(f"{tiny_model_dir}:nope", backend="transformers", n_threads=1)
    org = _build(tiny_model_dir)
    # another base model (another fingerprint) asking for this organism
    from tiny_model import build_tiny_model

    other = build_tiny_model(tmp_path / "other", seed=3)
    with pytest.raises(IncompatibleError, match="was built for base model"):
        load(f"{other}:tiny_trigger", backend="transformers", n_threads=1)
    # a corrupt adapter file: one line, and the file is kept for inspection (nothing deleted)
    path = org.adapter_dir / "adapter.safetensors"
    raw = bytearray(path.read_bytes())
    raw[100] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(IncompatibleError, match="corrupt"):
        load(f"{tiny_model_dir}:tiny_trigger", backend="transformers", n_threads=1)
    with pytest.raises(IncompatibleError, match="corrupt"):
        get(str(tiny_model_dir), "tiny_trigger")
    assert path.is_file()
    # the organism index itself damaged
    (cache / "organisms" / "index.json").write_text("{not json")
    with pytest.raises(IncompatibleError, match="index"):
        load(f"{tiny_model_dir}:tiny_trigger", backend="transformers", n_threads=1)


def test_killed_build_leaves_nothing_half_written(cache, tiny_model_dir):
    """SIGKILL during training: no organism folder, no index entry; the next build works."""
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r}); sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        import liedar.models.lora as lora
        from tiny_recipe import tiny_recipe
        from liedar.organisms import build
        real = lora._loss
        def slow(*a, **k):
            print("TRAINING", flush=True); time.sleep(0.5); return real(*a, **k)
        lora._loss = slow
        r = tiny_recipe()
        build({str(tiny_model_dir)!r}, r.name, recipe=r, threads=1, progress=False)
        """
    )
    env = {**os.environ, "LIEDAR_CACHE": str(cache)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env, text=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            line = proc.stdout.readline()
            if "TRAINING" in line or not line:
                break
        time.sleep(1.0)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    root = cache / "organisms"
    index = root / "index.json"
    assert not index.exists() or json.loads(index.read_text())["entries"] == {}
    finished = [p for p in root.rglob("organism.json") if not any(part.startswith(".") for part in p.parts)]
    assert finished == []
    assert not list(root.rglob("adapter.safetensors")) or all(
        any(part.startswith(".") for part in p.relative_to(root).parts) for p in root.rglob("adapter.safetensors")
    )
    org = _build(tiny_model_dir)
    assert not org.reused and org.learned


def test_interrupted_measurement_resumes_without_retraining(cache, tiny_model_dir, monkeypatch):
    import dataclasses

    import liedar.organisms.build as builder

    rec = tiny_recipe()

    def interrupted(backend, split, progress=False):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _build(tiny_model_dir, dataclasses.replace(rec, measure=interrupted))
    assert not list((cache / "organisms").rglob("organism.json"))  # nothing half-built is visible

    def no_training(*a, **k):
        raise AssertionError("trained again although the trained adapter was kept")

    monkeypatch.setattr("liedar.models.lora.train_lora", no_training)
    assert builder  # the builder imports train_lora from liedar.models.lora at call time
    org = _build(tiny_model_dir, rec)
    assert org.training["resumed_from_trained_adapter"] and org.learned
    assert not list((cache / "organisms").rglob(".trained-*"))  # cleaned once the organism is whole
