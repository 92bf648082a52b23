"""scripts/measure_ladder.py: the ladder's measures read the model the way the instruments do,
with their counts, and a demo folder's neutral accuracies are read as saved."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from liedar.behavioral.items.beliefs import belief_items
from liedar.behavioral.items.claims_choice import choice_claims
from liedar.behavioral.items.mcq import load_mcq_bank
from liedar.core.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SAVED_RESULTS = ROOT / "tests" / "liedar" / "data" / "results"
sys.path.insert(0, str(ROOT / "scripts"))  # the script imports its neighbours (capable_record, measure_ceilings)
spec = importlib.util.spec_from_file_location("measure_ladder", ROOT / "scripts" / "measure_ladder.py")
ladder_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ladder_script)  # type: ignore[union-attr]
sys.path.remove(str(ROOT / "scripts"))


@pytest.fixture(scope="module")
def tiny_backend(tiny_model_dir):
    pytest.importorskip("torch")
    from liedar import models

    return models.load(str(tiny_model_dir), backend="transformers", n_threads=1, n_ctx=1024)


def test_the_proposed_wrong_answer_is_wrong_seeded_and_varied():
    bank = load_mcq_bank()
    wrong = [ladder_script.wrong_option(it) for it in bank]
    assert all(w != it.answer and w in it.options for w, it in zip(wrong, bank))
    assert wrong == [ladder_script.wrong_option(it) for it in bank]
    positions = {it.options.index(w) for w, it in zip(wrong, bank)}
    assert len(positions) > 1  # not always the same slot


def test_each_measure_counts_its_items_and_letters_match_the_gap_protocol(tiny_backend):
    from liedar.behavioral.runners.elicitation import ElicitationContext, answer_correct
    from liedar.behavioral.runners.sandbagging import BENIGN_SYSTEM

    items = load_mcq_bank()[:3]
    rows = ladder_script.ladder(tiny_backend, items, belief_items()[:2], choice_claims(2)[:2])
    assert set(rows) == set(ladder_script.MEASURES)
    assert [rows[m]["n"] for m in ladder_script.MEASURES] == [3, 3, 6, 2, 2]
    for r in rows.values():
        assert r["lo"] <= r["value"] <= r["hi"] and r["value"] == r["correct"] / r["n"]
    halves = rows["yes_no"]["proposed_correct"]["correct"] + rows["yes_no"]["proposed_wrong"]["correct"]
    assert halves == rows["yes_no"]["correct"]
    ctx = ElicitationContext()
    direct = sum(answer_correct(tiny_backend, it, "zero_shot_letter", BENIGN_SYSTEM, ctx) for it in items)
    assert rows["letters"]["correct"] == direct


def test_neutral_accuracies_are_the_saved_ceilings():
    saved = {}
    for path in SAVED_RESULTS.glob("step-*.json"):
        step = json.loads(path.read_text())
        for c in (step.get("section") or {}).get("ceilings") or []:
            if step["status"] == "ok" and c["estimate"]:
                saved[c["id"]] = (c["estimate"]["value"], c["estimate"]["n"])
    read = ladder_script.neutral_accuracies(SAVED_RESULTS)
    assert saved and {r["id"]: (r["value"], r["n"]) for r in read if "value" in r} == saved


def test_a_results_folder_of_another_model_is_refused(tmp_path):
    model = json.loads(next(SAVED_RESULTS.glob("step-*.json")).read_text())["model"]["name"]
    with pytest.raises(InputError, match="not 'qwen2.5-coder-1.5b'"):
        ladder_script.neutral_accuracies(SAVED_RESULTS, "qwen2.5-coder-1.5b" if model != "qwen2.5-coder-1.5b" else "x")
    with pytest.raises(InputError, match="holds no liedar results"):
        ladder_script.neutral_accuracies(tmp_path)
