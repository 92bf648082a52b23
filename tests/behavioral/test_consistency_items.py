"""The built-in MCQ bank and `ask_multiple_choice` (no model needed)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liedar.behavioral.items.mcq import TOPICS, load_mcq_bank
from liedar.behavioral.runners.common import ask_multiple_choice, letter_continuations
from liedar.core.errors import InputError


def test_bank_size_topics_difficulties_and_shape():
    bank = load_mcq_bank()
    assert len(bank) >= 100
    assert set(Counter(i.topic for i in bank)) == set(TOPICS)
    assert set(Counter(i.difficulty for i in bank)) == {1, 2, 3}
    assert len({i.item_id for i in bank}) == len(bank)
    for item in bank:
        assert len(item.options) == 4 and len(set(item.options)) == 4, item
        assert item.answer in item.options
        assert len(item.paraphrases) >= 3 and len(set(item.variants)) == len(item.variants), item


def test_bank_is_deterministic_and_filters():
    assert load_mcq_bank() == load_mcq_bank()
    geo = load_mcq_bank(["geography"])
    assert geo and all(i.topic == "geography" for i in geo)
    easy = load_mcq_bank(difficulties=[1])
    assert easy and all(i.difficulty == 1 for i in easy)
    with pytest.raises(InputError, match="unknown MCQ topic"):
        load_mcq_bank(["astrology"])


def test_bank_deterministic_across_processes():
    # Python's str hash is salted per process: a bank built from hash() would differ here.
    code = "from liedar.behavioral.items.mcq import load_mcq_bank; print(repr(load_mcq_bank()))"
    outs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    assert len(outs) == 1


def test_arithmetic_answers_are_correct():
    for item in load_mcq_bank(["arithmetic"]):
        _, op, a, b = item.item_id.split("-")
        a, b = int(a), int(b)
        assert int(item.answer) == {"add": a + b, "sub": a - b, "mul": a * b}[op]


class LetterBackend:
    """Fake backend: prefers the letter at `favourite` position and records prompts."""

    def __init__(self, favourite: int):
        self.favourite = favourite
        self.calls = []

    def score_options(self, prompt, options):
        self.calls.append((prompt, list(options)))
        scores = np.full(len(options), -5.0)
        scores[self.favourite] = -0.1
        return scores


@settings(max_examples=50, deadline=None)
@given(st.permutations(range(4)), st.integers(0, 3))
def test_chosen_label_follows_the_presented_order(order, favourite):
    options = ("w", "x", "y", "z")
    answer = ask_multiple_choice(LetterBackend(favourite), "Q?", options, order=order)
    assert answer.position == favourite
    assert answer.label == options[order[favourite]]
    assert answer.presented == tuple(options[i] for i in order)
    assert answer.letter == "ABCD"[favourite]
    assert abs(sum(answer.probabilities) - 1) < 1e-9


def test_prompts_end_in_answer_colon_and_letters_carry_their_space():
    backend = LetterBackend(0)
    ask_multiple_choice(backend, "What is 2 + 2?", ["3", "4", "5", "6"])
    prompt, conts = backend.calls[-1]
    assert isinstance(prompt, str) and prompt.endswith("\nAnswer:") and "B. 4" in prompt
    assert conts == [" A", " B", " C", " D"] == letter_continuations(4)
    ask_multiple_choice(backend, "What is 2 + 2?", ["3", "4", "5", "6"], system="Be honest.")
    prompt, conts = backend.calls[-1]
    from liedar.models.chat import Dialogue

    assert isinstance(prompt, Dialogue)
    assert [m.role for m in prompt.messages] == ["system", "user", "assistant"]
    assert prompt.messages[0].content == "Be honest."
    assert prompt.messages[-1].content == "Answer:"  # prefill: same " A" continuation as plain text
    assert conts == [" A", " B", " C", " D"]
    assert ask_multiple_choice(backend, "Q", ["a", "b"], chat=True).chat is True


def test_ask_bad_input():
    backend = LetterBackend(0)
    with pytest.raises(InputError, match="permutation"):
        ask_multiple_choice(backend, "Q", ["a", "b", "c"], order=[0, 0, 1])
    with pytest.raises(InputError, match="duplicate"):
        ask_multiple_choice(backend, "Q", ["a", "a", "c"])
    with pytest.raises(InputError, match="options"):
        ask_multiple_choice(backend, "Q", ["a"])

    class Broken:
        def score_options(self, prompt, options):
            return [0.0]

    with pytest.raises(InputError, match="shape"):
        ask_multiple_choice(Broken(), "Q", ["a", "b"])


def test_to_dict_is_json_safe():
    import json

    answer = ask_multiple_choice(LetterBackend(1), "Q", ["a", "b", "c"], order=[2, 0, 1])
    d = json.loads(json.dumps(answer.to_dict()))
    assert d["label"] == "a" and d["letter"] == "B"


def test_tiny_real_backend_scores_letters_right_after_the_prefill(tiny_model_dir):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    from liedar import models
    from liedar.behavioral.runners.common import build_prompt, with_answer_prefill
    from liedar.models.chat import render

    lm = models.load(str(tiny_model_dir))
    answer = ask_multiple_choice(lm, "What is 2 + 2?", ["3", "4", "5", "6"], system="Be honest.")
    assert answer.chat and len(answer.logprobs) == 4 and np.all(np.isfinite(answer.logprobs))
    prompt = with_answer_prefill(build_prompt("What is 2 + 2?", ["3", "4", "5", "6"], "Be honest.", True))
    rendered = render(prompt, lm.chat_template, add_generation_prompt=True).text
    assert rendered.endswith("Answer:")  # the prefill stops the template right after the colon
    plain = ask_multiple_choice(lm, "What is 2 + 2?", ["3", "4", "5", "6"])
    assert not plain.chat and len(plain.logprobs) == 4
