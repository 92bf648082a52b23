"""Inputs a command could accept without a word (or refuse with a misleading line) are
named: each test checks what the one line *says*, not only that it is one line.

The catalogue (test_catalogue.py) holds the same argv for the exit-2 / one-line / nothing
written contract; here the content of the message, the warning of a run that still
succeeds, and the Markdown escaping are checked. No model is loaded (the `no_model` guard).
"""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest
from hardening_support import ModelLoaded

from liedar.cli import main


def _error(argv, capsys) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["extract", "--data", "good.csv", "--layers", "6", "--output", "out"], "extract"),
        (["probe", "train", "--data", "good.csv", "--output", "p.npz"], "probe train"),
        (["probe", "sweep", "--data", "good.csv", "--output", "out"], "probe sweep"),
        (["monitor", "run", "--probe", "probe.npz", "Hi"], "monitor run"),
        (["demo", "--output", "rep"], "demo"),
    ],
)
def test_served_model_on_a_white_box_command_names_what_works(argv, command, workdir, no_model, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    line = _error([*argv, "--model", "openai:x"], capsys)
    assert "openai:x is a served model" in line and f"`liedar {command}`" in line
    assert "hidden states" in line and "liedar behavioral INSTRUMENT" in line


def test_quick_demo_refuses_a_datasets_folder_it_would_never_read(workdir, no_model, capsys):
    line = _error(["demo", "--quick", "--datasets", "adir", "--output", "rep"], capsys)
    assert "never reads --datasets adir" in line
    assert not (workdir / "rep").exists()


def test_base_url_with_a_local_model_is_refused(workdir, no_model, capsys):
    line = _error(["behavioral", "menus", "--model", "smollm2-135m", "--base-url", "http://127.0.0.1:9/v1"], capsys)
    assert "--base-url applies to served models only" in line and "openai:NAME" in line


@pytest.mark.parametrize("where", [["--backend", "llamacpp"], ["--model", "openai:x"]])
def test_a_dtype_for_a_model_whose_weights_liedar_does_not_load_is_refused(where, workdir, no_model, capsys):
    argv = ["behavioral", "menus", "--model", "smollm2-135m", *where, "--dtype", "bfloat16"]
    line = _error(argv, capsys)
    assert "--dtype bfloat16 sets the weights of a local transformers model" in line and "drop --dtype" in line


def test_the_same_run_twice_is_refused(workdir, capsys):
    line = _error(["report", "--from", "results", "--from", "./results/", "--output", "rep"], capsys)
    assert "names the same run" in line


@pytest.mark.parametrize("second", ["good.jsonl", "copy.jsonl"])
def test_the_same_inspect_log_twice_is_refused(second, workdir, capsys):
    (workdir / "copy.jsonl").write_bytes((workdir / "good.jsonl").read_bytes())
    line = _error(["behavioral", "from-inspect", "good.jsonl", second, "--output", "o"], capsys)
    assert "is the same log as good.jsonl" in line


def test_probe_position_middle_is_refused(workdir, no_model, capsys):
    with np.load(workdir / "probe.npz", allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(str(arrays["__liedar_probe__"]))
    header["metadata"]["position"] = "middle"
    arrays["__liedar_probe__"] = np.array(json.dumps(header))
    np.savez(workdir / "mid.npz", **arrays)
    line = _error(["monitor", "run", "--model", "smollm2-135m", "--probe", "mid.npz", "Hi"], capsys)
    assert "position 'middle' is not one of last, mean" in line


def test_a_text_file_given_as_a_probe_is_not_called_pickled(workdir, no_model, capsys):
    line = _error(["monitor", "run", "--model", "smollm2-135m", "--probe", "good.csv", "Hi"], capsys)
    assert "pickle" not in line and "not a zip archive" in line


def test_a_probe_for_another_builtin_is_refused_before_loading(workdir, no_model, capsys):
    line = _error(["monitor", "run", "--model", "gemma3-270m", "--probe", "probe.npz", "Hi"], capsys)
    assert "trained on smollm2-135m, not gemma3-270m" in line


def test_one_class_labels_are_named_as_plain_numbers():
    from liedar.core.errors import InputError
    from liedar.probes.estimators import MassMeanProbe

    with pytest.raises(InputError) as err:
        MassMeanProbe().fit(np.ones((4, 3)), np.zeros(4, dtype=np.int64))
    assert "(0)" in str(err.value) and "np." not in str(err.value)


@pytest.mark.parametrize(
    ("instrument", "flag"), [("gap", "--limit"), ("contamination", "--limit"), ("consistency", "--items")]
)
def test_a_limit_past_the_bank_is_capped_to_it_with_a_note(instrument, flag, workdir, no_model, capsys):
    with pytest.raises(ModelLoaded):  # the note comes before the model would load
        main(["behavioral", instrument, flag, "1000000000"])
    notes = capsys.readouterr().err.strip().splitlines()
    assert len(notes) == 1 and notes[0].startswith(f"liedar: note: {flag} 1000000000 capped at "), notes
    assert "the items the bank holds: asking all" in notes[0]


def test_a_missing_step_file_keeps_its_row_with_the_reason(workdir, capsys):
    from liedar.core.results import SCHEMA_VERSION

    run = {"schema_version": SCHEMA_VERSION, "steps": ["gap", "probes"]}
    (workdir / "results" / "run.json").write_text(json.dumps(run))
    assert main(["report", "--from", "results", "--output", "rep"]) == 0
    err = capsys.readouterr().err
    assert "step 'probes' is listed in run.json but its result file is missing" in err
    md = (workdir / "rep" / "report.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| probes"))
    assert "step-probes.json is missing" in row


def test_report_md_escapes_markup_in_a_model_name(workdir):
    from liedar.report.store import StepResult, save_step

    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    save_step(workdir / "results", StepResult("gap", "abc", "not_run", {"name": evil}, reason="<b>why</b>"))
    assert main(["report", "--from", "results", "--output", "rep"]) == 0
    md = (workdir / "rep" / "report.md").read_text()
    assert "<script" not in md and "<img" not in md and "<b>" not in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md


def test_an_error_after_an_open_progress_bar_starts_its_own_line(monkeypatch):
    from tqdm import tqdm

    from liedar.cli import _error_line

    err = io.StringIO()  # not a terminal: tqdm still draws the bar, without a closing newline
    monkeypatch.setattr(sys, "stderr", err)
    _error_line("first")
    bar = tqdm(total=4, file=err, desc="work")
    bar.update(1)
    _error_line("second")
    bar.close()
    text = err.getvalue()
    assert text.startswith("liedar: error: first\n")  # no blank line when nothing was drawn
    assert "\nliedar: error: second\n" in text and "work" in text.split("\nliedar: error: second")[0]
