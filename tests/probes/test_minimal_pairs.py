"""A user's CSV of true/false minimal pairs gets a CV that is not inverted.

Each pair's halves share a subject; in different folds, the probe learns the subject from
one half and scores the other with its twin's label. These tests show the inversion on
activations built the way such pairs look (one shared subject vector per pair, a weak truth
direction), show that the automatic grouping removes it, and check the same on smollm2-135m.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from liedar.cli import main
from liedar.core.errors import InputError
from liedar.probes.datasets import load_csv
from liedar.probes.evaluation import cross_validated
from liedar.probes.pairing import minimal_pairs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from minimal_pairs_data import PAIRS, write_pairs_csv  # noqa: E402


def test_the_25_pairs_become_25_groups_and_the_note_says_so(tmp_path: Path) -> None:
    f = tmp_path / "mine.csv"
    write_pairs_csv(f)
    s = load_csv(f)
    assert len(s) == 50 and len(set(s.group)) == 25
    for k in range(25):  # each pair, and only the pair, shares a group
        assert s.group[2 * k] == s.group[2 * k + 1] != s.group[(2 * k + 2) % 50]
    assert any("25 true/false minimal pairs" in n and "25 CV groups from 50 rows" in n for n in s.notes)


def test_a_group_column_is_used_as_given(tmp_path: Path) -> None:
    f = tmp_path / "mine.csv"
    f.write_text("statement,label,group\nThe sun rises in the east.,1,a\nThe sun rises in the west.,0,b\n")
    s = load_csv(f)
    assert len(set(s.group)) == 2 and not any("minimal pairs" in n for n in s.notes)


def test_pairing_finds_negations_and_never_chains_a_template() -> None:
    assert minimal_pairs(["Owls hunt at night.", "Owls do not hunt at night."], [1, 0]) == [(0, 1)]
    assert minimal_pairs(["Paris isn't in Spain.", "Paris is in Spain."], [1, 0]) == [(0, 1)]
    assert minimal_pairs(["Snow is white.", "Snow is white and cold."], [1, 1]) == []  # same label: not a twin
    assert minimal_pairs(["Snow is white.", "Tigers hunt deer in forests."], [1, 0]) == []
    template = [f"The capital of {c} is {x}." for c in ("France", "Spain", "Italy") for x in ("Paris", "Madrid")]
    labels = [1, 0, 0, 1, 0, 0]
    pairs = minimal_pairs(template, labels)
    used = [i for p in pairs for i in p]
    assert len(used) == len(set(used))  # every row in at most one pair: no chain across the file


def _pair_like_activations(labels: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dim = 64
    subject = np.repeat(rng.normal(size=(len(labels) // 2, dim)) * 3.0, 2, axis=0)  # one per pair
    truth = rng.normal(size=dim)
    truth /= np.linalg.norm(truth)
    return subject + rng.normal(size=(len(labels), dim)) + np.outer(np.where(labels == 1, 0.5, -0.5), truth)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_row_folds_invert_the_auroc_and_pair_groups_do_not(tmp_path: Path, seed: int) -> None:
    f = tmp_path / "mine.csv"
    write_pairs_csv(f)
    grouped, per_row = load_csv(f), load_csv(f, tidy=False)
    assert len(set(per_row.group)) == 50
    X = _pair_like_activations(grouped.labels, seed)
    inverted = cross_validated("logistic", X, per_row, seed=0).auroc
    honest = cross_validated("logistic", X, grouped, seed=0).auroc
    assert inverted.hi < 0.5  # the trap: confidently below chance
    assert honest.value > 0.5  # grouped: the weak truth direction is what is scored


def test_a_statement_labelled_both_ways_exits_2_naming_the_row(tmp_path: Path, capsys) -> None:
    f = tmp_path / "mine.csv"
    f.write_text("statement,label\nSnow is white.,1\nSnow is black.,0\nSnow is white.,0\n")
    with pytest.raises(InputError, match=r"mine\.csv:4: 'Snow is white\.' is labelled 0 here and 1 on line 2"):
        load_csv(f)
    assert main(["probe", "train", "--data", str(f), "--layer", "1", "--output", str(tmp_path / "p.npz")]) == 2
    err = capsys.readouterr().err.strip()
    assert "mine.csv:4:" in err and "\n" not in err


def test_exact_duplicates_are_dropped_with_a_note(tmp_path: Path) -> None:
    f = tmp_path / "mine.csv"
    f.write_text("statement,label\nSnow is white.,1\nSnow is black.,0\nSnow is white.,1\n Snow is white.,true\n")
    s = load_csv(f)
    assert list(s.inputs) == ["Snow is white.", "Snow is black."]
    assert any("dropped 2 exact duplicate rows (lines 4, 5)" in n for n in s.notes)


def _auroc_and_interval(out: str) -> tuple[float, float, float]:
    m = re.search(r"group-CV AUROC ([0-9.]+) \[([0-9.]+), ([0-9.]+)\]", out)
    assert m, out
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


@pytest.mark.integration
def test_smollm2_probe_on_the_pairs_is_not_inverted(tmp_path: Path, capsys, monkeypatch) -> None:
    pytest.importorskip("llama_cpp")
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    mine, per_row = tmp_path / "mine.csv", tmp_path / "perrow.csv"
    write_pairs_csv(mine)
    rows = mine.read_text(encoding="utf-8").splitlines()
    per_row.write_text("\n".join([rows[0] + ",group"] + [f"{r},r{i}" for i, r in enumerate(rows[1:])]) + "\n")
    argv = ["probe", "train", "--model", "smollm2-135m", "--layer", "12", "--probe", "logistic"]
    results = {}
    for name, f in (("grouped", mine), ("per_row", per_row)):
        rc = main([*argv, "--data", str(f), "--output", str(tmp_path / f"{name}.npz")])
        out = capsys.readouterr().out
        if rc != 0 and "not installed" in out:
            pytest.skip(out)
        assert rc == 0, out
        results[name] = (out, _auroc_and_interval(out))
    assert "25 true/false minimal pairs put in one fold each, 25 CV groups from 50 rows" in results["grouped"][0]
    (g, _, g_hi), (r, _, r_hi) = results["grouped"][1], results["per_row"][1]
    assert r_hi < 0.5  # one row per group: confidently inverted (measured 0.088 [0.025, 0.182])
    assert g_hi > 0.5 and g > r + 0.2  # grouped: not inverted (measured 0.507 [0.392, 0.622])
    assert len(PAIRS) == 25
