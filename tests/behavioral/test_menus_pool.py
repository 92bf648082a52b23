"""The menu study on two one-thread worker processes equals the study in one process,
configuration for configuration (the tiny random-weight model, exact mode: the argmax
choices and the exact law)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import numpy as np
import pytest

from liedar.behavioral.runners.menus import StudySettings, run_configs, run_configs_whole, run_menu_study, study_jobs
from liedar.behavioral.runners.menus_pool import run_menu_study_pooled, run_whole_study_pooled
from liedar.core.errors import InputError

SUBSET = dict(scenarios=["procurement"], tiers=["clear"], framings=["minimal", "aggressive"])


def _without_timings(data):
    """A result's data without its wall-clock fields (Houtman-Maks times its search)."""
    if isinstance(data, dict):
        return {k: _without_timings(v) for k, v in data.items() if k != "seconds"}
    if isinstance(data, list):
        return [_without_timings(v) for v in data]
    return data


def test_two_workers_give_the_one_process_study(tiny_model_dir):
    from liedar import models

    settings = StudySettings(mode="exact", temperature=0.7, seed=3)
    lm = models.load(str(tiny_model_dir), backend="transformers", n_threads=1, n_ctx=1024)
    alone = run_menu_study(lm, mode="exact", temperature=0.7, seed=3, progress=False, **SUBSET)
    pooled = run_menu_study_pooled(
        str(tiny_model_dir), workers=2, settings=settings, load_kwargs={"n_ctx": 1024}, progress=False, **SUBSET
    )
    assert len(pooled.configs) == len(alone.configs) == 4  # 2 clear vignettes x 2 framings
    assert [_without_timings(c.to_dict()) for c in pooled.configs] == [
        _without_timings(c.to_dict()) for c in alone.configs
    ]
    assert pooled.notes == alone.notes


def _parse_by_hash(text, shown, scenario):
    """A stand-in parser under which every reply counts: the tiny random model answers no
    menu, so with the study's own parser every sampled reply is a parse-fail and two runs
    with different replies would tabulate alike."""
    k = hashlib.sha256(text.encode()).digest()[0] % (len(shown) + 1)
    return shown[k] if k < len(shown) else None


def _same(a, b):
    """Equal results, NaN cells included, wall-clock fields left out."""
    dump = lambda cs: [json.dumps(_without_timings(c.to_dict()), sort_keys=True) for c in cs]  # noqa: E731
    return dump(a) == dump(b)


def test_the_whole_study_in_one_pass_equals_each_mode_run_alone(tiny_model_dir, monkeypatch):
    """`run_configs_whole` reads each menu's prompt once for both modes: its sampled study is
    the sampled mode's to the reply, its exact study the exact mode's up to the float32
    rounding of a padded batch (the same argmax choices); on two workers it is the same."""
    from liedar import models
    from liedar.behavioral.runners import menus as menus_runner

    lm = models.load(str(tiny_model_dir), backend="transformers", n_threads=1, n_ctx=1024)
    settings = StudySettings(samples=4, temperature=0.9, seed=3)
    jobs = study_jobs(**SUBSET)
    with monkeypatch.context() as m:
        m.setattr(menus_runner, "parse_reply", _parse_by_hash)
        exact, sampled, ways = run_configs_whole(lm, jobs, settings)
        exact_alone, _ = run_configs(lm, jobs, replace(settings, mode="exact"))
        sampled_alone, ways_alone = run_configs(lm, jobs, replace(settings, mode="stochastic"))
    assert ways == ways_alone == {"shared-prefix": 15 * len(jobs)}
    assert sum(c.rum is not None for c in sampled) == len(jobs)  # the replies were counted
    assert _same(sampled, sampled_alone)
    for one_pass, alone in zip(exact, exact_alone):
        assert one_pass.log == alone.log  # the argmax (deterministic) choices
        for law, law_alone, lp, lp_alone in zip(one_pass.law, alone.law, one_pass.logprobs, alone.logprobs):
            np.testing.assert_allclose(law, law_alone, rtol=1e-4, atol=1e-7)
            np.testing.assert_allclose(lp, lp_alone, atol=1e-4)
    exact, sampled, _ = run_configs_whole(lm, jobs, settings)  # the study's own parser: as the workers run it
    pooled = run_whole_study_pooled(
        str(tiny_model_dir), workers=2, settings=settings, load_kwargs={"n_ctx": 1024}, progress=False, **SUBSET
    )
    assert _same(pooled["stochastic"].configs, sampled) and _same(pooled["exact"].configs, exact)
    assert pooled["exact"].mode == "exact" and pooled["stochastic"].samples == 4


def test_a_pooled_study_refuses_a_served_backend_and_bad_arguments_before_starting_workers():
    with pytest.raises(InputError, match="local model"):
        run_menu_study_pooled("gpt-4o-mini", backend="openai")
    with pytest.raises(InputError, match="framing"):
        run_menu_study_pooled("smollm2-135m", framings=["nope"])
    with pytest.raises(InputError, match="workers"):
        run_menu_study_pooled("smollm2-135m", workers=0)
    with pytest.raises(InputError, match="samples >= 2"):
        run_whole_study_pooled("smollm2-135m", settings=StudySettings(samples=1))
    with pytest.raises(InputError, match="temperature > 0"):
        run_whole_study_pooled("smollm2-135m", settings=StudySettings(temperature=0.0))


def test_the_instrument_runs_on_workers_when_asked(tiny_model_dir):
    """`liedar behavioral menus --workers 2`: the instrument hands the study to the pool, which
    loads the model by the name the command was given, and the run records its workers."""
    from liedar import models
    from liedar.behavioral.runners.menus_instrument import MenuStudy

    lm = models.load(str(tiny_model_dir), backend="transformers", n_threads=1, n_ctx=1024)
    options = dict(mode="exact", temperature=0.7, tiers=["clear"], framings=["minimal"], order="shuffled")
    pooled = MenuStudy().run(lm, ["procurement"], seed=3, workers=2, pool_model=str(tiny_model_dir), **options)
    alone = MenuStudy().run(lm, ["procurement"], seed=3, **options)
    assert pooled.options["workers"] == 2 and "workers" not in alone.options
    assert [(c.log, c.law) for c in pooled.result.configs] == [(c.log, c.law) for c in alone.result.configs]


def test_workers_run_the_model_in_the_dtype_the_command_loaded(tiny_model_dir):
    """A bfloat16 study on workers is computed in bfloat16: each worker loads the model with
    the parent backend's dtype, so its laws are the one-process bfloat16 study's, not the
    float32 model's."""
    from liedar import models
    from liedar.behavioral.runners.menus_instrument import MenuStudy

    options = dict(mode="exact", temperature=0.7, tiers=["clear"], framings=["minimal"], order="shuffled")
    half = models.load(str(tiny_model_dir), backend="transformers", n_threads=1, n_ctx=1024, dtype="bfloat16")
    full = models.load(str(tiny_model_dir), backend="transformers", n_threads=1, n_ctx=1024)
    pooled = MenuStudy().run(half, ["procurement"], seed=3, workers=2, pool_model=str(tiny_model_dir), **options)
    alone = MenuStudy().run(half, ["procurement"], seed=3, **options)
    in_float32 = MenuStudy().run(full, ["procurement"], seed=3, **options)
    assert [c.law for c in pooled.result.configs] == [c.law for c in alone.result.configs]
    assert [c.law for c in pooled.result.configs] != [c.law for c in in_float32.result.configs]


def test_the_command_loads_the_dtype_it_is_given_and_records_it(tiny_model_dir, tmp_path, monkeypatch):
    """`liedar behavioral menus --dtype bfloat16` runs the model in bfloat16 (its laws are the
    bfloat16 model's) and says so in its output."""
    import json

    from liedar import models
    from liedar.behavioral.runners.menus_instrument import MenuStudy
    from liedar.cli import main

    real_load = models.load  # the tiny model's own context (256) is shorter than a menu prompt
    monkeypatch.setattr(models, "load", lambda name, **kw: real_load(name, **{**kw, "n_ctx": 1024}))
    out = tmp_path / "menus.json"
    argv = ["behavioral", "menus", "--model", str(tiny_model_dir), "--dtype", "bfloat16", "--mode", "exact",
            "--scenarios", "procurement", "--tiers", "clear", "--framings", "minimal", "--quiet",
            "--output", str(out)]  # fmt: skip
    assert main(argv) == 0
    data = json.loads(out.read_text())
    half = real_load(str(tiny_model_dir), backend="transformers", dtype="bfloat16", n_ctx=1024)
    options = dict(mode="exact", temperature=0.7, tiers=["clear"], framings=["minimal"], order="shuffled")
    want = MenuStudy().run(half, ["procurement"], seed=0, **options)
    assert data["dtype"] == "bfloat16"
    assert [c["law"] for c in data["result"]["configs"]] == [c.law for c in want.result.configs]
