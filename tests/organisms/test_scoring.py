"""score_options_shared gives the numbers of score_options (prompt run once, cache repeated)."""

from __future__ import annotations

import numpy as np

from liedar.models.chat import Dialogue, Message
from liedar.organisms.scoring import score_options_shared


def test_same_numbers_as_score_options(tiny_backend):
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
    for p in prompts:
        ref = tiny_backend.score_options(p, options)
        got = score_options_shared(tiny_backend, p, options)
        assert np.allclose(got, ref, atol=1e-4), (p, got, ref)
        assert int(np.argmax(got)) == int(np.argmax(ref))


def test_falls_back_for_other_backends():
    class Fake:
        kind = "llamacpp"

        def score_options(self, prompt, options):
            return [1.0, 2.0]

    assert list(score_options_shared(Fake(), "q", [" a", " b"])) == [1.0, 2.0]
