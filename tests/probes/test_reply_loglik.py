"""The reply log-likelihood baseline (`reply_loglik_scores`) and the lie-probe transfer
script's ``--styles`` / ``--record`` on the tiny random model: real tokenizer, chat template
and forward passes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from liedar.core.errors import InputError
from liedar.models.chat import Dialogue, Message, render
from liedar.probes.datasets import StatementSet
from liedar.probes.evaluation import reply_loglik_scores

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="module")
def tiny_backend(tiny_model_dir):
    import torch

    torch.set_num_threads(1)
    from liedar import models

    return models.load(str(tiny_model_dir), backend="transformers", n_threads=1)


def _set(inputs: list, labels: list[int]) -> StatementSet:
    n = len(inputs)
    return StatementSet(
        "d", inputs, np.array(labels), np.full(n, "t"), np.full(n, "affirmative"), np.full(n, "r"), np.arange(n)
    )


def _dialogues() -> StatementSet:
    system = Message("system", "You are a seller. The sky is blue.")
    user = Message("user", "Is the sky blue?")
    replies = ["Yes, the sky is blue.", "No, the grass is green."]
    return _set([Dialogue.of(system, user, Message("assistant", r, detect=True)) for r in replies], [1, 0])


def test_reply_loglik_is_the_reply_tokens_log_probability_in_the_whole_dialogue(tiny_backend) -> None:
    S = _dialogues()
    got = reply_loglik_scores(tiny_backend, S)
    for d, score in zip(S.inputs, got):
        # independent route: the whole rendered dialogue in one pass, summing the tokens that
        # carry the reply's characters
        b = tiny_backend
        full = render(d, b.chat_template, bos_token=b.bos_token, eos_token=b.eos_token, add_generation_prompt=False)
        reply = d.messages[-1].content
        start = full.text.rindex(reply)
        ids, offsets = b.tokenize(full.text, full.templated)
        lp = b.token_logprobs_of_ids([ids])[0]
        picked = [t for t, (a, e) in enumerate(offsets) if a < start + len(reply) and e > start]
        assert picked and picked[0] > 0
        assert score == pytest.approx(-float(sum(lp[t - 1] for t in picked)), abs=1e-3)
    assert got[0] != got[1]  # different replies, different log-likelihoods


def test_reply_loglik_refuses_text_and_a_dialogue_not_ending_in_the_reply(tiny_backend) -> None:
    S = _dialogues()
    with pytest.raises(InputError, match="dialogues"):
        reply_loglik_scores(tiny_backend, _set(["The sky is blue."], [1]))
    with pytest.raises(InputError, match="ends with a user message"):
        reply_loglik_scores(tiny_backend, _set([Dialogue(S.inputs[0].messages[:2])], [1]))


def _script(name: str):
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_lie_transfer_runs_one_style_with_its_baseline_and_record(tiny_model_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    lpt = _script("lie_probe_transfer")
    out, record = tmp_path / "lie.json", tmp_path / "record.json"
    argv = [str(tmp_path / "no-datasets"), "--models", str(tiny_model_dir), "--styles", "roleplay"]
    argv += ["--output", str(out), "--record", str(record)]
    assert lpt.main(argv) == 0
    rec = json.loads(record.read_text())
    assert {"command", "date", "cpu"} <= set(rec) and rec["cpu"]["mode"] in ("native", "AVX2 emulation")
    assert rec["what"].startswith("Lie-probe transfer")
    (model,) = rec["models"]
    assert model["backend"] == "transformers"
    assert set(model["reply_loglik"]) == {"roleplay"} and model["reply_loglik"]["roleplay"]["n"] == 60
    for probe in model["probes"].values():
        assert list(probe["cells"]) == ["roleplay -> roleplay"]  # only training sets made of the run's styles
    # no baseline asked: none computed
    assert lpt.main(argv[:-2] + ["--loglik-styles"]) == 0
    assert "reply_loglik" not in json.loads(out.read_text())["models"][0]


def test_reproduce_probes_refuses_a_dtype_for_llamacpp_before_any_work(tmp_path) -> None:
    rp = _script("reproduce_probes")
    with pytest.raises(InputError, match="--device/--dtype apply to the transformers backend"):
        rp.main([str(tmp_path), "--backend", "llamacpp", "--dtype", "bfloat16", "--models", "qwen2.5-coder-1.5b"])
