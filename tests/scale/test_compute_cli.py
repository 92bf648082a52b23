"""`--device/--dtype/--ray` on the CLI: bad input is one InputError before any work; an
extract with --ray (local 2-CPU cluster, shared with the other tests) writes the same arrays
as the local command and reuses its cache."""

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
    rows = [f"Statement {i} is about Paris.,{i % 2}" for i in range(20)]
    path.write_text("statement,label\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--dtype", "float16"], "float16 cannot run on the CPU"),
        (["--device", "cuda:0"], "no CUDA GPU"),
        (["--ray", "127.0.0.1:9"], "no Ray head answers"),
        (["--concurrency", "2"], "add --ray"),
        (["--backend", "llamacpp", "--dtype", "bfloat16"], "apply to the transformers backend"),
    ],
)
def test_bad_compute_input_is_one_line_before_work(tiny_model_dir, csv_file, tmp_path, extra, message):
    with pytest.raises(InputError, match=message):
        _run(
            [
                "--model",
                str(tiny_model_dir),
                "--data",
                str(csv_file),
                "--layers",
                "1",
                "--output",
                str(tmp_path / "o"),
                *extra,
            ]
        )
    assert not (tmp_path / "o" / "activations.npz").exists()


def test_extract_with_ray_equals_local(cluster, tiny_model_dir, csv_file, tmp_path, monkeypatch):
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    base = ["--model", str(tiny_model_dir), "--threads", "1", "--data", str(csv_file), "--layers", "1,3"]
    assert _run([*base, "--output", str(tmp_path / "local")]) == 0
    assert _run([*base, "--output", str(tmp_path / "ray"), "--ray"]) == 0  # joins the running cluster
    with np.load(tmp_path / "local" / "activations.npz") as a, np.load(tmp_path / "ray" / "activations.npz") as b:
        np.testing.assert_array_equal(a["hidden"], b["hidden"])
    local = json.loads((tmp_path / "local" / "metadata.json").read_text())
    ray = json.loads((tmp_path / "ray" / "metadata.json").read_text())
    assert ray["reused_from_cache"] == 20 and ray["computed"] == 0  # every shard from the local run
    for key in ("fingerprint", "backend", "dtype", "n_layers", "d_model", "name"):
        assert ray[key] == local[key], key
