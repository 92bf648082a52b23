"""Integration: the shipped smollm2-135m through both backends (pins the layer convention)."""

from __future__ import annotations

import numpy as np
import pytest
from workers import THREADS

from liedar.core.errors import InputError
from liedar.models.chat import Dialogue, Message

pytestmark = pytest.mark.integration

TEXT = "Paris is the capital of France, and Rome is the capital of Italy."
TEXTS = [
    "The Eiffel Tower is in Berlin.",
    TEXT,
    "Water boils at 100 degrees Celsius at sea level, which is why pasta cooks fast.",
]
DIALOGUE = Dialogue.of(
    Message("user", "Is the Eiffel Tower in Paris?"), Message("assistant", "Yes, it is in Paris.", detect=True)
)


def _cos(a, b):
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


def test_same_model_same_fingerprint_and_tokens(smollm2_llamacpp, smollm2_transformers):
    assert smollm2_llamacpp.fingerprint == smollm2_transformers.fingerprint
    assert (smollm2_llamacpp.n_layers, smollm2_llamacpp.d_model) == (smollm2_transformers.n_layers, 576)
    for x in TEXTS + [DIALOGUE]:
        a, b = smollm2_llamacpp.encode(x), smollm2_transformers.encode(x)
        assert a.rendered.text == b.rendered.text and a.ids == b.ids and a.offsets == b.offsets
        assert (a.detect == b.detect).all()


def test_backends_agree_layer_by_layer_on_the_same_ids(smollm2_llamacpp, smollm2_transformers):
    ids = smollm2_llamacpp.encode(TEXT).ids
    layers = [0, 1, 6, 15, 24, 29, 30, 31]
    a = smollm2_llamacpp.token_states_of_ids(ids, layers).hidden
    b = smollm2_transformers.token_states_of_ids(ids, layers).hidden
    for j, layer in enumerate(layers):
        worst = _cos(a[:, j], b[:, j]).min()
        # intermediate layers: measured >= 0.9996; the last block and final norm: >= 0.9988
        assert worst >= (0.999 if layer < 30 else 0.998), (layer, worst)
    # neighbouring layers differ (an off-by-one would make these agree instead)
    assert _cos(a[:, 3], b[:, 2]).mean() < 0.99


def test_hidden_states_api_agrees_across_backends(smollm2_llamacpp, smollm2_transformers):
    for position in ("last", "mean"):
        a = smollm2_llamacpp.hidden_states(TEXTS + [DIALOGUE], [6, 15], position)
        b = smollm2_transformers.hidden_states(TEXTS + [DIALOGUE], [6, 15], position)
        assert _cos(a, b).min() >= 0.999


def test_alone_equals_padded_batch(smollm2_transformers):
    lm = smollm2_transformers
    alone = lm.hidden_states([TEXTS[0]], [6, 30], "mean")
    batch = lm.hidden_states(TEXTS, [6, 30], "mean")  # batched with two longer texts
    np.testing.assert_allclose(batch[0], alone[0], rtol=1e-4, atol=1e-3)


def test_layer_i_is_the_frameworks_block_i_output(smollm2_transformers):
    import torch

    lm = smollm2_transformers
    ids = lm.encode(TEXT).ids
    got = {}
    hooks = [
        lm.model.model.layers[i - 1].register_forward_hook(lambda m, a, o, i=i: got.setdefault(i, o)) for i in (6, 30)
    ]
    hooks.append(lm.model.model.norm.register_forward_hook(lambda m, a, o: got.setdefault("norm", o)))
    with torch.no_grad():
        lm.model(input_ids=torch.tensor([ids]))
    for h in hooks:
        h.remove()
    ours = lm.token_states_of_ids(ids, [6, 30, 31]).hidden
    for j, key in enumerate((6, 30, "norm")):
        out = got[key][0] if isinstance(got[key], tuple) else got[key]
        np.testing.assert_allclose(ours[:, j], out[0].numpy(), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("which", ["smollm2_llamacpp", "smollm2_transformers"])
def test_streamed_states_equal_offline_states(which, request, monkeypatch):
    lm = request.getfixturevalue(which)
    prompt = Dialogue.of(Message("user", "Name a large city in France."))
    reads = []
    real_read = lm._gen_read
    monkeypatch.setattr(lm, "_gen_read", lambda *a: reads.append(a) or real_read(*a))
    steps = []
    gen = lm.generate(prompt, max_tokens=8, hook_layer=15, on_token=steps.append)
    assert len(steps) == len(gen.token_ids) == 8
    assert len(reads) == 1  # the last token's state came from the forward pass stopped at layer 15
    prompt_ids = lm.encode(prompt, add_generation_prompt=True).ids
    offline = lm.token_states_of_ids(prompt_ids + gen.token_ids, [15]).hidden[len(prompt_ids) :, 0]
    streamed = np.stack([s.hidden for s in steps])
    assert _cos(streamed, offline).min() >= 0.9999
    np.testing.assert_allclose(streamed, offline, rtol=1e-3, atol=2e-2)


@pytest.mark.parametrize("which", ["smollm2_llamacpp", "smollm2_transformers"])
def test_score_options_prefers_the_fact(which, request):
    lm = request.getfixturevalue(which)
    paris, rome = lm.score_options("The capital of France is", [" Paris", " Rome"])
    assert paris > rome + 3 and paris > -1.0


def test_llamacpp_bad_input(smollm2_llamacpp):
    with pytest.raises(InputError, match=r"valid layers are 0\.\.31"):
        smollm2_llamacpp.hidden_states([TEXT], [32])
    with pytest.raises(InputError, match="refused"):
        smollm2_llamacpp.hidden_states(["Paris " * 3000], [6])


def test_gemma3_on_llamacpp_reads_scaled_embeddings():
    from liedar import models
    from liedar.core.errors import ModelUnavailableError

    try:
        lm = models.load("gemma3-270m", backend="llamacpp", n_threads=THREADS)
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))
    assert (lm.n_layers, lm.d_model, lm._embd_name) == (18, 640, b"inp_scaled")
    h = lm.hidden_states([TEXT, DIALOGUE], [0, 9, 19], "mean")
    assert h.shape == (2, 3, 640) and np.isfinite(h).all()
    paris, rome = lm.score_options("The capital of France is", [" Paris", " Rome"])
    assert paris > rome


def test_llamacpp_tensor_layout_check_fails_loudly(smollm2_llamacpp, monkeypatch):
    """If the ggml_tensor struct we read did not match the library, we must refuse, not
    return garbage: simulate a mismatch by reading the shape 8 bytes off its real offset."""
    from liedar.core.errors import IncompatibleError

    state = smollm2_llamacpp._capture.state
    monkeypatch.setattr(state, "ne_offset", state.ne_offset + 8)
    with pytest.raises(IncompatibleError, match="layout"):
        smollm2_llamacpp.token_states_of_ids([1, 2, 3], [6])


def test_llamacpp_capture_paths_agree_and_none_is_bare(smollm2_llamacpp):
    """The C callback, the Python fallback and no callback at all compute the same model:
    identical states (native vs python) and identical greedy tokens (all three)."""
    from liedar import models
    from liedar.core.errors import IncompatibleError

    assert smollm2_llamacpp.capture_path == "native"
    python = models.load("smollm2-135m", backend="llamacpp", n_threads=THREADS, capture="python")
    bare = models.load("smollm2-135m", backend="llamacpp", n_threads=THREADS, capture="none")
    assert python.capture_path == "python" and bare.capture_path == "none"
    layers = [0, 15, 30, 31]
    np.testing.assert_array_equal(
        smollm2_llamacpp.hidden_states(TEXTS, layers, "mean"), python.hidden_states(TEXTS, layers, "mean")
    )
    prompt = Dialogue.of(Message("user", "Name a large city in France."))
    tokens = smollm2_llamacpp.generate(prompt, max_tokens=12).token_ids
    assert python.generate(prompt, max_tokens=12).token_ids == tokens == bare.generate(prompt, max_tokens=12).token_ids
    with pytest.raises(IncompatibleError, match="capture='none'"):
        bare.hidden_states([TEXT], [15])
    with pytest.raises(InputError, match="capture="):
        models.load("smollm2-135m", backend="llamacpp", capture="fast")
