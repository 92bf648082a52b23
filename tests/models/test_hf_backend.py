"""TransformersBackend on a tiny random model: layer numbering, pooling, padding, scoring,
streaming. Fast (no shipped model)."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.core.errors import InputError
from liedar.models.backend import Backend, Span
from liedar.models.chat import Dialogue, Message

TEXTS = [
    "Paris is the capital of France.",
    "Rome is in Italy.",
    "Two plus two equals four; three times three equals nine.",
]


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    import torch

    from liedar import models

    torch.set_num_threads(1)
    return models.load(str(tiny_model_dir), backend="transformers", n_threads=1)


def test_backend_protocol_and_metadata(lm):
    assert isinstance(lm, Backend)
    assert (lm.kind, lm.n_layers, lm.d_model) == ("transformers", 3, 48)
    assert len(lm.fingerprint) == 64
    assert lm.model is not None and lm.tokenizer is not None


def test_shape_dtype_and_layer_range(lm):
    h = lm.hidden_states(TEXTS, layers=[0, 2, 4])
    assert h.shape == (3, 3, 48) and h.dtype == np.float32
    with pytest.raises(InputError, match=r"valid layers are 0\.\.4"):
        lm.hidden_states(TEXTS, layers=[5])
    with pytest.raises(InputError, match="non-empty"):
        lm.hidden_states([], layers=[1])


def test_layer_i_is_block_i_output(lm):
    """Layer 0 = embeddings, i = block i's own output (hooked independently), n+1 = final norm."""
    import torch

    ids = torch.tensor([lm.tokenizer(TEXTS[0])["input_ids"]])
    captured = {}
    handle = lm.model.model.layers[2].register_forward_hook(lambda m, a, o: captured.setdefault("b3", o))
    with torch.no_grad():
        out = lm.model(input_ids=ids, output_hidden_states=True)
    handle.remove()
    block3 = captured["b3"][0] if isinstance(captured["b3"], tuple) else captured["b3"]
    ours = lm.token_states(TEXTS[0], layers=[0, 1, 2, 3, 4]).hidden
    hf = out.hidden_states
    np.testing.assert_allclose(ours[:, 0], hf[0][0].numpy(), atol=1e-5)
    np.testing.assert_allclose(ours[:, 1], hf[1][0].numpy(), atol=1e-5)
    np.testing.assert_allclose(ours[:, 2], hf[2][0].numpy(), atol=1e-5)
    np.testing.assert_allclose(ours[:, 3], block3[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(ours[:, 4], hf[3][0].numpy(), atol=1e-5)  # HF's last entry = final norm
    assert not np.allclose(ours[:, 3], ours[:, 4], atol=1e-3)


@pytest.mark.parametrize("position", ["last", "mean", Span(0, 5)])
def test_same_alone_and_in_padded_batch(lm, position):
    short = "Rome is in Italy."
    alone = lm.hidden_states([short], layers=[1, 3], position=position)
    lm.batch_size = 4
    batch = lm.hidden_states([TEXTS[2], short, TEXTS[0] * 3], layers=[1, 3], position=position)
    np.testing.assert_allclose(batch[1], alone[0], rtol=1e-4, atol=1e-4)


def test_positions_select_the_documented_tokens(lm):
    ts = lm.token_states(TEXTS[0], layers=[2])
    last = lm.hidden_states([TEXTS[0]], [2], "last")[0, 0]
    mean = lm.hidden_states([TEXTS[0]], [2], "mean")[0, 0]
    np.testing.assert_allclose(last, ts.hidden[-1, 0], atol=1e-5)
    real = [t for t, (a, b) in enumerate(ts.offsets) if b > a]
    np.testing.assert_allclose(mean, ts.hidden[real, 0].mean(0), atol=1e-5)
    span = lm.hidden_states([TEXTS[0]], [2], Span(0, 5))[0, 0]  # "Paris"
    rows = [t for t, (a, b) in enumerate(ts.offsets) if b > a and a < 5]
    np.testing.assert_allclose(span, ts.hidden[rows, 0].mean(0), atol=1e-5)
    with pytest.raises(InputError, match="covers no token"):
        lm.hidden_states([TEXTS[0]], [2], Span(500, 600))


def test_dialogue_uses_chat_template_and_pools_only_detect_tokens(lm):
    dlg = Dialogue.of(Message("user", "Is Rome in Italy?"), Message("assistant", "Yes it is.", detect=True))
    ts = lm.token_states(dlg, layers=[2])
    expected = lm.tokenizer.apply_chat_template([m for m in dlg.to_dict()], tokenize=False)
    assert expected.startswith(ts.text)  # our renderer == HF's (ours stops after the final assistant text)
    detected = "".join(t for t, d in zip(ts.token_texts, ts.detect) if d)
    assert detected == "Yes it is."
    mean = lm.hidden_states([dlg], [2], "mean")[0, 0]
    np.testing.assert_allclose(mean, ts.hidden[ts.detect, 0].mean(0), atol=1e-5)
    no_detect = Dialogue.of(Message("user", "Hi"))
    with pytest.raises(InputError, match="detect=True"):
        lm.hidden_states([no_detect], [2])


def test_too_long_input_is_refused(lm):
    with pytest.raises(InputError, match="refused"):
        lm.hidden_states(["Paris " * 400], [1])


def test_score_options_matches_manual_logprobs_and_handles_boundary(lm):
    import torch

    prompt = "The capital of France is"
    scores = lm.score_options(prompt, [" Paris", " Rome"])
    for option, score in zip([" Paris", " Rome"], scores):
        full = lm.tokenizer(prompt + option)["input_ids"]
        n_prompt = len(lm.tokenizer(prompt)["input_ids"])
        with torch.no_grad():
            logp = torch.log_softmax(lm.model(input_ids=torch.tensor([full])).logits[0], -1)
        manual = sum(float(logp[t - 1, full[t]]) for t in range(n_prompt, len(full)))
        assert score == pytest.approx(manual, abs=1e-4)
    # a prompt ending in a space: the " is" token straddles the boundary and counts as the option's
    assert len(lm.tokenizer(" is")["input_ids"]) == 1  # " is" is one token that the boundary cuts
    spaced = lm.score_options("The capital of France ", ["is"])
    joined = lm.score_options("The capital of France", [" is"])
    assert spaced[0] == pytest.approx(joined[0], abs=1e-5)
    with pytest.raises(InputError):
        lm.score_options(prompt, [])


def test_single_token_options_fast_path_equals_per_option_scoring(lm, monkeypatch):
    """Letters / Yes-No are scored from one forward pass of the shared prefix; that must
    give the same numbers as scoring each option's full sequence."""
    prompt = "Question: is Paris in France? Answer: "
    options = ["A", "B", "C"]  # one token each in the tiny vocabulary (checked below)
    head = lm.encode(prompt, add_generation_prompt=True).rendered.text
    seqs = [lm._tokenize(head + o, False)[0] for o in options]
    prefix = len(seqs[0]) - 1
    assert all(len(s) == prefix + 1 and s[:prefix] == seqs[0][:prefix] for s in seqs), "options must be one token each"
    assert len(lm._tokenize(head, False)[0]) == prefix  # the option adds exactly one token
    slow = [float(lp[prefix - 1 :].sum()) for lp in lm._token_logprobs(seqs)]
    monkeypatch.setattr(lm, "_token_logprobs", lambda seqs: pytest.fail("single-token options took the slow path"))
    assert lm.score_options(prompt, options) == pytest.approx(slow, abs=1e-4)


@pytest.mark.parametrize("layer", [0, 2, 4])
def test_streamed_states_equal_offline_token_states(lm, layer, monkeypatch):
    reads = []
    real_read = lm._gen_read
    monkeypatch.setattr(lm, "_gen_read", lambda *a: reads.append(a) or real_read(*a))
    steps = []
    gen = lm.generate("Paris is", max_tokens=4, temperature=0.0, on_token=steps.append, hook_layer=layer)
    assert [s.token_id for s in steps] == gen.token_ids and len(steps) == 4
    assert len(reads) == 1  # the budget's last token took the stop-early path
    prompt_ids = lm.encode("Paris is", add_generation_prompt=True).ids
    offline = lm.token_states_of_ids(prompt_ids + gen.token_ids, layers=[layer]).hidden[:, 0]
    streamed = np.stack([s.hidden for s in steps])
    np.testing.assert_allclose(streamed, offline[len(prompt_ids) :], atol=1e-4)


def test_generate_greedy_is_deterministic_and_sampling_is_seeded(lm):
    a = lm.generate("Paris is", max_tokens=8)
    assert lm.generate("Paris is", max_tokens=8).token_ids == a.token_ids
    s1 = lm.generate("Paris is", max_tokens=8, temperature=1.5, seed=1).token_ids
    assert lm.generate("Paris is", max_tokens=8, temperature=1.5, seed=1).token_ids == s1
    others = {tuple(lm.generate("Paris is", max_tokens=8, temperature=1.5, seed=s).token_ids) for s in range(2, 6)}
    assert len(others | {tuple(s1)}) > 1


def test_weights_can_be_perturbed_and_restored_in_place(lm):
    import torch

    before = lm.hidden_states([TEXTS[0]], [3])
    p = next(lm.model.parameters())
    saved = p.detach().clone()
    with torch.no_grad():
        p.add_(0.5)
    assert not np.allclose(lm.hidden_states([TEXTS[0]], [3]), before)
    with torch.no_grad():
        p.copy_(saved)
    np.testing.assert_array_equal(lm.hidden_states([TEXTS[0]], [3]), before)


def test_options_sharing_a_prompt_score_as_full_sequences(lm):
    """Cloze options of several tokens: the prompt is run once and its KV cache repeated, and
    each option's log-probability equals the one read from its full prompt + option sequence."""
    from liedar.models.chat import render

    prompts = [
        Dialogue.of(
            Message("system", "You are a helpful assistant."),
            Message("user", "Question: What is the capital of France?"),
            Message("assistant", "Answer:"),
        ),
        Dialogue.of(Message("user", "Question: Which city?")),
        "Question: What colour is the sky?\nAnswer:",
    ]
    options = [" Paris", " Rome is nice", " Berlin, Madrid and Lisbon", " two plus two"]
    for prompt in prompts:
        head = render(
            prompt, lm.chat_template, bos_token=lm.bos_token, eos_token=lm.eos_token, add_generation_prompt=True
        )
        want = []
        for option in options:
            ids, offsets = lm.tokenize(head.text + option, head.templated)
            k = next(t for t, (a, b) in enumerate(offsets) if b > len(head.text))
            want.append(float(lm.token_logprobs_of_ids([ids])[0][k - 1 :].sum()))
        got = lm.score_options(prompt, options)
        assert np.allclose(got, want, atol=1e-4), (prompt, got, want)


@pytest.mark.parametrize(("env", "expected"), [(None, 2), ("1", 1), ("3", 3), ("0", 2), ("two", 2)])
def test_default_threads_follow_omp_num_threads(monkeypatch, env, expected):
    """A model loaded without ``n_threads`` runs on ``OMP_NUM_THREADS`` threads when it is a
    positive whole number (a scheduler's or test runner's one-per-core), else on 2."""
    from liedar.models.base import default_threads

    if env is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", env)
    assert default_threads() == expected


def test_a_model_loaded_without_threads_uses_the_default(tiny_model_dir, monkeypatch):
    import torch

    from liedar.models.hf import TransformersBackend

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    TransformersBackend(tiny_model_dir)
    assert torch.get_num_threads() == 1
