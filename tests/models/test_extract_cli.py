"""`liedar extract` on the tiny model: CSV with extra columns, JSONL dialogues, bad input."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from liedar.commands import extract
from liedar.core.errors import InputError


def _run(argv):
    parser = argparse.ArgumentParser()
    extract.register(parser.add_subparsers())
    args = parser.parse_args(["extract", *argv])
    return args.func(args)


@pytest.fixture()
def csv_file(tmp_path):
    path = tmp_path / "facts.csv"
    path.write_text("statement,label,source\nParis is in France.,1,x\nRome is in Spain.,0,y\nMadrid is in Spain.,1,z\n")
    return path


def test_extract_csv_writes_arrays_and_metadata(tiny_model_dir, csv_file, tmp_path, monkeypatch):
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert (
        _run(
            [
                "--model",
                str(tiny_model_dir),
                "--data",
                str(csv_file),
                "--layers",
                "1,3",
                "--position",
                "mean",
                "--output",
                str(out),
                "--threads",
                "1",
            ]
        )
        == 0
    )
    with np.load(out / "activations.npz", allow_pickle=False) as npz:
        assert npz["hidden"].shape == (3, 2, 48)
        assert list(npz["labels"]) == [1, 0, 1]
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["layers"] == [1, 3] and meta["position"] == "mean" and meta["computed"] == 3
    # a second run is served from the cache
    _run(
        [
            "--model",
            str(tiny_model_dir),
            "--data",
            str(csv_file),
            "--layers",
            "1,3",
            "--position",
            "mean",
            "--output",
            str(out),
            "--threads",
            "1",
        ]
    )
    assert json.loads((out / "metadata.json").read_text())["reused_from_cache"] == 3


def test_extract_jsonl_dialogues(tiny_model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "d.jsonl"
    rows = [
        {
            "dialogue": [
                {"role": "user", "content": "Capital of France?"},
                {"role": "assistant", "content": "Paris.", "detect": True},
            ],
            "label": 1,
        },
        {"statement": "Rome is in Spain.", "label": 0},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    _run(
        [
            "--model",
            str(tiny_model_dir),
            "--data",
            str(path),
            "--layers",
            "2",
            "--output",
            str(tmp_path / "o"),
            "--threads",
            "1",
            "--no-cache",
        ]
    )
    with np.load(tmp_path / "o" / "activations.npz", allow_pickle=False) as npz:
        assert npz["hidden"].shape == (2, 1, 48)


def test_extract_bad_layers_is_one_clear_error(tiny_model_dir, csv_file, tmp_path):
    with pytest.raises(InputError, match=r"valid layers are 0\.\.4"):
        _run(["--model", str(tiny_model_dir), "--data", str(csv_file), "--layers", "9", "--output", str(tmp_path)])
    with pytest.raises(SystemExit):  # refused while parsing, before the model loads
        _run(["--model", str(tiny_model_dir), "--data", str(csv_file), "--layers", "a,b", "--output", str(tmp_path)])


def test_extract_bad_layer_grammar_is_one_line_before_the_model_loads(tiny_model_dir, csv_file, tmp_path, capsys):
    from liedar.cli import main

    argv = ["extract", "--model", str(tiny_model_dir), "--data", str(csv_file), "--output", str(tmp_path)]
    assert main([*argv, "--layers", "a,b"]) == 2
    err = capsys.readouterr().err
    assert "'a' is not a layer or an ascending range" in err and len(err.strip().splitlines()) == 1
