"""HonestyMonitor on a deterministic fake backend: streaming == offline, aggregates, errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from monitor_support_fake import FakeBackend  # noqa: E402

from liedar.core.errors import IncompatibleError, InputError  # noqa: E402
from liedar.models.chat import Dialogue, Message  # noqa: E402
from liedar.probes.estimators import MassMeanProbe  # noqa: E402
from liedar.probes.io import ProbeMetadata, load_probe, save_probe  # noqa: E402
from liedar.probes.monitor import HonestyMonitor, aggregate_scores, sentence_spans  # noqa: E402


def _probe(d: int = 8, seed: int = 0) -> MassMeanProbe:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, d))
    y = np.r_[np.zeros(20), np.ones(20)].astype(int)
    X[y == 1] += 0.5
    return MassMeanProbe().fit(X, y)


def _meta(backend: FakeBackend, layer: int = 2, **kw) -> ProbeMetadata:
    base = dict(
        model_name=backend.name,
        model_fingerprint=backend.fingerprint,
        layer=layer,
        position="last",
        d_model=backend.d_model,
    )
    return ProbeMetadata(**{**base, **kw})


@pytest.fixture()
def backend() -> FakeBackend:
    return FakeBackend()


def test_streaming_scores_equal_offline_plain_text(backend: FakeBackend) -> None:
    mon = HonestyMonitor(backend, _probe(), metadata=_meta(backend), aggregate="mean", threshold=0.1)
    seen = []
    live = mon.generate("Was the car in an accident?", max_tokens=20, on_score=seen.append)
    assert backend.generate_calls[-1]["hook_layer"] == 2
    assert [t.score for t in seen] == [t.score for t in live.tokens]  # streamed while generating
    offline = mon.score_transcript("Was the car in an accident?", live.text)
    assert [t.text for t in offline.tokens] == [t.text for t in live.tokens]
    np.testing.assert_allclose(offline.token_scores, live.token_scores, rtol=1e-6, atol=1e-6)
    assert offline.score == pytest.approx(live.score)


def test_streaming_scores_equal_offline_dialogue(backend: FakeBackend) -> None:
    mon = HonestyMonitor(backend, _probe(), metadata=_meta(backend, layer=1))
    prompt = Dialogue.of(Message("system", "You sell cars."), Message("user", "Any accidents?"))
    live = mon.generate(prompt, max_tokens=50)
    offline = mon.score_transcript(prompt, live.text)
    np.testing.assert_allclose(offline.token_scores, live.token_scores, rtol=1e-6, atol=1e-6)


def test_only_detect_tokens_count(backend: FakeBackend) -> None:
    mon = HonestyMonitor(backend, _probe(), layer=2)
    dlg = Dialogue.of(Message("user", "Is it new?"), Message("assistant", " Yes, brand new.", detect=True))
    res = mon.score_dialogue(dlg)
    assert res.text == " Yes, brand new."
    with pytest.raises(InputError, match="detect"):
        mon.score_dialogue(Dialogue.of(Message("user", "hi"), Message("assistant", " hello")))


def test_score_matches_probe_decision_function(backend: FakeBackend) -> None:
    probe = _probe()
    mon = HonestyMonitor(backend, probe, layer=2)
    res = mon.score_transcript("Hello", " there. Friend!")
    states = backend.token_states("Hello there. Friend!", [2])
    expected = probe.decision_function(states.hidden[1:, 0, :])
    np.testing.assert_allclose(res.token_scores, expected, rtol=1e-9)


@pytest.mark.parametrize("how", ["mean", "max", "last"])
def test_aggregates_and_flags(backend: FakeBackend, how: str) -> None:
    mon = HonestyMonitor(backend, _probe(), layer=2, aggregate=how, threshold=0.0)
    res = mon.generate("Tell me.", max_tokens=30)
    s = res.token_scores
    want = {"mean": s.mean(), "max": s.max(), "last": s[-1]}[how]
    assert res.score == pytest.approx(want)
    assert res.flagged == (want > 0.0)
    assert all(t.flagged == (t.score > 0.0) for t in res.tokens)
    # sentences partition the tokens, in order, and carry the same aggregate of their tokens
    covered = [i for sen in res.sentences for i in range(sen.first_token, sen.last_token + 1)]
    assert covered == list(range(len(res.tokens)))
    assert "".join(sen.text for sen in res.sentences) == res.text
    for sen in res.sentences:
        part = s[sen.first_token : sen.last_token + 1]
        assert sen.score == pytest.approx(aggregate_scores(part, how))
        assert sen.flagged == (sen.score > 0.0)
    json.dumps(res.to_dict())


def test_sentence_spans_cover_text() -> None:
    text = " The car is fine. It never crashed!\nTrust me, honestly."
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == [" The car is fine.", " It never crashed!", "\n", "Trust me, honestly."]
    assert sentence_spans("") == [(0, 0)]
    assert sentence_spans("v1.2 is out") == [(0, 11)]  # no break without following whitespace


def test_saved_probe_roundtrip_and_wrong_model(tmp_path: Path, backend: FakeBackend) -> None:
    path = save_probe(tmp_path / "p.npz", _probe(), _meta(backend))
    mon = HonestyMonitor.from_file(backend, path)
    assert mon.layer == 2
    other = FakeBackend()
    other.fingerprint = "0" * 64
    with pytest.raises(IncompatibleError, match="retrain|trained"):
        HonestyMonitor.from_file(other, path)
    _, meta = load_probe(path)
    with pytest.raises(IncompatibleError, match="trained on"):
        HonestyMonitor(other, _probe(), metadata=meta)


def test_wrong_width_is_incompatible(backend: FakeBackend) -> None:
    with pytest.raises(IncompatibleError, match="width|d_model"):
        HonestyMonitor(backend, _probe(d=5), layer=1)
    with pytest.raises(IncompatibleError, match="width"):
        HonestyMonitor(backend, _probe(), metadata=_meta(backend, d_model=16))


@pytest.mark.parametrize("layer", [-1, 5, 40])
def test_layer_beyond_depth(backend: FakeBackend, layer: int) -> None:
    with pytest.raises(InputError, match="out of range"):
        HonestyMonitor(backend, _probe(), metadata=_meta(backend, layer=layer))


@pytest.mark.parametrize("prompt", ["", "   ", Dialogue(())])
def test_empty_prompt(backend: FakeBackend, prompt) -> None:
    mon = HonestyMonitor(backend, _probe(), layer=1)
    with pytest.raises(InputError, match="empty"):
        mon.generate(prompt)
    with pytest.raises(InputError, match="empty"):
        mon.score_transcript(prompt, " ok")
    assert not backend.generate_calls


def test_prompt_longer_than_context(backend: FakeBackend) -> None:
    mon = HonestyMonitor(backend, _probe(), layer=1)
    with pytest.raises(InputError, match="context"):
        mon.generate("word " * 100)


def test_bad_aggregate(backend: FakeBackend) -> None:
    with pytest.raises(InputError, match="aggregate"):
        HonestyMonitor(backend, _probe(), layer=1, aggregate="median")


def test_threshold_defaults_to_probe_metadata(backend: FakeBackend) -> None:
    mon = HonestyMonitor(backend, _probe(), metadata=_meta(backend, threshold=1.5))
    assert mon.threshold == 1.5
    assert HonestyMonitor(backend, _probe(), metadata=_meta(backend, threshold=1.5), threshold=0.2).threshold == 0.2
