"""Integration (smollm2-135m): the answer-slot log-odds read from the final-norm hidden state
equal score_options at both templates' slots, so the leaderboard's zero-shot slot baseline is
the model's own answer probability."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.probes.recipes import CHAT_ANSWERS, PLAIN_ANSWERS, answer_logodds, read_input

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def smollm2():
    from liedar import models
    from liedar.core.errors import ModelUnavailableError

    try:
        return models.load("smollm2-135m", backend="transformers", n_threads=1)
    except ModelUnavailableError as exc:
        pytest.skip(f"smollm2-135m not installed: {exc}")


STATEMENTS = ["The city of Krasnodar is in Russia.", "The Spanish word 'uno' does not mean 'one'."]


@pytest.mark.parametrize("read,answers", [("prompt-plain", PLAIN_ANSWERS), ("prompt-chat", CHAT_ANSWERS)])
def test_answer_slot_logodds_equal_score_options(smollm2, read, answers) -> None:
    lm = smollm2
    inputs = [read_input(read, s) for s in STATEMENTS]
    H = lm.hidden_states(inputs, [lm.n_layers + 1], "last")[:, 0]
    fast = answer_logodds(lm, H, answers)
    slow = np.array([lm.score_options(x, list(answers)) @ np.array([-1.0, 1.0]) for x in inputs])
    assert np.allclose(fast, slow, atol=2e-3), (fast, slow)
