"""The whole `validate()` pipeline on the tiny random-weight model and two tiny organisms
(one that learned its trigger, one that did not), in a private cache: every detector has a
cell for every model, the unlearned organism is never ground truth, the matrix file
validates against the schema, and a second run resumes from the saved files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "organisms"))

SIZES = dict(
    gap_items=12,
    gap_protocols=("zero_shot_letter", "cloze_norm"),
    finetune_demos=4,
    finetune_epochs=1,
    consistency_items=6,
    shuffles=2,
    paraphrases=2,
    noise_items=4,
    noise_sigmas=(0.0, 0.01),
    noise_seeds=2,
    sycophancy_claims=3,
    honesty_items=4,
    lie_claims=3,
    lie_tokens=4,
    sycophancy_choice_items=4,
    honesty_choice_products=2,
)


@pytest.fixture(scope="module")
def run(tmp_path_factory, tiny_model_dir):
    from tiny_recipe import tiny_recipe

    from liedar import organisms
    from liedar.pipeline.validate import ValidateConfig, validate

    mp = pytest.MonkeyPatch()
    mp.setenv("LIEDAR_CACHE", str(tmp_path_factory.mktemp("cache")))
    base = str(tiny_model_dir)
    learned = organisms.build(base, "tiny_trigger", recipe=tiny_recipe(), threads=1, progress=False)
    unlearned = organisms.build(
        base, "tiny_untrained", recipe=tiny_recipe(name="tiny_untrained", epochs=1, lr=1e-6), threads=1, progress=False
    )
    assert learned.learned and not unlearned.learned
    out_dir = tmp_path_factory.mktemp("out")
    config = ValidateConfig(base, "transformers", out_dir, True, 0, 1, None, ())
    first = validate(config, say=lambda m: None, sizes=SIZES)
    second = validate(config, say=lambda m: None, sizes=SIZES)
    yield base, first, second, out_dir
    mp.undo()


def test_every_detector_has_a_cell_for_every_model(run):
    from liedar.pipeline.validate_detectors import DETECTORS

    base, first, *_ = run
    m = first.matrix
    assert m.models == [base, f"{base}:tiny_trigger", f"{base}:tiny_untrained"]
    for model in m.models:
        for d in DETECTORS:
            c = m.cell(d, model)
            assert c is not None, (d, model)
            assert (c.effect is None) == (c.not_computable is not None)
    # the MCQ detectors produce numbers on any model that scores options
    assert m.cell("sandbagging_gap", base).effect is not None
    assert m.cell("weight_noise", base).effect is not None  # transformers backend: noise runs
    assert m.cell("ceilings", base).effect is not None  # fine-tuning elicitation ran


def test_truth_follows_targets_and_learning(run):
    base, first, *_ = run
    m = first.matrix
    assert m.cell("sandbagging_gap", f"{base}:tiny_trigger").truth is True  # its recipe targets the gap
    assert m.cell("sycophancy", f"{base}:tiny_trigger").truth is False
    assert all(c.truth is None for c in m.cells if c.model.endswith(":tiny_untrained"))
    assert all(c.truth is False for c in m.cells if c.model == base)
    assert m.organisms[f"{base}:tiny_trigger"]["learned"] is True


def test_matrix_file_validates_and_the_second_run_resumes(run):
    jsonschema = pytest.importorskip("jsonschema")
    from liedar.report.schema import report_schema

    _, first, second, _ = run
    data = json.loads(first.path.read_text())
    schema = {"$defs": report_schema()["$defs"], "$ref": "#/$defs/validation"}
    jsonschema.Draft202012Validator(schema).validate(data["matrix"])
    for name, r in first.per_model.items():
        ok = sorted(u for u, status in r.statuses.items() if status == "ok")
        assert ok, (name, r.statuses)
        # what finished is never redone; a unit that failed (a refusal, e.g. the random model
        # scored no user-wrong item right) is retried, so a fixed cause is not stuck in the cache
        assert sorted(second.per_model[name].cached) == ok, (name, r.statuses)
    assert first.per_model[first.matrix.models[0]].statuses["sandbagging"] == "ok"
    assert second.matrix.to_dict() == first.matrix.to_dict()


def test_demo_step_gives_a_validation_section_from_the_saved_work(run):
    from liedar.pipeline.context import DemoConfig, DemoContext
    from liedar.pipeline.validate import run_validation

    base, first, _, out_dir = run
    ctx = DemoContext(DemoConfig(base, "transformers", True, None, out_dir, 0, 1))
    ctx.sizes["validation"] = SIZES
    section, raw = run_validation(ctx)
    if all(st == "ok" for r in first.per_model.values() for st in r.statuses.values()):
        assert ctx._backend is None  # everything came from the saved files: no model was loaded
    assert section.validation.models == first.matrix.models
    same = [
        c for c in section.validation.cells if c.effect is not None and first.matrix.cell(c.detector, c.model).effect
    ]
    assert same and all(c.effect == first.matrix.cell(c.detector, c.model).effect for c in same)
    assert any("--quick" in n for n in section.validation.notes)
    assert any("organisms in this matrix" in n for n in raw["notes"])


def test_demo_step_hash_covers_the_built_organisms(run):
    from liedar.pipeline.validate import validation_step

    base = run[0]
    step = validation_step(True, base)
    assert step.depends == ("probes",)
    names = [o.split("@")[0] for o in step.config["organisms"]]
    assert names == ["tiny_trigger", "tiny_untrained"]


def test_two_worker_processes_give_the_one_process_matrix(run, tmp_path):
    """The pool (one-thread worker processes, one piece per model and unit group) computes what
    one process computes: every cell, number and flag, with nothing replayed from the call cache."""
    from liedar.pipeline.validate import ValidateConfig, validate
    from liedar.pipeline.validate_detectors import UNITS
    from liedar.pipeline.validate_pool import unit_groups

    groups = unit_groups()
    assert sorted(u for g in groups for u in g) == sorted(u.name for u in UNITS)
    for u in UNITS:  # a unit travels with every unit whose run it reads (cross_check reads sandbagging's)
        assert set(u.needs) <= set(next(g for g in groups if u.name in g))
    assert len(groups) > 4  # and the rest are pieces of their own
    base, first, *_ = run
    config = ValidateConfig(base, "transformers", tmp_path, True, 0, 1, None, (), call_cache=False, workers=2)
    lines: list[str] = []
    pooled = validate(config, say=lines.append, sizes=SIZES)
    assert any("one-thread worker process" in s for s in lines)
    cached = {k: r.cached for k, r in pooled.per_model.items() if r.cached}
    assert not cached, (cached, lines)  # a fresh folder: every unit ran
    assert pooled.matrix.to_dict() == first.matrix.to_dict()
    # a second pooled run reads every piece that finished and runs again only the pieces with a
    # unit that did not (as the one-process path retries them)
    unfinished = sum(any(r.statuses.get(u) != "ok" for u in g) for r in pooled.per_model.values() for g in groups)
    lines.clear()
    again = validate(config, say=lines.append, sizes=SIZES)
    started = [s for s in lines if "worker process" in s]
    assert started == (
        [f"  {unfinished} piece(s) of 3 model(s) on 2 one-thread worker process(es)"] if unfinished else []
    )
    assert again.matrix.to_dict() == first.matrix.to_dict()
