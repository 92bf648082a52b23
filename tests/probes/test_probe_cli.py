"""`liedar probe train | eval | sweep` on the tiny random model; bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from liedar.cli import main
from liedar.probes.io import load_probe


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_train_saves_a_loadable_probe(tiny_model_dir: Path, cache: Path, capsys) -> None:
    out = cache / "probe.npz"
    rc = main(
        [
            "probe",
            "train",
            "--model",
            str(tiny_model_dir),
            "--data",
            "numbers",
            "--layer",
            "2",
            "--probe",
            "mass-mean",
            "--threads",
            "1",
            "--output",
            str(out),
        ]
    )
    assert rc == 0
    probe, meta = load_probe(out, expect_d_model=48)
    assert meta.layer == 2 and meta.positive_class == "false" and meta.training_sets == ["numbers"]
    assert "cv_auroc" in meta.metrics and meta.threshold is not None
    assert "5-fold group-CV AUROC" in capsys.readouterr().out


def test_eval_writes_table_json_and_heatmap(tiny_model_dir: Path, cache: Path, capsys) -> None:
    out = cache / "eval"
    rc = main(
        [
            "probe",
            "eval",
            "--model",
            str(tiny_model_dir),
            "--data",
            "numbers",
            "elements",
            "--layer",
            "1",
            "--probe",
            "mass-mean",
            "--threads",
            "1",
            "--output",
            str(out),
        ]
    )
    assert rc == 0
    payload = json.loads((out / "transfer.json").read_text())
    assert payload["train"] == payload["test"] == ["elements", "numbers"] and len(payload["cells"]) == 2
    assert (out / "transfer.png").read_bytes()[:4] == b"\x89PNG"
    assert "train \\ test" in capsys.readouterr().out


def test_sweep_writes_curve(tiny_model_dir: Path, cache: Path) -> None:
    out = cache / "sweep"
    rc = main(
        [
            "probe",
            "sweep",
            "--model",
            str(tiny_model_dir),
            "--data",
            "numbers",
            "--layers",
            "0-4",
            "--probe",
            "ttpd",
            "--threads",
            "1",
            "--output",
            str(out),
        ]
    )
    assert rc == 0
    payload = json.loads((out / "sweep.json").read_text())
    assert payload["layers"] == [0, 1, 2, 3, 4] and payload["chosen_layer"] in payload["layers"]
    assert np.all([0 <= v["value"] <= 1 for v in payload["validation"]])
    assert (out / "sweep.png").exists()


@pytest.mark.parametrize(
    "argv,message",
    [
        (["probe", "train", "--data", "nonsense", "--layer", "3", "--output", "x.npz"], "neither a built-in set"),
        (["probe", "sweep", "--data", "numbers", "--layers", "a-b", "--output", "o", "--model", "TINY"], "--layers"),
        (["probe", "train", "--data", "numbers", "--layer", "99", "--output", "x.npz", "--model", "TINY"], "99"),
    ],
)
def test_bad_input_exits_2_with_one_line(tiny_model_dir: Path, cache: Path, capsys, argv, message) -> None:
    argv = [str(tiny_model_dir) if a == "TINY" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("liedar: error:") and message in err and "\n" not in err


def test_bad_csv_exits_2(cache: Path, capsys) -> None:
    bad = cache / "bad.csv"
    bad.write_text("statement,label\nA.,2\n")
    assert main(["probe", "train", "--data", str(bad), "--layer", "1", "--output", "x.npz"]) == 2
    assert "bad.csv:2:" in capsys.readouterr().err  # file:line
