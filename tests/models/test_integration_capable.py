"""Integration: the real qwen2.5-coder-1.5b, loaded once in the whole suite.

Why only one test: the 1.5B takes seconds to load and ~1 s per scored item on one thread,
and the suite must stay within its CI budget; the backends' agreement and the speed are
measured by scripts (scripts/capable_backends.py, scripts/bench_capable.py), not here.
Skips with the install command when the 22 part packages are absent.
"""

from __future__ import annotations

import numpy as np
import pytest
from workers import THREADS

pytestmark = pytest.mark.integration


def test_the_capable_rung_scores_an_item_and_reads_a_hidden_state():
    from liedar import models
    from liedar.core.errors import ModelUnavailableError

    try:
        lm = models.load("qwen2.5-coder-1.5b", backend="llamacpp", n_threads=THREADS)
    except ModelUnavailableError as exc:
        pytest.skip(f"the capable rung is not installed: {exc}")
    assert (lm.n_layers, lm.d_model) == (28, 1536)
    options = [" Canberra", " Sydney", " Melbourne", " Perth"]
    scores = lm.score_options("Question: What is the capital of Australia?\nAnswer:", options)
    assert scores.shape == (4,) and np.isfinite(scores).all()
    assert int(np.argmax(scores)) == 0, dict(zip(options, scores.round(2)))
    state = lm.hidden_states(["Canberra is the capital of Australia."], [14], "last")
    assert state.shape == (1, 1, 1536) and np.isfinite(state).all() and np.abs(state).max() > 0
