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


def test_the_default_recipe_adds_the_built_in_sets_and_scores_only_the_given_data(tiny_model_dir, cache, capsys):
    """No --recipe, --probe or --position: mix-builtin (the leaderboard's best single-statement
    recipe). The built-in sets the data lack join every fit; the CV AUROC is on the data alone."""
    from liedar.probes.datasets import builtin_set

    out = cache / "default.npz"
    args = ["probe", "train", "--model", str(tiny_model_dir), "--data", "numbers", "capitals", "--layer", "2"]
    assert main(args + ["--threads", "1", "--output", str(out)]) == 0
    probe, meta = load_probe(out, expect_d_model=48)
    assert type(probe) is LogisticProbe and meta.position == "last" and meta.extra["recipe"] == "mix-builtin"
    added = sum(len(builtin_set(s)) for s in ("elements", "animals"))  # capitals and numbers were given
    assert meta.metrics["n_mix"] == added
    assert meta.metrics["n_train"] == len(builtin_set("numbers")) + len(builtin_set("capitals"))
    assert meta.training_sets == ["numbers", "capitals", "built-in mix: animals, elements"]
    assert f"(+{added} built-in statements" in capsys.readouterr().out


def test_dialogues_default_to_the_plain_recipe_and_refuse_the_mix(tiny_model_dir, cache, capsys):
    base = ["probe", "train", "--model", str(tiny_model_dir), "--data", "instructed", "--layer", "2", "--threads", "1"]
    out = cache / "lie.npz"
    assert main(base + ["--output", str(out)]) == 0
    _, meta = load_probe(out, expect_d_model=48)
    assert meta.extra["recipe"] == "default" and "n_mix" not in meta.metrics
    capsys.readouterr()
    assert main(base + ["--recipe", "mix-builtin", "--output", str(cache / "x.npz")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--recipe default" in err[0]
    assert not (cache / "x.npz").exists()


def test_builtin_mix_skips_given_sets_and_other_polarities():
    from liedar.probes.datasets import builtin_set
    from liedar.probes.recipes import builtin_mix, get_recipe

    caps = builtin_set("capitals")
    aff = caps.subset(caps.polarity == "affirmative")
    mix = builtin_mix(get_recipe("mix-builtin"), aff)
    assert set(mix.topic) == {"elements", "animals", "numbers"} and set(mix.polarity) == {"affirmative"}
    assert builtin_mix(get_recipe("default"), aff) is None
