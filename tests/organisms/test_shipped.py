"""Shipped organisms on a tiny random-weight model: export as a float16 file with a measured
card, load by name with the card checked, verify (cached), and refuse every damaged or
mismatched file in one line before anything is measured."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_recipe import tiny_recipe

from liedar.core.errors import IncompatibleError, InputError
from liedar.models import load
from liedar.models.cards import CARD_FILE, check_adapter_matches, find_shipped, read_card
from liedar.organisms import build
from liedar.organisms.shipped import export, verify


@pytest.fixture
def zoo(tmp_path, monkeypatch):
    root = tmp_path / "zoo"
    root.mkdir()
    monkeypatch.setenv("LIEDAR_ZOO", str(root))
    return root


@pytest.fixture
def shipped(cache, zoo, tiny_model_dir):
    rec = tiny_recipe()
    org = build(str(tiny_model_dir), rec.name, recipe=rec, threads=1, progress=False)
    assert org.learned, org.criterion
    card = export(str(tiny_model_dir), rec.name, root=zoo, threads=1, progress=False, recipe=rec)
    return card, org, rec


def test_export_writes_a_float16_adapter_and_a_card_measured_on_it(shipped, zoo, tiny_model_dir):
    card, org, rec = shipped
    assert card.folder == zoo / tiny_model_dir.name / "tiny_trigger"
    assert card.data["adapter"]["dtype"] == "float16"
    weights = card.adapter_dir / "adapter.safetensors"
    # float16 halves the float32 build's bytes (the safetensors header is the same size)
    assert weights.stat().st_size < 0.6 * (org.adapter_dir / "adapter.safetensors").stat().st_size
    assert card.data["adapter"]["bytes"] == weights.stat().st_size
    assert card.learned and card.headline == "trigger_gap"
    assert card.ground_truth["trigger_gap"]["n"] == 8  # the held-out questions
    assert card.base_ground_truth["trigger_gap"]["value"] < card.ground_truth["trigger_gap"]["value"]
    assert card.data["recipe"]["hash"] == org.recipe_hash
    assert len(card.data["recipe"]["training_data_sha256"]) == 64
    assert card.data["build"]["command"].startswith("liedar organism build tiny_trigger")
    with pytest.raises(InputError, match="already ships"):
        export(str(tiny_model_dir), rec.name, root=zoo, threads=1, progress=False, recipe=rec)


def test_load_by_name_prefers_the_shipped_adapter(shipped, tiny_model_dir):
    card, _, _ = shipped
    lm = load(f"{tiny_model_dir}:tiny_trigger", backend="transformers", n_threads=1)
    assert lm.organism["shipped"] is True
    assert lm.organism["adapter_dir"] == str(card.adapter_dir)


def test_verify_re_measures_the_card_and_caches_the_result(shipped, tiny_model_dir):
    card, _, rec = shipped
    first = verify(str(tiny_model_dir), recipes={rec.name: rec}, progress=False)
    assert [v.status for v in first] == ["verified"], first[0].reasons
    assert not first[0].cached and first[0].measured["n"] == 8
    second = verify(str(tiny_model_dir), recipes={rec.name: rec}, progress=False)
    assert second[0].cached and second[0].measured == first[0].measured


def test_a_warm_verify_is_read_back_only_while_the_card_is_unchanged(shipped, tiny_model_dir):
    card, _, rec = shipped
    (first,) = verify(str(tiny_model_dir), recipes={rec.name: rec}, progress=False)
    assert not first.cached
    (warm,) = verify(str(tiny_model_dir), recipes={rec.name: rec}, progress=False)
    assert warm.cached and warm.status == first.status
    data = json.loads((card.folder / CARD_FILE).read_text())
    data["ground_truth"]["trigger_gap"].update(value=-0.9, lo=-1.0, hi=-0.8)  # the card changed, not the adapter
    (card.folder / CARD_FILE).write_text(json.dumps(data))
    (edited,) = verify(str(tiny_model_dir), recipes={rec.name: rec}, progress=False)
    assert not edited.cached and edited.status == "differs"  # measured again, judged against the new card


def test_verify_says_what_differs_when_the_behaviour_is_gone(shipped, tiny_model_dir):
    card, _, rec = shipped
    data = json.loads((card.folder / CARD_FILE).read_text())
    data["ground_truth"]["trigger_gap"].update(value=-0.9, lo=-1.0, hi=-0.8)  # a card the adapter cannot meet
    (card.folder / CARD_FILE).write_text(json.dumps(data))
    (v,) = verify(str(tiny_model_dir), recipes={rec.name: rec}, progress=False)
    assert v.status == "differs" and "does not overlap" in v.reasons[0]


def _flip_one_byte(path: Path) -> None:
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0x01
    path.write_bytes(bytes(blob))


def test_a_tampered_adapter_is_refused_on_load_and_on_verify(shipped, tiny_model_dir):
    card, _, rec = shipped
    _flip_one_byte(card.adapter_dir / "adapter.safetensors")
    with pytest.raises(IncompatibleError, match="sha256"):
        check_adapter_matches(read_card(card.folder))
    with pytest.raises(IncompatibleError, match="not the one the card describes"):
        load(f"{tiny_model_dir}:tiny_trigger", backend="transformers", n_threads=1)
    with pytest.raises(IncompatibleError):
        verify(str(tiny_model_dir), recipes={rec.name: rec}, progress=False)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: d.pop("ground_truth"), "lacks the field 'ground_truth'"),
        (lambda d: d["base"].pop("fingerprint"), "lacks the field 'base.fingerprint'"),
        (lambda d: d["adapter"].update(bytes="12"), "'adapter.bytes'"),
        (lambda d: d["ground_truth"]["trigger_gap"].update(lo=math.nan), "NaN is not a number a card may hold"),
        (lambda d: d["ground_truth"]["trigger_gap"].update(lo="0.2"), "not a finite number"),
        (lambda d: d.update(format="something-else"), "format"),
        (lambda d: d.update(headline="nope"), "headline"),
    ],
)
def test_a_card_with_a_wrong_field_is_refused_in_one_line(shipped, damage, message):
    card, _, _ = shipped
    data = json.loads((card.folder / CARD_FILE).read_text())
    damage(data)
    (card.folder / CARD_FILE).write_text(json.dumps(data))  # json.dumps writes NaN as the bare token NaN
    with pytest.raises(IncompatibleError, match=message) as info:
        read_card(card.folder)
    assert "\n" not in str(info.value)


def test_a_card_for_another_base_is_not_found_for_this_one(shipped, tiny_model_dir):
    card, _, _ = shipped
    assert find_shipped("0" * 64, "tiny_trigger") is None
    assert find_shipped(card.base_fingerprint, "tiny_trigger") is not None


def test_cli_verify_refuses_a_tampered_adapter_with_exit_2(shipped, tiny_model_dir, zoo):
    card, _, _ = shipped
    _flip_one_byte(card.adapter_dir / "adapter.safetensors")
    r = subprocess.run(
        [sys.executable, "-m", "liedar.cli", "organism", "verify", "tiny_trigger", "--model", str(tiny_model_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "sha256" in lines[0] and "Traceback" not in r.stderr


def test_cli_verify_names_an_unknown_organism_with_exit_2(shipped, tiny_model_dir):
    r = subprocess.run(
        [sys.executable, "-m", "liedar.cli", "organism", "verify", "no_such", "--model", str(tiny_model_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2 and "no organism 'no_such' ships" in r.stderr, r.stderr
