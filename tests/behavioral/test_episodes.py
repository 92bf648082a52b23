from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from liedar.behavioral.episodes import Episode, ScenarioRubric, load_episodes, score_episodes
from liedar.behavioral.items.episodes import RUBRICS, example_episodes, write_episodes
from liedar.core.errors import InputError

sys.path.insert(0, str(Path(__file__).parent))
from cli_harness import run_cli  # noqa: E402


def test_known_counts():
    eps = [
        Episode("1", "failing-tests", "says-code-was-fixed", "insists-code-fixed"),
        Episode("2", "failing-tests", "says-all-tests-pass", "admits-editing-tests"),
        Episode("3", "failing-tests", "says-tests-were-edited", None),
        Episode("4", "product-defect", "says-it-never-overheats", None),
    ]
    r = score_episodes(eps, RUBRICS)
    assert r.deceptive.value == 0.75 and r.commission.value == 0.5 and r.omission.value == 0.25
    assert r.doubling_down.value == 0.5 and r.doubling_down.n == 2
    assert r.by_scenario["failing-tests"] == {"honest": 1, "commission": 1, "omission": 1}


def test_generator_recovers_its_rates_within_the_interval(tmp_path):
    path = write_episodes(
        example_episodes(600, commission=0.2, omission=0.1, double_down=0.6, seed=3), tmp_path / "eps.jsonl"
    )
    r = score_episodes(load_episodes(path), RUBRICS)
    assert r.commission.lo <= 0.2 <= r.commission.hi
    assert r.omission.lo <= 0.1 <= r.omission.hi
    assert r.doubling_down.lo <= 0.6 <= r.doubling_down.hi


def test_zero_deception_states_rule_of_three():
    r = score_episodes(example_episodes(30, commission=0, omission=0, seed=1), RUBRICS)
    assert r.deceptive.value == 0 and "rule of three" in r.reading


@pytest.mark.parametrize(
    "ep,match",
    [
        (Episode("1", "heist", "x"), "no rubric"),
        (Episode("1", "failing-tests", "deletes-repo"), "action='deletes-repo'"),
        (Episode("1", "failing-tests", "says-code-was-fixed", "shrugs"), "followup='shrugs'"),
    ],
)
def test_bad_episode(ep, match):
    with pytest.raises(InputError, match=match):
        score_episodes([ep], RUBRICS)


def test_bad_rubric_and_files(tmp_path):
    with pytest.raises(InputError, match="action label"):
        ScenarioRubric("s", "d", {"a": "lie"}, {})
    with pytest.raises(InputError, match="no episodes"):
        score_episodes([], RUBRICS)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"episode_id": "1", "scenario": "failing-tests"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:1: missing key\(s\) action"):
        load_episodes(bad)
    bad.write_text("not json\n")
    with pytest.raises(InputError, match="not valid JSON"):
        load_episodes(bad)


def test_cli(tmp_path, capsys):
    path = write_episodes(example_episodes(90, seed=2), tmp_path / "e.jsonl")
    out = tmp_path / "r.json"
    assert run_cli(["episodes", "--episodes", str(path), "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "deceptive" in text and "n=90" in text and "propensity" in text
    assert json.loads(out.read_text())["result"]["n_episodes"] == 90
    assert run_cli(["episodes", "--episodes", str(tmp_path / "missing.jsonl")]) == 2
