"""The exact choice law and shared-prefix sampling on a tiny random model.

The law is checked three ways: against a brute-force recomputation (full forward passes,
no KV cache, on prompt + option prefix), against seeded samples from `generate` with a
chi-square goodness-of-fit test (which must also reject the law of a wrong temperature,
so the test can fail), and against `score_options` at temperature 1. Shared-prefix
sampling must return the per-sample loop's replies token for token.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from liedar.core.errors import InputError
from liedar.models.sampling import choice_law, option_tokens, sample_shared_prefix

PROMPT = "The sky is"
T = 0.05  # sharpens the random model's near-uniform logits so the options carry most of the mass


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    import torch

    from liedar import models

    torch.set_num_threads(1)
    return models.load(str(tiny_model_dir), backend="transformers", n_threads=1)


def _full_logits(lm, ids):
    import torch

    with torch.inference_mode():
        return lm.model(input_ids=torch.tensor([ids])).logits[0, -1].double().numpy()


def _tempered(logits, t):
    z = logits / t
    z = z - z.max()
    return z - np.log(np.exp(z).sum())


def _options(lm):
    """Two single-token options and two two-token options, none a prefix of another,
    chosen among the model's likeliest continuations so that samples land on them often."""
    prefix = lm.encode(PROMPT, add_generation_prompt=True).ids
    first = [int(t) for t in np.argsort(_full_logits(lm, prefix))[::-1]]
    seqs = []
    for t in first:
        cand = [[t]] if len(seqs) < 2 else []
        if len(seqs) >= 2:
            second = [int(u) for u in np.argsort(_full_logits(lm, prefix + [t]))[::-1][:2]]
            cand = [[t, u] for u in second]
        for ids in cand:
            text = lm.tokenizer.decode(ids)
            if text.strip() and option_tokens(lm, PROMPT, [text])[0][0][len(prefix) :] == ids:
                seqs.append(ids)
        if len(seqs) >= 4:
            break
    if any(s[0] == o[0] for i, s in enumerate(seqs) for o in seqs[:i] if len(o) == 1 or len(s) == 1):
        pytest.skip("no prefix-free option set round-trips through this tokenizer")
    return prefix, seqs[:4], [lm.tokenizer.decode(s) for s in seqs[:4]]


def test_law_equals_a_brute_force_recomputation_without_the_kv_cache(lm):
    prefix, seqs, options = _options(lm)
    law = choice_law(lm, PROMPT, options, T)
    brute = []
    for ids in seqs:
        lp = sum(_tempered(_full_logits(lm, prefix + ids[:i]), T)[ids[i]] for i in range(len(ids)))
        brute.append(lp)
    brute = np.exp(np.array(brute))
    np.testing.assert_allclose(law.mass, brute, rtol=1e-4)
    np.testing.assert_allclose(law.probs, brute / brute.sum(), rtol=1e-4)
    assert law.probs.sum() == pytest.approx(1.0)


def test_law_at_temperature_one_matches_score_options(lm):
    _, _, options = _options(lm)
    law = choice_law(lm, PROMPT, options, 1.0)
    np.testing.assert_allclose(law.logprobs, lm.score_options(PROMPT, options), atol=1e-4)


def test_sampled_replies_follow_the_law_and_a_wrong_temperature_is_rejected(lm):
    prefix, seqs, options = _options(lm)
    law = choice_law(lm, PROMPT, options, T)
    counts = np.zeros(len(seqs))
    replies = [lm.generate(PROMPT, max_tokens=2, temperature=T, seed=s).token_ids for s in range(1500)]
    for ids in replies:
        for j, s in enumerate(seqs):
            if ids[: len(s)] == s:
                counts[j] += 1
    n = counts.sum()
    assert n >= 300, f"only {n} of 1500 replies were one of the options"
    # the unconditioned mass predicts how many replies the constrained law speaks for
    assert abs(n / len(replies) - law.mass.sum()) < 4 * np.sqrt(law.mass.sum() / len(replies))
    assert chisquare(counts, law.probs * n).pvalue > 0.001
    wrong = choice_law(lm, PROMPT, options, 4 * T)
    assert chisquare(counts, wrong.probs * n).pvalue < 1e-6


def test_single_token_options_cost_one_forward_pass(lm):
    law = choice_law(lm, PROMPT, [" is", " the", " blue"][:2], 0.7)
    if all(len(ids) == k + 1 for ids, k in option_tokens(lm, PROMPT, law.options)):
        assert law.n_forward == 1


def test_shared_prefix_samples_equal_the_per_sample_loop_token_for_token(lm):
    for temperature, k in ((1.5, 12), (0.7, 5), (0.0, 3)):
        loop = [lm.generate(PROMPT, max_tokens=10, temperature=temperature, seed=9 + s) for s in range(k)]
        shared = sample_shared_prefix(lm, PROMPT, samples=k, max_tokens=10, temperature=temperature, seed=9)
        assert [g.token_ids for g in shared] == [g.token_ids for g in loop]
        assert [g.text for g in shared] == [g.text for g in loop]
    # the backend's own generation still works afterwards (the batch did not leave a K-row cache)
    again = lm.generate(PROMPT, max_tokens=6, temperature=0.0)
    assert again.token_ids == lm.generate(PROMPT, max_tokens=6, temperature=0.0).token_ids


def test_rows_that_end_early_leave_the_batch_and_the_others_still_equal_the_loop(lm, monkeypatch):
    """With a sixth of the vocabulary made end tokens, the K replies end at different steps,
    so the batch drops rows as it goes; every reply must still be the loop's."""
    vocab = lm.model.config.vocab_size
    ends = set(range(0, vocab, 6))
    monkeypatch.setattr(lm, "_end_ids", ends)
    loop = [lm.generate(PROMPT, max_tokens=12, temperature=1.5, seed=20 + s) for s in range(10)]
    shared = sample_shared_prefix(lm, PROMPT, samples=10, max_tokens=12, temperature=1.5, seed=20)
    lengths = {len(g.token_ids) for g in loop}
    assert len(lengths) >= 3 and min(lengths) < 12, f"the rows must end at different steps: {sorted(lengths)}"
    assert [g.token_ids for g in shared] == [g.token_ids for g in loop]


def test_prompts_of_different_lengths_sampled_in_one_batch_equal_the_loop(lm, monkeypatch):
    """Several prompts left-padded into one batch (the menu study's 15 menus a step), with
    rows ending at different steps so the batch sheds rows: each reply must still be what
    `generate` draws for that prompt and seed, so padding and positions change nothing."""
    from liedar.models.sampling import sample_shared_prefix_many

    monkeypatch.setattr(lm, "_end_ids", set(range(0, lm.model.config.vocab_size, 7)))
    prompts = [PROMPT, "A much longer prompt about the colour of the evening sky, which", "Yes"]
    seeds = [3, 40, 77]
    loop = [
        [lm.generate(p, max_tokens=10, temperature=1.3, seed=s + k) for k in range(4)] for p, s in zip(prompts, seeds)
    ]
    many = sample_shared_prefix_many(lm, prompts, samples=4, max_tokens=10, temperature=1.3, seeds=seeds)
    assert len({len(lm.encode(p, add_generation_prompt=True).ids) for p in prompts}) == 3
    assert len({len(g.token_ids) for row in loop for g in row}) >= 3, "rows must end at different steps"
    assert [[g.token_ids for g in row] for row in many] == [[g.token_ids for g in row] for row in loop]
    assert [[g.text for g in row] for row in many] == [[g.text for g in row] for row in loop]


@pytest.fixture(scope="module")
def windowed_lm(tiny_model_dir, tmp_path_factory):
    """A random 2-layer Gemma3 (one sliding-window layer of 6 positions, one global) with the
    tiny tokenizer: prompts and replies run past its window."""
    import shutil

    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    from liedar import models

    folder = tmp_path_factory.mktemp("tiny-gemma3")
    for f in tiny_model_dir.iterdir():
        if "token" in f.name or f.name.endswith(".jinja"):
            shutil.copy(f, folder / f.name)
    config = Gemma3TextConfig(
        vocab_size=lm_vocab(tiny_model_dir), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=12, query_pre_attn_scalar=12,
        sliding_window=6, layer_types=["sliding_attention", "full_attention"], max_position_embeddings=256,
    )  # fmt: skip
    torch.manual_seed(0)
    Gemma3ForCausalLM(config).save_pretrained(folder)
    return models.load(str(folder), backend="transformers", n_threads=1)


def lm_vocab(folder):
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(folder).vocab_size


def test_a_sliding_window_model_sampled_in_one_batch_equals_the_loop(windowed_lm):
    """Gemma3's local layers see only the last 6 positions; the batch must hide the same
    prompt columns and generated tokens from them as the model's own cache does."""
    from liedar.models.sampling import sample_shared_prefix_many

    lm = windowed_lm
    prompts = [PROMPT, "A much longer prompt about the colour of the evening sky, which", "Yes"]
    seeds = [5, 60, 11]
    loop = [
        [lm.generate(p, max_tokens=12, temperature=1.1, seed=s + k) for k in range(3)] for p, s in zip(prompts, seeds)
    ]
    many = sample_shared_prefix_many(lm, prompts, samples=3, max_tokens=12, temperature=1.1, seeds=seeds)
    assert max(len(lm.encode(p, add_generation_prompt=True).ids) for p in prompts) > 6, "a prompt must outrun it"
    assert max(len(g.token_ids) for row in loop for g in row) > 6, "replies must outrun the window"
    assert [[g.token_ids for g in row] for row in many] == [[g.token_ids for g in row] for row in loop]


LEAD = "A long shared opening about the colour of the evening sky over the quiet harbour town,"


@pytest.mark.parametrize("which", ["lm", "windowed_lm"])
def test_prompts_sharing_their_lead_read_it_once_and_equal_the_loop(which, request, monkeypatch):
    """The menus of a configuration share their first tokens: the batch reads those once (a
    pass of one row), then the rest of each prompt attending to them. Replies must still be
    `generate`'s, on gemma3's window too (the lead is longer than it, so the local layers
    must hide its early tokens from the later ones, and from the replies)."""
    from liedar.models.hf import _shared_lead
    from liedar.models.sampling import sample_shared_prefix_many

    lm = request.getfixturevalue(which)
    monkeypatch.setattr(lm, "_end_ids", set(range(0, lm.model.config.vocab_size, 7)))
    prompts = [LEAD + " which", LEAD + " the boats and the birds were", LEAD + " so"]
    seeds = [8, 31, 54]
    lead = _shared_lead([lm.encode(p, add_generation_prompt=True).ids for p in prompts])
    assert lead > 6, f"the prompts must share more tokens than the window holds, got {lead}"
    loop = [
        [lm.generate(p, max_tokens=10, temperature=1.2, seed=s + k) for k in range(4)] for p, s in zip(prompts, seeds)
    ]
    many = sample_shared_prefix_many(lm, prompts, samples=4, max_tokens=10, temperature=1.2, seeds=seeds)
    assert len({len(g.token_ids) for row in loop for g in row}) >= 3, "rows must end at different steps"
    assert [[g.token_ids for g in row] for row in many] == [[g.token_ids for g in row] for row in loop]


def test_the_model_attention_is_its_own_again_after_a_batch_and_after_a_failed_one(lm, monkeypatch):
    from liedar.models.sampling import sample_shared_prefix_many

    before = lm.model.config._attn_implementation
    sample_shared_prefix_many(lm, [PROMPT], samples=2, max_tokens=3, temperature=1.0, seeds=[1])
    assert lm.model.config._attn_implementation == before

    def fail(*args, **kwargs):
        raise RuntimeError("draw failed")

    monkeypatch.setattr("liedar.models.hf.sample_tokens", fail)
    with pytest.raises(RuntimeError, match="draw failed"):
        sample_shared_prefix_many(lm, [PROMPT], samples=2, max_tokens=3, temperature=1.0, seeds=[1])
    assert lm.model.config._attn_implementation == before
    monkeypatch.undo()
    assert lm.generate(PROMPT, max_tokens=4, temperature=0.0).token_ids


def test_the_batched_draw_is_rng_choice():
    """`sample_tokens` is the inverse CDF ``rng.choice(V, p=p)`` computes, searched block by
    block: on these 60 vocabularies (some smaller than a block, most with a part block at the
    end) every token is ``rng.choice``'s, so records drawn with ``rng.choice`` stay reproducible."""
    from liedar.models.base import sample_tokens

    g = np.random.default_rng(0)
    for trial in range(60):
        vocab, rows, t = int(g.integers(2, 5000)), int(g.integers(1, 6)), float(g.uniform(0.05, 3.0))
        rows = 70 if trial == 0 else rows  # more rows than one block of the vectorised draw
        vocab = 100 if trial == 1 else 512 if trial == 2 else vocab  # less than one block of tokens; whole blocks
        logits = (g.standard_normal((rows, vocab)) * g.uniform(0.1, 10.0)).astype(np.float32)
        seeds = [int(s) for s in g.integers(0, 2**31, rows)]
        want = []
        for r, s in enumerate(seeds):
            z = logits[r].astype(np.float64) / t
            p = np.exp(z - z.max())
            want.append(int(np.random.default_rng(s).choice(vocab, p=p / p.sum())))
        assert sample_tokens(logits, t, [np.random.default_rng(s) for s in seeds]) == want


def test_rows_whose_weights_leave_float64_range_are_drawn_with_their_maximum_subtracted():
    """The draw weighs tokens by exp(logit / T) with no maximum subtracted; a row whose
    weights overflow (logits in the thousands) or all underflow (every logit far below zero)
    is drawn from (logit - max) / T instead, and its tokens are still ``rng.choice``'s."""
    from liedar.models.base import sample_tokens

    g = np.random.default_rng(5)
    ordinary = g.standard_normal(700) * 3
    for shift, t in ((3000.0, 1.0), (-3000.0, 1.0), (400.0, 0.5), (0.0, 0.8)):
        logits = np.stack([ordinary + shift, g.standard_normal(700) * 3 + shift, ordinary]).astype(np.float32)
        want = []
        for r in range(3):
            z = logits[r].astype(np.float64) / t
            p = np.exp(z - z.max())
            want.append(int(np.random.default_rng(70 + r).choice(700, p=p / p.sum())))
        assert sample_tokens(logits, t, [np.random.default_rng(70 + r) for r in range(3)]) == want


def test_the_draw_reads_a_bfloat16_tensor_as_its_exact_float_values():
    """A bfloat16 tensor is read by blocks straight into float64 (numpy has no bfloat16): the
    tokens are those of the same values as a float32 array, and so ``rng.choice``'s."""
    from liedar.models.base import sample_tokens

    g = torch.Generator().manual_seed(3)
    for rows, vocab, t in ((9, 1000, 0.7), (1, 300, 2.0), (6, 777, 0.05)):
        logits = (torch.randn(rows, vocab, generator=g) * 4).bfloat16()
        as_array = logits.float().numpy()
        seeds = list(range(40, 40 + rows))
        got = sample_tokens(logits, t, [np.random.default_rng(s) for s in seeds])
        assert got == sample_tokens(as_array, t, [np.random.default_rng(s) for s in seeds])
        want = []
        for r, s in enumerate(seeds):
            z = as_array[r].astype(np.float64) / t
            p = np.exp(z - z.max())
            want.append(int(np.random.default_rng(s).choice(vocab, p=p / p.sum())))
        assert got == want
        assert sample_tokens(logits, 0.0, [None] * rows) == [int(i) for i in as_array.argmax(1)]


def test_the_output_layer_writes_into_one_buffer_and_is_the_model_own_again_after(lm):
    """Within `logits_into_buffer` the model's logits are the same numbers, written into one
    buffer every pass; the model's own output layer is back after the block, also after an
    error, and a pass with more rows than the buffer gets a fresh array."""
    from liedar.models.shared_prefix import logits_into_buffer

    head = lm.model.get_output_embeddings()
    ids = torch.tensor([lm.encode(PROMPT, add_generation_prompt=True).ids] * 3)
    with torch.inference_mode():
        want = lm.model(input_ids=ids).logits.clone()
        want_last = lm.model(input_ids=ids, logits_to_keep=1).logits.clone()
        with logits_into_buffer(lm.model, rows=3) as buffer:
            first = lm.model(input_ids=ids, logits_to_keep=1).logits
            assert torch.equal(first, want_last)
            assert first.data_ptr() == buffer.data_ptr()
            second = lm.model(input_ids=ids[:2, :-1], logits_to_keep=1).logits
            assert second.data_ptr() == buffer.data_ptr()  # the same memory, overwritten
            more = lm.model(input_ids=ids).logits  # 3 rows x every position: more than the buffer
            assert torch.equal(more, want) and more.data_ptr() != buffer.data_ptr()
        assert lm.model.get_output_embeddings() is head
        with pytest.raises(RuntimeError, match="a pass failed"):
            with logits_into_buffer(lm.model, rows=3):
                raise RuntimeError("a pass failed")
        assert lm.model.get_output_embeddings() is head


def test_the_default_per_sample_continuations_equal_the_batched_ones(lm):
    """`BackendBase.sample_continuations` (the prompt re-read per sample) is the law the
    engines' overrides must reproduce."""
    from liedar.models.base import BackendBase

    ids = lm.encode(PROMPT, add_generation_prompt=True).ids
    rngs = lambda: [np.random.default_rng(4 + k) for k in range(6)]  # noqa: E731
    assert BackendBase.sample_continuations(lm, ids, rngs(), 8, 1.2) == lm.sample_continuations(ids, rngs(), 8, 1.2)


def test_one_pass_gives_the_samples_and_every_prompts_choice_law(lm):
    """`sample_with_choice_laws`: the replies are `sample_shared_prefix_many`'s, and each law
    is `choice_law`'s from its own forward pass, though it reads the batch's prefill logits
    (left-padded prompts of three lengths); single-token options then cost no pass at all."""
    from liedar.models.base import BackendBase
    from liedar.models.sampling import sample_shared_prefix_many, sample_with_choice_laws

    _, seqs, options = _options(lm)
    prompts = [PROMPT, "A much longer prompt about the colour of the evening sky, which", "Yes"]
    menus = [options, options[:2], options[1:]]
    kwargs = dict(samples=5, max_tokens=6, temperature=T, seeds=[3, 40, 77])
    replies, laws = sample_with_choice_laws(lm, prompts, menus, **kwargs)
    alone = sample_shared_prefix_many(lm, prompts, **kwargs)
    assert [[g.token_ids for g in row] for row in replies] == [[g.token_ids for g in row] for row in alone]
    for prompt, menu, law in zip(prompts, menus, laws):
        own = choice_law(lm, prompt, menu, T)
        assert law.options == own.options
        np.testing.assert_allclose(law.probs, own.probs, rtol=1e-4)  # float32, padded batch
        np.testing.assert_allclose(law.mass, own.mass, rtol=1e-4)
        np.testing.assert_allclose(law.logprobs, own.logprobs, atol=1e-4)
    assert laws[1].n_forward == 0  # two single-token options: read from the batch's own logits
    # the default (one prompt at a time) gives the same laws through the same seam
    first: list = []
    BackendBase.sample_continuations_many(
        lm, [lm.encode(p, add_generation_prompt=True).ids for p in prompts],
        [[np.random.default_rng(0)]] * 3, 2, T, first,
    )  # fmt: skip
    for prompt, logits in zip(prompts, first):
        ids = lm.encode(prompt, add_generation_prompt=True).ids
        np.testing.assert_allclose(logits, _full_logits(lm, ids), atol=1e-5)
    with pytest.raises(InputError, match="temperature > 0"):
        sample_with_choice_laws(lm, prompts, menus, **{**kwargs, "temperature": 0.0})
    with pytest.raises(InputError, match="one list of options per prompt"):
        sample_with_choice_laws(lm, prompts, menus[:2], **kwargs)


@pytest.mark.integration
def test_llamacpp_kept_prompt_samples_equal_its_per_sample_loop(smollm2_llamacpp):
    for temperature, k in ((1.0, 4), (0.0, 2)):
        loop = [smollm2_llamacpp.generate(PROMPT, max_tokens=8, temperature=temperature, seed=3 + s) for s in range(k)]
        shared = sample_shared_prefix(
            smollm2_llamacpp, PROMPT, samples=k, max_tokens=8, temperature=temperature, seed=3
        )
        assert [g.token_ids for g in shared] == [g.token_ids for g in loop]


def test_bad_input_is_refused(lm):
    with pytest.raises(InputError, match="temperature > 0"):
        choice_law(lm, PROMPT, ["A", "B"], 0.0)
    with pytest.raises(InputError, match="non-empty list"):
        choice_law(lm, PROMPT, [], 0.7)
    with pytest.raises(InputError, match="local model"):
        choice_law(object(), PROMPT, ["A", "B"], 0.7)
    with pytest.raises(InputError, match="samples must be"):
        sample_shared_prefix(lm, PROMPT, samples=0)
