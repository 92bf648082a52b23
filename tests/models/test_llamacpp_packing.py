"""Several sequences in one llama_decode (models/llamacpp.py `_forward`, `_token_logprobs`).

Why these tests: the eval callback copies rows in the order llama.cpp computes them, and
nothing in the captured tensor says which sequence a row belongs to. Packing is only
correct if llama.cpp keeps the batch order when it cuts micro-batches, which depends on
how the context's memory is laid out (one KV stream: ``split_simple``; one stream per
sequence: ``split_equal``, which interleaves). So every packed sequence is compared with
the same sequence decoded alone, on the real model, at layer 0 (an exact table lookup: a
misplaced row cannot hide), a middle block, the last block and the final norm (trimmed by
llama.cpp to the rows that need logits), with sequences of different lengths in an order
that ``split_equal`` would reorder, and a batch that crosses micro-batch boundaries.
"""

from __future__ import annotations

import numpy as np
import pytest

TEXTS = [  # 20, 8, 15 and 6 tokens on smollm2: longest first, so an equal split would interleave
    "Water boils at 100 degrees Celsius at sea level, which is why pasta cooks fast.",
    "The Eiffel Tower is in Berlin.",
    "Paris is the capital of France, and Rome is the capital of Italy.",
    "Copper conducts electricity well.",
]
LAYERS = [0, 15, 30, 31]  # embeddings, a middle block, the last block (n), the final norm (n + 1)


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


def _load(**kwargs):
    from liedar import models
    from liedar.core.errors import ModelUnavailableError

    pytest.importorskip("llama_cpp")
    try:
        return models.load("smollm2-135m", backend="llamacpp", n_threads=1, **kwargs)
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))


def _packed_and_alone(lm, seqs: list[list[int]], layers: list[int]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    packed = lm._forward(seqs, layers)
    alone = [lm._forward([s], layers)[0] for s in seqs]
    return packed, alone


def _assert_same(packed: list[np.ndarray], alone: list[np.ndarray], layers: list[int]) -> None:
    """Measured bit-identical on llama-cpp-python 0.3.36; the assertion allows float noise."""
    for k, (p, a) in enumerate(zip(packed, alone)):
        assert p.shape == a.shape, (k, p.shape, a.shape)
        np.testing.assert_array_equal(p[:, layers.index(0)], a[:, layers.index(0)])  # row order
        for j, layer in enumerate(layers):
            worst = float(_cos(p[:, j], a[:, j]).min())
            assert worst >= 0.9999, (k, layer, worst)
            np.testing.assert_allclose(p[:, j], a[:, j], rtol=0, atol=1e-4 * float(np.abs(a[:, j]).max()))


# ---- unit: how sequences are grouped ----------------------------------------------------------
def _packer(n_seq_max: int, batch_tokens: int):
    from liedar.models.llamacpp import LlamaCppBackend

    lm = object.__new__(LlamaCppBackend)
    lm.n_seq_max, lm.batch_tokens = n_seq_max, batch_tokens
    return lm


def test_packs_respect_token_budget_and_sequence_limit_in_order():
    seqs = [[1] * n for n in (20, 8, 15, 6, 30, 100, 2, 2, 2)]
    assert _packer(16, 63)._packs(seqs) == [[0, 1, 2, 3], [4], [5], [6, 7, 8]]
    assert _packer(2, 63)._packs(seqs) == [[0, 1], [2, 3], [4], [5], [6, 7], [8]]
    assert _packer(1, 512)._packs(seqs) == [[k] for k in range(len(seqs))]  # n_seq_max=1: no packing
    assert _packer(16, 1000)._packs(seqs) == [list(range(len(seqs)))]
    assert _packer(16, 63)._packs([]) == []


def test_bad_packing_parameters_are_refused():
    from liedar.core.errors import InputError
    from liedar.models.llamacpp import LlamaCppBackend

    with pytest.raises(InputError, match="n_seq_max=0"):
        LlamaCppBackend("unused.gguf", n_seq_max=0)
    with pytest.raises(InputError, match="batch_tokens=0"):
        LlamaCppBackend("unused.gguf", batch_tokens=0)


# ---- integration: the real model -------------------------------------------------------------
@pytest.mark.integration
def test_default_packing_gives_each_sequence_its_own_states(smollm2_llamacpp):
    lm = smollm2_llamacpp
    seqs = [lm.encode(t).ids for t in TEXTS]
    assert [len(s) for s in seqs] == [20, 8, 15, 6]
    assert lm._packs(seqs) == [[0, 1, 2, 3]]  # one decode of 49 tokens, four seq_ids
    _assert_same(*_packed_and_alone(lm, seqs, LAYERS), LAYERS)


@pytest.mark.integration
def test_packing_across_micro_batch_boundaries():
    """n_ubatch 16: the 49 + 41 + 43 + 1 tokens are cut into 16-row micro-batches that
    straddle sequences; every sequence must still get exactly its own states."""
    lm = _load(n_ubatch=16, batch_tokens=512)
    seqs = [lm.encode(t).ids for t in TEXTS]
    seqs += [lm.encode("Rome " * 40).ids, lm.encode("The capital of France is Paris. " * 6).ids, seqs[1][:1]]
    assert len(lm._packs(seqs)) == 1 and sum(map(len, seqs)) > 8 * 16
    _assert_same(*_packed_and_alone(lm, seqs, LAYERS), LAYERS)


@pytest.mark.integration
def test_the_check_catches_interleaved_rows(monkeypatch):
    """With one KV stream per sequence llama.cpp splits the batch with split_equal and the
    rows interleave (measured: layer-0 cosine down to -0.45): the comparison above must see it."""
    import liedar.models.llamacpp  # noqa: F401  (binds models.llamacpp)
    from liedar import models

    monkeypatch.setattr(models.llamacpp, "_KV_UNIFIED", False)
    lm = _load()
    seqs = [lm.encode(t).ids for t in TEXTS]
    packed, alone = _packed_and_alone(lm, seqs, [0])
    with pytest.raises(AssertionError):
        _assert_same(packed, alone, [0])
    assert min(float(_cos(p[:, 0], a[:, 0]).min()) for p, a in zip(packed, alone)) < 0.5


@pytest.mark.integration
def test_large_packs_keep_order_within_kernel_tolerance():
    """Packs over 63 tokens run micro-batches of 64+ rows, whose CPU kernels round
    differently from small ones: rows stay in order (layer 0 exact) and the states agree to
    the measured kernel difference (min cosine 0.9995 at layer 15, 0.9925 at layer 30)."""
    lm = _load(batch_tokens=512)
    subjects = ["Paris", "The Nile", "Mount Everest", "The heart", "Copper", "Shakespeare", "The Moon", "Tokyo"]
    seqs = [lm.encode(f"{s} is a word that appears in many statements about the world.").ids for s in subjects]
    seqs += [lm.encode(t).ids for t in TEXTS]
    assert len(lm._packs(seqs)) == 1 and sum(map(len, seqs)) >= 64
    packed, alone = _packed_and_alone(lm, seqs, [0, 15, 30])
    for p, a in zip(packed, alone):
        np.testing.assert_array_equal(p[:, 0], a[:, 0])
        assert float(_cos(p[:, 1], a[:, 1]).min()) >= 0.999
        assert float(_cos(p[:, 2], a[:, 2]).min()) >= 0.99


@pytest.mark.integration
def test_packed_token_logprobs_equal_single_sequence(smollm2_llamacpp):
    lm = smollm2_llamacpp
    seqs = [lm.encode(t).ids for t in TEXTS] + [[lm.encode(TEXTS[0]).ids[0]]]
    packed = lm._token_logprobs(seqs)
    alone = [lm._token_logprobs([s])[0] for s in seqs]
    for p, a, s in zip(packed, alone, seqs):
        assert p.shape == a.shape == (len(s) - 1,)
        np.testing.assert_allclose(p, a, rtol=0, atol=1e-5)
    # multi-token options go through the packed path and still rank the fact first
    scores = lm.score_options("The capital of France is", [" Paris, of course", " Rome, of course", " Berlin"])
    each = [lm.score_options("The capital of France is", [o])[0] for o in (" Paris, of course", " Rome, of course")]
    np.testing.assert_allclose(scores[:2], each, rtol=0, atol=1e-5)
    assert scores[0] > scores[1]


@pytest.mark.integration
def test_gemma3_packing_keeps_order_within_its_kernel_noise():
    """Gemma 3 (Q4_K_M weights, sliding-window KV cache) is not bit-exact under packing:
    its CPU kernels round a row differently depending on how many rows its micro-batch has
    (two copies of one 6-token text packed together differ from it alone). Rows stay in
    order (layer 0 exact); measured min cosine 0.99998 (block 9), 0.99972 (block 18), 0.99845
    (final norm, whose outputs reach ~4600); asserted with a ~2x margin on 1 - cosine."""
    from liedar import models
    from liedar.core.errors import ModelUnavailableError

    pytest.importorskip("llama_cpp")
    try:
        lm = models.load("gemma3-270m", backend="llamacpp", n_threads=1)
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))
    seqs = [lm.encode(t).ids for t in TEXTS]
    assert lm._packs(seqs) == [[0, 1, 2, 3]]
    packed, alone = _packed_and_alone(lm, seqs, [0, 9, 18, 19])
    for p, a in zip(packed, alone):
        np.testing.assert_array_equal(p[:, 0], a[:, 0])
        for j, floor in ((1, 0.9999), (2, 0.9994), (3, 0.997)):
            assert float(_cos(p[:, j], a[:, j]).min()) >= floor, (j, float(_cos(p[:, j], a[:, j]).min()))
