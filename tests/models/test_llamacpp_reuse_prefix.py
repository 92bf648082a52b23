"""llama.cpp's opt-in prompt reuse across options (`LlamaCppBackend(reuse_prefix=True)`).

Why these tests: with ``reuse_prefix`` a cloze keeps its prompt in the context's memory and
decodes each option after it, removing the previous option's positions first. A position
left behind, or an option decoded at the wrong position, would score the next option
against the wrong context and still return plausible numbers, so each option's score is
compared with the full path's on the real smollm2-135m, in both orders. Below 64 tokens a
micro-batch runs the same CPU kernels either way (models/llamacpp.py), so on these short
prompts the two paths agree bit for bit; on longer prompts the option tokens run through
the small-batch kernels and the scores differ in their last digits (measured in
docs/capable.md with scripts/bench_option_scoring.py).
"""

from __future__ import annotations

import numpy as np
import pytest

PROMPTS = [
    (
        "Question: What is the capital of France?\nAnswer:",
        [" the city of Paris", " Lyon on the Rhone", " Marseille in the south", " a town called Nice"],
    ),
    ("Question: Which metal conducts electricity best?\nAnswer:", [" pure silver", " iron ore", " Lead", " tin foil"]),
]


@pytest.fixture(scope="module")
def pair(smollm2_llamacpp):
    """The session's llama.cpp smollm2 (the full path; it skips when the model is absent) and a
    second load of it that keeps each prompt across its options."""
    from workers import THREADS

    from liedar import models

    return smollm2_llamacpp, models.load("smollm2-135m", backend="llamacpp", n_threads=THREADS, reuse_prefix=True)


def test_each_option_scores_as_on_the_full_path(pair):
    full, kept = pair
    for prompt, options in PROMPTS:
        np.testing.assert_array_equal(kept.score_options(prompt, options), full.score_options(prompt, options))


def test_no_option_leaves_positions_behind_for_the_next(pair):
    _, kept = pair
    prompt, options = PROMPTS[0]
    forward = kept.score_options(prompt, options)
    backward = kept.score_options(prompt, options[::-1])[::-1]
    np.testing.assert_array_equal(forward, backward)
    kept.generate(PROMPTS[1][0], max_tokens=4)  # generation between two scorings starts from a clean memory
    np.testing.assert_array_equal(kept.score_options(prompt, options), forward)


def test_the_model_call_cache_keeps_the_two_paths_apart(pair):
    from liedar.models.call_cache import backend_identity

    full, kept = pair
    assert "reuse_prefix" not in backend_identity(full)  # default-path keys are what they were
    assert backend_identity(kept)["reuse_prefix"] is True
