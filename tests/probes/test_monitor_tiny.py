"""HonestyMonitor on the tiny random transformers model: the real hook + KV-cache path."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.core.errors import InputError
from liedar.models.chat import Dialogue, Message
from liedar.probes.estimators import MassMeanProbe
from liedar.probes.monitor import HonestyMonitor


@pytest.fixture(scope="module")
def tiny_backend(tiny_model_dir):
    import torch

    torch.set_num_threads(1)
    from liedar import models

    return models.load(str(tiny_model_dir), backend="transformers", n_threads=1)


def _probe(d: int) -> MassMeanProbe:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, d))
    y = np.r_[np.zeros(20), np.ones(20)].astype(int)
    X[y == 1] += 0.3
    return MassMeanProbe().fit(X, y)


@pytest.mark.parametrize("layer", [0, 2, 4])
@pytest.mark.parametrize(
    "prompt,temperature",
    [
        ("Paris is the capital of", 0.0),
        ("Paris is the capital of", 1.0),
        (Dialogue.of(Message("user", "Is the sky blue?")), 1.0),
    ],
)
def test_streaming_equals_offline_ids(tiny_backend, layer: int, prompt, temperature: float) -> None:
    """Every streamed token score equals the offline score of the same token ids."""
    mon = HonestyMonitor(tiny_backend, _probe(tiny_backend.d_model), layer=layer, aggregate="max")
    live = mon.generate(prompt, max_tokens=12, temperature=temperature, seed=3)
    assert len(live.tokens) >= 1
    offline = mon.score_generation(prompt, live.generation)
    assert [t.token_id for t in offline.tokens] == [t.token_id for t in live.tokens]
    np.testing.assert_allclose(live.token_scores, offline.token_scores, rtol=1e-4, atol=1e-4)
    assert offline.score == pytest.approx(live.score, abs=1e-4)


def test_offline_dialogue_counts_only_assistant_tokens(tiny_backend) -> None:
    mon = HonestyMonitor(tiny_backend, _probe(tiny_backend.d_model), layer=2)
    dlg = Dialogue.of(Message("user", "Is the sky blue?"), Message("assistant", "The sky is blue.", detect=True))
    res = mon.score_dialogue(dlg)
    assert res.text.strip() == "The sky is blue."
    states = tiny_backend.token_states(dlg, [2])
    assert len(res.tokens) == int(states.detect.sum()) < len(states.token_ids)


def test_real_backend_bad_input(tiny_backend) -> None:
    mon = HonestyMonitor(tiny_backend, _probe(tiny_backend.d_model), layer=1)
    with pytest.raises(InputError, match="context"):
        mon.generate("Paris " * (tiny_backend.n_ctx + 10), max_tokens=2)
    with pytest.raises(InputError, match="out of range"):
        HonestyMonitor(tiny_backend, _probe(tiny_backend.d_model), layer=tiny_backend.n_layers + 2)
    with pytest.raises(InputError, match="empty"):
        mon.generate("")
