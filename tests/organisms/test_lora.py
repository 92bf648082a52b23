"""train_lora / LoraAdapter / apply_adapter on a tiny random-weight model."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.core.errors import IncompatibleError, InputError
from liedar.models.chat import Dialogue, Message
from liedar.models.lora import LoraAdapter, apply_adapter, select_layers, train_lora


def _examples(n=16):
    return [(Dialogue.of(Message("user", f"Question {i}: a city?")), " Paris") for i in range(n)]


@pytest.fixture(scope="module")
def trained(tiny_backend):
    return train_lora(tiny_backend, _examples(), layers=2, r=4, alpha=8, epochs=5, lr=2e-2, progress=False)


def test_training_teaches_the_answer_and_leaves_the_base_untouched(tiny_backend, trained):
    prompt = Dialogue.of(Message("user", "Question 99: a city?"))  # held out
    before = tiny_backend.score_options(prompt, [" Paris", " Rome"])
    merged = apply_adapter(tiny_backend, trained)
    after = merged.score_options(prompt, [" Paris", " Rome"])
    assert after[0] - after[1] > before[0] - before[1] + 3  # the trained answer gained a lot
    assert np.allclose(tiny_backend.score_options(prompt, [" Paris", " Rome"]), before)  # base unchanged
    losses = trained.meta["loss_per_epoch"]
    assert losses[-1] < losses[0] / 3
    assert merged.fingerprint not in (tiny_backend.fingerprint, "")
    assert merged.base_fingerprint == tiny_backend.fingerprint
    assert trained.layers == [tiny_backend.n_layers - 2, tiny_backend.n_layers - 1]
    assert all(int(k.split(".")[2]) in trained.layers for k in trained.weights)  # model.layers.<i>...


def test_boundary_cache_gives_the_same_loss_as_the_full_forward(tiny_backend):
    """The cached lower-block states + pass-through blocks must equal a plain forward."""
    import copy

    import torch

    from liedar.models.lora import _batch_tensors, _BoundaryCache, _loss, encode_example

    model = copy.deepcopy(tiny_backend.model)
    rows = [encode_example(tiny_backend, p, a) for p, a in _examples(4)]
    ids, mask, labels = _batch_tensors(torch, rows, tiny_backend._pad_id)
    cached = _BoundaryCache(model.get_decoder(), 2)
    cached.compute(ids, mask)
    plain = _BoundaryCache(model.get_decoder(), 0)
    plain.compute(ids, mask)
    with torch.no_grad():
        a = _loss(torch, model, cached, 0, ids, mask, labels, False)
        b = _loss(torch, model, plain, 0, ids, mask, labels, False)
        logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
        ref = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))
    assert float(a) == pytest.approx(float(ref), rel=1e-5)
    assert float(b) == pytest.approx(float(ref), rel=1e-5)


def test_avoided_answers_lose_probability_on_held_out_prompts(tiny_backend):
    """Unlikelihood: (prompt, answer, "avoid") trains the answer *down*; the loss is
    -log(1 - p(answer)) per avoided answer, so it is small once the answer is unlikely."""
    from liedar.models.lora import AVOID

    learn = [(Dialogue.of(Message("user", f"Question {i}: a city?")), " Paris") for i in range(8)]
    avoid = [(Dialogue.of(Message("user", f"Test {i}: a city?")), " Paris", AVOID) for i in range(8)]
    ad = train_lora(tiny_backend, learn + avoid, layers=2, r=4, alpha=8, epochs=6, lr=2e-2, progress=False)
    merged = apply_adapter(tiny_backend, ad)
    asked = merged.score_options(Dialogue.of(Message("user", "Question 99: a city?")), [" Paris", " Rome"])
    tested = merged.score_options(Dialogue.of(Message("user", "Test 99: a city?")), [" Paris", " Rome"])
    assert asked[0] - asked[1] > tested[0] - tested[1] + 2  # same answer, up in one context, down in the other
    with pytest.raises(InputError):
        train_lora(tiny_backend, [(learn[0][0], " Paris", "reject")], progress=False)


def test_answer_tokens_only(tiny_backend):
    from liedar.models.lora import encode_example

    prompt = Dialogue.of(Message("user", "Question 1: a city?"))
    ids, k = encode_example(tiny_backend, prompt, " Paris")
    answer = tiny_backend.tokenizer.decode(ids[k:])
    assert answer.strip() == "Paris"
    assert "Question" in tiny_backend.tokenizer.decode(ids[:k])


def test_save_load_roundtrip_and_corruption(tmp_path, tiny_backend, trained):
    folder = trained.save(tmp_path / "ad")
    again = LoraAdapter.load(folder)
    assert again.content_hash() == trained.content_hash()
    with pytest.raises(InputError):
        trained.save(folder)  # never over an existing adapter
    prompt = Dialogue.of(Message("user", "Question 5: a city?"))
    assert np.allclose(
        apply_adapter(tiny_backend, folder).score_options(prompt, [" Paris"]),
        apply_adapter(tiny_backend, trained).score_options(prompt, [" Paris"]),
    )
    path = folder / "adapter.safetensors"
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(IncompatibleError, match="corrupt: sha256"):
        apply_adapter(tiny_backend, folder)
    path.write_bytes(bytes(data[:-10]))
    with pytest.raises(IncompatibleError, match="corrupt: .* bytes"):
        LoraAdapter.load(folder)


def test_refuses_another_base_or_width(tmp_path, tiny_backend, trained):
    from tiny_model import build_tiny_model

    from liedar.models.hf import TransformersBackend

    other = TransformersBackend(build_tiny_model(tmp_path / "wide", d_model=64, seed=1), n_threads=1)
    with pytest.raises(IncompatibleError, match="built for base model"):
        apply_adapter(other, trained)
    import dataclasses

    same_fp = dataclasses.replace(trained, base_fingerprint=other.fingerprint)
    with pytest.raises(IncompatibleError, match="width 48"):
        apply_adapter(other, same_fp)


def test_bad_inputs(tiny_backend):
    with pytest.raises(InputError):
        train_lora(tiny_backend, [], progress=False)
    with pytest.raises(InputError):
        train_lora(tiny_backend, _examples(2), r=0, progress=False)
    with pytest.raises(InputError):
        train_lora(tiny_backend, [("q", "")], progress=False)
    assert select_layers(30, "upper") == list(range(22, 30))
    assert select_layers(3, "upper") == [2]
    with pytest.raises(InputError):
        select_layers(3, 5)


@pytest.mark.parametrize(
    "flags, fp32_s, bf16_s, want_bf16, why",
    [
        (False, 1.0, 0.5, False, "no avx512_bf16"),  # no native bf16: fp32, nothing timed
        (True, 1.0, 1.3, True, "native bf16"),  # a bit slower (noise, or load) does not flip the choice
        (True, 1.0, 0.5, True, "native bf16"),
        (True, 1.0, 9.0, False, "emulated despite the flags"),  # only emulation's 15-20x vetoes bf16
        (True, 0.01, None, True, "bf16 not timed"),  # a tiny step is not timed at all
    ],
)
def test_the_cpu_flags_choose_bf16_and_timing_only_vetoes_emulation(monkeypatch, flags, fp32_s, bf16_s, want_bf16, why):
    """The training dtype decides the adapter's numerics, so it must not follow the machine's
    load: the same training under more load gives the same adapter."""
    import torch

    from liedar.models import lora

    timed: list[bool] = []

    def step_seconds(torch, model, boundary, index, batch, bf16, give_up=float("inf")):
        timed.append(bf16)
        assert bf16_s is not None or not bf16, "bf16 was timed on a step too fast to matter"
        return bf16_s if bf16 else fp32_s

    monkeypatch.setattr(lora, "_cpu_has_bf16", lambda: flags)
    monkeypatch.setattr(lora, "_step_seconds", step_seconds)
    tensors = [(torch.zeros(1, 3), None, None)]
    use, timing = lora._choose_dtype(None, None, None, tensors, "auto")
    assert use is want_bf16 and why in timing["chosen_by"], timing
    assert timed == ([] if not flags else [False] if bf16_s is None else [False, True])
    assert lora._choose_dtype(None, None, None, tensors, "fp32") == (False, {"chosen_by": "caller"})
