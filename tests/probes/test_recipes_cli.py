"""`liedar probe train --recipe NAME` on the tiny random model."""

from __future__ import annotations

from pathlib import Path

import pytest

from liedar.cli import main
from liedar.probes.estimators import BuergerTTPD, LogisticProbe
from liedar.probes.io import load_probe
from liedar.probes.recipes import saved_probe_recipes


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _train(model: Path, out: Path, recipe: str) -> int:
    return main(
        ["probe", "train", "--model", str(model), "--data", "numbers", "--layer", "2", "--recipe", recipe]
        + ["--threads", "1", "--output", str(out)]
    )


@pytest.mark.parametrize("recipe,cls,position", [("ttpd", BuergerTTPD, "last"), ("mean-tokens", LogisticProbe, "mean")])
def test_train_with_a_recipe_saves_its_estimator_and_position(tiny_model_dir, cache, capsys, recipe, cls, position):
    out = cache / f"{recipe}.npz"
    assert _train(tiny_model_dir, out, recipe) == 0
    probe, meta = load_probe(out, expect_d_model=48)
    assert type(probe) is cls and meta.position == position and meta.extra["recipe"] == recipe
    assert capsys.readouterr().out.startswith(f"{recipe} probe on")


def test_recipes_a_saved_probe_cannot_carry_are_refused_in_one_line(tiny_model_dir, cache, capsys):
    assert "prompted" not in saved_probe_recipes() and "default" in saved_probe_recipes()
    assert _train(tiny_model_dir, cache / "p.npz", "prompted") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "template" in err[0] and "probe_leaderboard" in err[0]
    assert _train(tiny_model_dir, cache / "p.npz", "no-such-recipe") == 2
    assert "choose one of" in capsys.readouterr().err
    assert not (cache / "p.npz").exists()
