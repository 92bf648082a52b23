"""A reply in the plain ``role: content`` layout ends where the model begins another turn.

A model without a chat template has no end-of-turn token: it goes on to write the user's
next message in the layout it was shown. The model here is a real transformers Llama whose
weights make it a bigram chain (attention and MLP outputs zeroed, the output layer mapping
each chain token to its successor): after the prompt's final ``:`` it writes ``B`` or ``C``
with equal probability; ``B`` leads on to ``\\nuser:`` (a new turn), ``C`` repeats forever.
Without the stop every reply would run to the budget, so these tests fail if any path
(`generate`, the per-prompt default, the batched transformers sampler) misses the mark.
"""

from __future__ import annotations

import numpy as np
import pytest

from liedar.models.chat import Dialogue, Message, render, reply_end, reply_text

BUDGET = 12
PROMPT = Dialogue.of(Message("system", "Answer with one letter."), Message("user", "B or C?"))


def _chain(tokenizer) -> dict[int, list[int]]:
    """Each chain token's successors: ':' -> B | C, B -> '\\n' -> 'user' ... -> ':', C -> C."""
    ids = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    turn = ids("B\nuser:")
    (colon,) = ids(":")
    (c,) = ids("C")
    assert turn[-1] == colon and c not in turn and len(set(turn)) == len(turn), turn
    succ = {a: [b] for a, b in zip(turn, turn[1:])}
    succ[colon] = [turn[0], c]
    succ[c] = [c]
    return succ


@pytest.fixture(scope="module")
def chain_lm(tiny_model_dir, tmp_path_factory):
    """The tiny model's tokenizer with no chat template, and bigram-chain weights."""
    import shutil

    import torch
    from transformers import AutoTokenizer, LlamaForCausalLM

    from liedar import models

    folder = tmp_path_factory.mktemp("chain-lm")
    for f in tiny_model_dir.iterdir():
        shutil.copy(f, folder / f.name)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = None
    (folder / "chat_template.jinja").unlink(missing_ok=True)
    tokenizer.save_pretrained(folder)
    model = LlamaForCausalLM.from_pretrained(folder)
    succ = _chain(tokenizer)
    d = model.config.hidden_size
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        emb = model.model.embed_tokens.weight
        emb.zero_()
        emb[:, d - 1] = 1.0  # every token off the chain: all logits 0
        head = model.lm_head.weight
        head.zero_()
        for k, (token, nexts) in enumerate(succ.items()):
            emb[token] = 0.0
            emb[token, k] = 1.0
            for nxt in nexts:
                head[nxt, k] = 10.0  # logit 10 * sqrt(d) after the RMS norm: the rest ~e^-69
    model.save_pretrained(folder)
    torch.set_num_threads(1)
    return models.load(str(folder), backend="transformers", n_threads=1)


def test_only_an_untemplated_dialogue_has_turn_marks():
    plain = render(PROMPT, None, add_generation_prompt=True)
    assert plain.text.endswith("assistant:") and set(plain.turn_marks) == {"\nsystem:", "\nuser:", "\nassistant:"}
    templated = render(PROMPT, "{% for m in messages %}{{ m['content'] }}{% endfor %}", add_generation_prompt=True)
    assert templated.templated and templated.turn_marks == ()
    assert render("plain text", None).turn_marks == ()
    assert reply_end(" B.\n\nuser: next\nassistant: C", plain.turn_marks) == 3
    assert reply_text(" B.\n\nassistant: C", plain.turn_marks) == " B."
    assert reply_text(" Answer: user: B", plain.turn_marks) == " Answer: user: B"  # a mark starts a line


def test_generate_stops_at_the_token_that_begins_a_new_turn(chain_lm):
    replies = [chain_lm.generate(PROMPT, max_tokens=BUDGET, temperature=1.0, seed=s) for s in range(12)]
    turns = [g for g in replies if g.text.strip() == "B"]
    runs = [g for g in replies if g.text.strip() != "B"]
    assert turns and runs, [g.text for g in replies]  # both branches drawn
    for g in turns:  # B \n user : -> stopped on the colon; the mark's tokens kept, its text not
        assert chain_lm.detokenize(g.token_ids).strip() == "B\nuser:"
        assert len(g.token_ids) < BUDGET
    for g in runs:
        assert g.text.strip() == "C" * BUDGET and len(g.token_ids) == BUDGET
    seed = replies.index(turns[0])
    full = chain_lm.generate(PROMPT, max_tokens=BUDGET, temperature=1.0, seed=seed, stop_at_end=False)
    assert len(full.token_ids) == BUDGET and "\nuser:" in full.text  # no stop asked, none made
    assert chain_lm.generate("B or C?:", max_tokens=BUDGET, temperature=1.0, seed=seed).text != "B"  # no layout


def test_every_sampling_path_stops_where_generate_does(chain_lm):
    from liedar.models.base import BackendBase
    from liedar.models.sampling import sample_shared_prefix_many

    prompts = [PROMPT, Dialogue.of(Message("user", "Pick: B or C?"))]
    seeds = [5, 60]
    loop = [
        [chain_lm.generate(p, max_tokens=BUDGET, temperature=1.0, seed=s + k) for k in range(6)]
        for p, s in zip(prompts, seeds)
    ]
    batched = sample_shared_prefix_many(chain_lm, prompts, samples=6, max_tokens=BUDGET, temperature=1.0, seeds=seeds)
    assert [[(g.text, g.token_ids) for g in row] for row in batched] == [
        [(g.text, g.token_ids) for g in row] for row in loop
    ]
    lengths = {len(g.token_ids) for row in loop for g in row}
    assert BUDGET in lengths and min(lengths) < BUDGET  # rows ended at different steps in one batch
    for prompt, seed, row in zip(prompts, seeds, loop):  # the default: a decoding state per sample
        enc = chain_lm.encode(prompt, add_generation_prompt=True)
        rngs = [np.random.default_rng(seed + k) for k in range(6)]
        alone = BackendBase.sample_continuations(chain_lm, enc.ids, rngs, BUDGET, 1.0, enc.rendered.turn_marks)
        assert alone == [g.token_ids for g in row]
