"""The audit command's bad-input paths: one line on stderr, exit 2, before any model loads."""

from __future__ import annotations

import json

import pytest

from liedar.cli import main


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["audit", "--model", "no-such-model"], "unknown model 'no-such-model'"),
        (["audit", "--model", "smollm2-135m:no_such_organism"], "no organism 'no_such_organism' ships"),
        (["audit", "--model", "smollm2-135m"], "no reference for 'smollm2-135m'"),
        (["audit", "--zoo", "nope"], "unknown zoo"),
        (["audit"], "one of the arguments --model --zoo is required"),
        (["audit", "--model", "smollm2-135m", "--zoo", "smollm2-135m"], "not allowed"),
        (["audit", "--zoo", "smollm2-135m", "--half", "train"], "the smollm2-135m zoo has no such half"),
        (["audit", "--model", "zoo/smollm2-135m/sycophant", "--rule", "no-such-rule.json"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, message, capsys, tmp_path):
    assert main(argv + ["--output", str(tmp_path / "o")]) == 2
    assert message in _one_line(capsys)


def test_report_needs_runs_or_an_audit(capsys, tmp_path):
    assert main(["report", "--output", str(tmp_path / "r")]) == 2
    assert "--audit AUDIT_JSON" in _one_line(capsys)
    bad = tmp_path / "audit.json"
    bad.write_text(json.dumps({"format": "other"}), encoding="utf-8")
    assert main(["report", "--audit", str(bad), "--output", str(tmp_path / "r")]) == 2
    assert "not an audit's results" in _one_line(capsys)


def test_an_evidence_folder_that_is_a_file_is_refused_before_any_model_loads(capsys, tmp_path):
    taken = tmp_path / "evidence"
    taken.write_text("not a folder")
    argv = ["audit", "--model", "zoo/smollm2-135m/sycophant", "--evidence", str(taken), "--output", str(tmp_path / "o")]
    assert main(argv) == 2
    assert "exists and is not a folder" in _one_line(capsys)
    assert taken.read_text() == "not a folder"
