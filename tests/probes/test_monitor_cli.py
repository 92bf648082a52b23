"""`liedar monitor` CLI on the fake backend: JSONL parses, markers, calibrate, exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from monitor_support_fake import FakeBackend  # noqa: E402

from liedar import models  # noqa: E402
from liedar.cli import main as _main  # noqa: E402
from liedar.probes.estimators import MassMeanProbe  # noqa: E402
from liedar.probes.io import ProbeMetadata, save_probe  # noqa: E402


@pytest.fixture()
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    backend = FakeBackend()
    monkeypatch.setattr(
        models, "load", lambda name, backend="transformers", n_threads=None: FakeBackend(), raising=False
    )
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, backend.d_model))
    y = np.r_[np.zeros(20), np.ones(20)].astype(int)
    X[y == 1] += 0.5
    meta = ProbeMetadata("fake-model", backend.fingerprint, 2, "last", backend.d_model)
    probe = save_probe(tmp_path / "probe.npz", MassMeanProbe().fit(X, y), meta)
    return tmp_path, probe


def test_jsonl_parses_one_record_per_token(setup, capsys) -> None:
    tmp, probe = setup
    out = tmp / "tokens.jsonl"
    code = _main(
        ["monitor", "--model", "fake", "--probe", str(probe), "--jsonl", str(out), "--threshold", "-100", "Q?"]
    )
    assert code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == len(FakeBackend().continuation.split())
    assert set(records[0]) >= {"index", "token_id", "text", "score", "flagged"}
    assert [r["index"] for r in records] == list(range(len(records)))
    assert all(r["flagged"] for r in records)  # threshold -100
    text = capsys.readouterr().out
    assert "[FLAGGED" in text and "\033[" not in text  # plain markers when not a tty
    assert "FLAGGED;" in text.splitlines()[-1]


def test_run_subcommand_explicit_and_colour(setup, capsys) -> None:
    tmp, probe = setup
    code = _main(
        ["monitor", "run", "--model", "fake", "--probe", str(probe), "--threshold", "-100", "--color", "always", "Q?"]
    )
    assert code == 0
    assert "\033[1;31m" in capsys.readouterr().out


def test_no_flags_no_markers(setup, capsys) -> None:
    tmp, probe = setup
    assert _main(["monitor", "--model", "fake", "--probe", str(probe), "--threshold", "1e9", "Q?"]) == 0
    out = capsys.readouterr().out
    assert "[FLAGGED" not in out and "not flagged" in out


def test_calibrate_then_run_with_threshold_file(setup, capsys) -> None:
    tmp, probe = setup
    control = tmp / "control.jsonl"
    rows = [{"prompt": f"Question {i}?", "response": f" Answer number {i} is here."} for i in range(60)]
    rows.append({"prompt": "Q?", "response": " lie", "label": "deceptive"})
    control.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp / "threshold.json"
    code = _main(
        [
            "monitor",
            "calibrate",
            "--model",
            "fake",
            "--probe",
            str(probe),
            "--control",
            str(control),
            "--fpr",
            "0.1",
            "--output",
            str(out),
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert data["n_calibration"] + data["n_held_out"] == 60 and len(data["scores"]) == 60
    assert data["achieved_fpr"]["lo"] <= data["achieved_fpr"]["value"] <= data["achieved_fpr"]["hi"]
    assert "held-out FPR" in capsys.readouterr().out
    assert _main(["monitor", "--model", "fake", "--probe", str(probe), "--threshold", str(out), "Q?"]) == 0
    assert f"threshold {data['threshold']:.3f}" in capsys.readouterr().out
    code = _main(
        ["monitor", "--model", "fake", "--probe", str(probe), "--aggregate", "max", "--threshold", str(out), "Q?"]
    )
    assert code == 2


@pytest.mark.parametrize(
    "argv_tail,match",
    [
        (["--control", "{control}", "--fpr", "0.01"], "no honest items"),
        (["--control", "{control}", "--fpr", "1.5"], "--fpr: 1.5 is not strictly between 0 and 1"),
    ],
)
def test_calibrate_without_honest_items_exits_2(setup, capsys, argv_tail, match) -> None:
    tmp, probe = setup
    control = tmp / "control.jsonl"
    control.write_text(json.dumps({"prompt": "Q?", "response": "A", "label": "deceptive"}) + "\n")
    argv = ["monitor", "calibrate", "--model", "fake", "--probe", str(probe), "--output", str(tmp / "o.json")]
    argv += [a.format(control=control) for a in argv_tail]
    assert _main(argv) == 2
    err = capsys.readouterr().err
    assert match in err and len(err.strip().splitlines()) == 1
    assert not (tmp / "o.json").exists()


@pytest.mark.parametrize(
    "extra,match",
    [
        (["   "], "empty"),
        (["--max-tokens", "0", "Q?"], "max-tokens"),
        (["--threshold", "nope", "Q?"], "neither a number"),
        (["--probe-missing"], None),
    ],
)
def test_bad_input_exits_2(setup, capsys, extra, match) -> None:
    tmp, probe = setup
    if match is None:  # missing probe file
        argv = ["monitor", "--model", "fake", "--probe", str(tmp / "nope.npz"), "Q?"]
        match = "does not exist"
    else:
        argv = ["monitor", "--model", "fake", "--probe", str(probe), *extra]
    assert _main(argv) == 2
    assert match in capsys.readouterr().err


def test_jsonl_not_left_behind_on_error(setup, monkeypatch) -> None:
    tmp, probe = setup
    out = tmp / "t.jsonl"
    assert _main(["monitor", "--model", "fake", "--probe", str(probe), "--jsonl", str(out), "word " * 200]) == 2
    assert not out.exists() and not list(tmp.glob(".t.jsonl*"))


def test_audit_scores_recorded_transcripts_and_reports_labelled_rates(setup, capsys) -> None:
    from liedar.probes.evaluation import auroc
    from liedar.probes.monitor import HonestyMonitor

    tmp, probe = setup
    rows = [
        {"id": f"h{i}", "prompt": f"Question {i}?", "response": f" Answer number {i} is here.", "label": "honest"}
        for i in range(6)
    ]
    rows += [
        {"id": f"d{i}", "prompt": f"Question {i}?", "response": f" lie lie {i}.", "label": "lie"} for i in range(4)
    ]
    rows += [
        {
            "dialogue": [
                {"role": "user", "content": "Hi?"},
                {"role": "assistant", "content": " Hello there.", "detect": True},
            ]
        }
    ]
    transcripts, out = tmp / "recorded.jsonl", tmp / "scores.jsonl"
    transcripts.write_text("\n".join(json.dumps(r) for r in rows))
    argv = [
        "monitor",
        "audit",
        "--model",
        "fake",
        "--probe",
        str(probe),
        "--transcripts",
        str(transcripts),
        "--threshold",
        "0.0",
        "--output",
        str(out),
    ]
    assert _main(argv) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == [r.get("id", "11") for r in rows]
    assert [r["label"] for r in records] == ["honest"] * 6 + ["deceptive"] * 4 + [None]
    assert all(r["flagged"] == (r["score"] > 0.0) for r in records)
    mon = HonestyMonitor.from_file(FakeBackend(), probe, threshold=0.0)
    assert records[7]["score"] == pytest.approx(mon.score_transcript(rows[7]["prompt"], rows[7]["response"]).score)
    text = capsys.readouterr().out
    n_flagged = sum(r["flagged"] for r in records)
    assert f"{n_flagged}/11 transcripts flagged" in text
    assert "false-positive rate on 6 honest" in text and "recall on 4 deceptive" in text
    auc = auroc([r["score"] for r in records[:10]], [0] * 6 + [1] * 4)
    assert f"AUROC honest vs deceptive: {auc.value:.3f}" in text
    assert "1 transcripts carry no label" in text


def test_audit_bad_input_exits_2_before_loading(setup, capsys, monkeypatch) -> None:
    tmp, probe = setup
    monkeypatch.setattr(models, "load", lambda *a, **k: pytest.fail("loaded a model for a bad file"), raising=False)
    bad = tmp / "bad.jsonl"
    for content, match in [
        ("", "holds no transcripts"),
        ('{"prompt": "Q?", "label": "honest"}', "non-empty 'prompt'"),
        ('{"prompt": "Q?", "response": "A", "label": "maybe"}', "label 'maybe'"),
    ]:
        bad.write_text(content)
        argv = ["monitor", "audit", "--model", "fake", "--probe", str(probe), "--transcripts", str(bad)]
        assert _main(argv) == 2
        err = capsys.readouterr().err
        assert match in err and len(err.strip().splitlines()) == 1


def test_audit_warns_when_auditing_the_calibration_file(setup, capsys) -> None:
    tmp, probe = setup
    control, other, cal = tmp / "control.jsonl", tmp / "other.jsonl", tmp / "threshold.json"
    rows = [{"prompt": f"Question {i}?", "response": f" Answer number {i} is here."} for i in range(12)]
    control.write_text("\n".join(json.dumps(r) for r in rows))
    other.write_text("\n".join(json.dumps(r) for r in rows[:6]))
    assert (
        _main(
            [
                "monitor",
                "calibrate",
                "--model",
                "fake",
                "--probe",
                str(probe),
                "--control",
                str(control),
                "--fpr",
                "0.2",
                "--output",
                str(cal),
            ]
        )
        == 0
    )
    capsys.readouterr()
    base = ["monitor", "audit", "--model", "fake", "--probe", str(probe), "--threshold", str(cal)]
    assert _main(base + ["--transcripts", str(control)]) == 0
    assert "calibrated on this same file" in capsys.readouterr().out
    assert _main(base + ["--transcripts", str(other)]) == 0
    assert "calibrated on this same file" not in capsys.readouterr().out
