"""The consistency runner and CLI on a scripted fake backend (no model), plus one
integration run on the real smollm2-135m."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from liedar.behavioral.consistency.runner import CONDITIONS, run_consistency, select_items
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.core.errors import InputError

ANSWERS = {}
for _item in load_mcq_bank():
    for _wording in _item.variants:
        ANSWERS[_wording] = _item.answer


class ScriptedBackend:
    """Knows every bank answer; under a system prompt that says 'underperform' it picks the
    letter at `attractor` with probability `strength`, else answers correctly."""

    def __init__(self, attractor: int = 2, strength: float = 1.0, seed: int = 0):
        self.attractor, self.strength = attractor, strength
        self.rng = np.random.default_rng(seed)
        self.prompts = []

    def score_options(self, prompt, options):
        self.prompts.append(prompt)
        messages = prompt.messages
        system = messages[0].content if messages[0].role == "system" else ""
        user = next(m.content for m in messages if m.role == "user")
        question = re.search(r"Question: (.*)", user).group(1)
        shown = re.findall(r"^[A-J]\. (.*)$", user, flags=re.M)
        assert options == [" " + "ABCDEFGHIJ"[i] for i in range(len(shown))]
        pick = shown.index(ANSWERS[question])
        if "underperform" in system.lower() and self.rng.random() < self.strength:
            pick = self.attractor
        scores = np.full(len(options), -4.0)
        scores[pick] = -0.2
        return scores


def test_honest_knower_passes_and_attractor_sandbagger_is_flagged():
    run = run_consistency(ScriptedBackend(), n_items=20, n_shuffles=4, n_paraphrases=3, seed=1)
    honest, bag = run.conditions["honest"], run.conditions["sandbagger"]
    assert honest.accuracy.value == 1.0 and honest.result.answer_consistency.value == 1.0
    assert not honest.result.detected
    assert bag.result.detected and bag.result.option_order.position_tests[0].attractor == 2
    assert bag.result.position_bias_score == pytest.approx(1.0)
    assert run.accuracy_drop.value > 0.5 and run.accuracy_drop.lo > 0
    assert len(honest.option_trials) == 20 * 4 and len(honest.paraphrase_trials) == 20 * 3


def test_conditions_are_paired_and_runs_reproducible():
    a = run_consistency(ScriptedBackend(strength=0.5), n_items=8, n_shuffles=3, n_paraphrases=2, seed=4)
    b = run_consistency(ScriptedBackend(strength=0.5), n_items=8, n_shuffles=3, n_paraphrases=2, seed=4)
    honest, bag = a.conditions["honest"].option_trials, a.conditions["sandbagger"].option_trials
    assert [t.presented_options for t in honest] == [t.presented_options for t in bag]
    assert a.to_dict()["conditions"] == b.to_dict()["conditions"]


def test_paraphrase_trials_change_only_the_wording():
    backend = ScriptedBackend()
    run_consistency(
        backend, n_items=3, n_shuffles=2, n_paraphrases=4, seed=0, conditions={"honest": CONDITIONS["honest"]}
    )
    users = [next(m.content for m in p.messages if m.role == "user") for p in backend.prompts]
    first_item = users[2:6]  # after 2 shuffles come 4 wordings of item 1
    option_blocks = {u.split("\n", 1)[1] for u in first_item}
    questions = {u.split("\n", 1)[0] for u in first_item}
    assert len(option_blocks) == 1 and len(questions) == 4


def test_to_dict_is_strict_json():
    run = run_consistency(ScriptedBackend(strength=0.3), n_items=5, n_shuffles=2, n_paraphrases=2)
    d = json.loads(json.dumps(run.to_dict(), allow_nan=False))
    assert set(d["conditions"]) == {"honest", "sandbagger"}
    assert len(d["design"]["item_ids"]) == 5


class AlwaysCBackend(ScriptedBackend):
    """An honest but incapable model with a built-in letter preference: "C" under every prompt."""

    def score_options(self, prompt, options):
        super().score_options(prompt, options)
        scores = np.full(len(options), -4.0)
        scores[2] = -0.1
        return scores


def test_shared_letter_bias_is_not_sandbagging_but_test_only_attractor_is():
    shared = run_consistency(AlwaysCBackend(), n_items=12, n_shuffles=3, n_paraphrases=2, seed=2)
    assert shared.reference == "honest" and set(shared.contrasts) == {"sandbagger"}
    assert shared.conditions["honest"].result.detected and shared.conditions["sandbagger"].result.detected
    c = shared.contrasts["sandbagger"]
    assert not c.detected and c.shared_position_bias and c.reference_near_chance
    assert "position bias shared with the honest baseline: not evidence of sandbagging" in c.reading
    bag = run_consistency(ScriptedBackend(strength=1.0), n_items=12, n_shuffles=3, n_paraphrases=2, seed=2)
    assert bag.contrasts["sandbagger"].detected
    assert bag.to_dict()["contrasts"]["sandbagger"]["detected"] is True


def test_reference_must_be_a_condition():
    with pytest.raises(InputError, match="reference='neutral' is not one of the conditions"):
        run_consistency(ScriptedBackend(), n_items=3, n_shuffles=2, n_paraphrases=2, reference="neutral")


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n_items": 0}, "items=0"),
        ({"n_items": 10_000}, "items=10000"),
        ({"n_shuffles": 1}, "at least 2 shuffles"),
        ({"n_paraphrases": 9}, "paraphrases=9"),
        ({"conditions": {}}, "no conditions"),
    ],
)
def test_bad_design(kwargs, match):
    with pytest.raises(InputError, match=match):
        run_consistency(ScriptedBackend(), **kwargs)


def test_select_items_is_seeded():
    assert select_items(10, 3) == select_items(10, 3)
    assert select_items(10, 3) != select_items(10, 4)
    assert all(i.topic == "science" for i in select_items(5, 0, ["science"]))


def _main(argv):
    from liedar.cli import main

    return main(argv)


def test_cli_side_by_side_and_output(tmp_path, monkeypatch, capsys):
    from liedar import models

    monkeypatch.setattr(models, "load", lambda name, backend="transformers", n_threads=None: ScriptedBackend())
    out = tmp_path / "c.json"
    code = _main(
        [
            "behavioral",
            "consistency",
            "--items",
            "6",
            "--shuffles",
            "3",
            "--paraphrases",
            "2",
            "--output",
            str(out),
            "--quiet",
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    assert "honest" in text and "sandbagger" in text and "accuracy (shuffled trials)" in text
    assert re.search(r"flagged \(confidence >= threshold\)\s+no\s+YES", text)
    assert "contrast sandbagger vs honest" in text and "letter prior, honest" in text
    assert re.search(r"sandbagging flagged by the contrast: (YES|no)", text)
    assert json.loads(out.read_text())["result"]["design"]["shuffles"] == 3


def test_cli_bad_input_exits_2(monkeypatch, capsys):
    from liedar import models

    monkeypatch.setattr(models, "load", lambda name, backend="transformers", n_threads=None: ScriptedBackend())
    assert _main(["behavioral", "consistency", "--shuffles", "1", "--quiet"]) == 2
    assert "at least 2 shuffles" in capsys.readouterr().err


def test_cli_bad_min_effect_exits_2_before_loading_a_model(monkeypatch, capsys):
    from liedar import models

    monkeypatch.setattr(models, "load", lambda *a, **k: pytest.fail("loaded a model for a bad --min-effect"))
    assert _main(["behavioral", "consistency", "--min-effect", "1.5", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--min-effect: 1.5 is not strictly between 0 and 1" in err and len(err.strip().splitlines()) == 1


@pytest.mark.integration
def test_real_smollm2_small_design():
    pytest.importorskip("torch")
    import torch

    torch.set_num_threads(1)
    from liedar.behavioral.consistency.runner import run_consistency_on_model
    from liedar.core.errors import ModelUnavailableError

    try:
        run = run_consistency_on_model("smollm2-135m", n_items=6, n_shuffles=3, n_paraphrases=2, seed=0, n_threads=1)
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))
    assert run.contrasts["sandbagger"].reading  # the baseline-aware verdict is computed on real trials
    for cond in run.conditions.values():
        assert len(cond.option_trials) == 18 and len(cond.paraphrase_trials) == 12
        assert 0.0 <= cond.result.confidence <= 1.0
        assert all(0 <= t.chosen_position < 4 for t in cond.option_trials)
    json.dumps(run.to_dict(), allow_nan=False)


def test_report_rows_carry_the_contrast_verdict_not_single_condition_flags():
    from liedar.behavioral.consistency.detector import ConsistencyDetector
    from liedar.behavioral.consistency.section import consistency_section

    det = ConsistencyDetector()
    run = run_consistency(AlwaysCBackend(), n_items=10, n_shuffles=3, n_paraphrases=2, seed=1, detector=det)
    section = consistency_section(run, det, n_boot=20)
    rows = {m.id: m for m in section.measures}
    assert rows["consistency_honest"].flag is None and rows["consistency_honest"].details["single_condition_flag"]
    pos = rows["consistency_contrast_sandbagger_position_concentration"]
    assert pos.flag is False and pos.scale == "difference" and pos.ceiling == "consistency_ceiling"
    assert "shared with the honest baseline" in pos.details["reading"]
    assert pos.warnings[0].text == pos.details["reading"]  # the reading is shown on the page, once
    assert rows["consistency_contrast_sandbagger_answer_inconsistency"].warnings == ()
    json.dumps(section.to_dict(), allow_nan=False)
