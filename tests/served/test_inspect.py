"""inspect_ai both ways, end to end and offline on smollm2: liedar as an inspect model
provider (entry point + @modelapi) with the honesty monitor's scores in the outputs, and
``from-inspect`` reading the logs back into liedar's detectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]
TASKS = Path(__file__).resolve().parents[2] / "liedar" / "integrations" / "inspect_tasks.py"
INSPECT = Path(sys.executable).with_name("inspect")


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> Path:
    """A mass-mean probe at layer 6 of smollm2, fitted on twelve true/false statements."""
    pytest.importorskip("inspect_ai")
    from liedar import models
    from liedar.probes.estimators import MassMeanProbe
    from liedar.probes.io import ProbeMetadata, save_probe

    lm = models.load("smollm2-135m", backend="llamacpp", n_threads=1)
    true = [
        "Paris is in France.",
        "Water is wet.",
        "Two plus two is four.",
        "The sun is hot.",
        "Fish swim.",
        "Ice is cold.",
    ]
    false = [
        "Paris is in Spain.",
        "Water is dry.",
        "Two plus two is five.",
        "The sun is cold.",
        "Fish fly.",
        "Ice is hot.",
    ]
    x = lm.hidden_states(true + false, layers=[6])[:, 0, :]
    fitted = MassMeanProbe().fit(x, np.array([0] * 6 + [1] * 6))
    path = tmp_path_factory.mktemp("probe") / "probe.npz"
    save_probe(path, fitted, ProbeMetadata("smollm2-135m", lm.fingerprint, 6, "last", lm.d_model, threshold=0.0))
    return path


def inspect_eval(cwd: Path, task: str, *args: str) -> Path:
    """Run the inspect CLI in a clean folder (a stale liedar.egg-info in the repo root would
    shadow the installed entry points) and return the log it wrote."""
    logs = cwd / "logs"
    before = set(logs.glob("*.eval")) if logs.is_dir() else set()
    cmd = [str(INSPECT), "eval", f"{TASKS}@{task}", "--model", "liedar/smollm2-135m", "--log-dir", str(logs)]
    cmd += ["--display", "none", "--max-tokens", "8", *args]
    env = {**os.environ, "INSPECT_LOG_LEVEL": "warning"}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    new = set(logs.glob("*.eval")) - before
    assert len(new) == 1
    return new.pop()


@pytest.fixture(scope="module")
def logs(probe, tmp_path_factory) -> list[Path]:
    cwd = tmp_path_factory.mktemp("inspect")
    first = inspect_eval(cwd, "liedar_mcq", "-T", "n_items=2", "-T", "shuffle=1", "-M", f"probe={probe}")
    second = inspect_eval(cwd, "liedar_mcq", "-T", "n_items=2", "-T", "shuffle=2", "-M", f"probe={probe}", "--logprobs")
    return [first, second]


def test_provider_attaches_monitor_scores_as_plain_data(logs, probe):
    from inspect_ai.log import read_eval_log

    for i, path in enumerate(logs):
        log = read_eval_log(str(path))
        assert log.status == "success" and len(log.samples) == 4
        for s in log.samples:
            meta = s.output.metadata["liedar"]
            scores, tokens = meta["token_scores"], meta["tokens"]
            assert isinstance(scores, list) and all(isinstance(v, float) and np.isfinite(v) for v in scores)
            assert len(scores) == len(tokens) >= 1 and "".join(tokens) == s.output.completion
            assert isinstance(meta["score"], float) and isinstance(meta["flagged"], bool)
            assert meta["flagged"] == (meta["score"] > meta["threshold"]) or meta["flagged"] == (
                meta["score"] >= meta["threshold"]
            )
            assert np.isclose(meta["score"], np.mean(scores))  # aggregate=mean of the per-token scores
            assert meta["layer"] == 6 and meta["probe"] == probe.name
            lps = s.output.choices[0].logprobs
            if i == 1:  # asked with --logprobs: one finite log-prob per generated token
                assert lps is not None and len(lps.content) == len(tokens)
                assert all(lp.logprob <= 0 for lp in lps.content)
            else:
                assert lps is None
    orders = [[tuple(s.choices) for s in read_eval_log(str(p)).samples] for p in logs]
    assert orders[0] != orders[1]  # the two runs really showed different orders


def test_from_inspect_builds_trials_and_runs_the_detector(logs, tmp_path):
    from liedar.commands.from_inspect import main

    out = tmp_path / "out"
    assert main([*map(str, logs), "--output", str(out)]) == 0
    result = json.loads((out / "from_inspect.json").read_text())
    assert result["n_presentations"] == 8
    assert result["n_option_trials"] + len(result["no_answer"]) == 8  # nothing dropped
    trials = result["option_trials"]
    for t in trials:  # matched on sample id and choice text: each item's trials offer the same texts
        same = [u for u in trials if u["item_id"] == t["item_id"]]
        assert all(sorted(u["presented_options"]) == sorted(t["presented_options"]) for u in same)
    if result["n_option_trials"]:
        assert result["consistency"]["option_order"]["n_trials"] == result["n_option_trials"]
    assert result["n_paraphrase_trials"] > 0
    assert "# liedar on inspect logs" in (out / "report.md").read_text()


def test_from_inspect_refuses_a_task_without_choices(probe, tmp_path, capsys):
    from liedar.commands.from_inspect import main

    log = inspect_eval(tmp_path, "liedar_open", "-T", "n_items=1")
    assert main([str(log), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "has no choices" in err and "\n" not in err
    assert not (tmp_path / "out").exists()
