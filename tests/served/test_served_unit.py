"""The served backend against a fake OpenAI-compatible server: scoring, cache, journal,
concurrency, rate limit, and every fault as one clear line. No model, no network."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from liedar.core.errors import IncompatibleError, InputError, LiedarError
from liedar.models.chat import Dialogue, Message
from liedar.models.served import Journal, ResponseCache, ServedBackend, ServedConfig, load_served, parse_option

pytestmark = pytest.mark.timeout(60)


def backend(fake, tmp_path, **kw) -> ServedBackend:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 5.0)
    return load_served("openai:fake-model", base_url=fake.base_url, cache_dir=str(tmp_path / "cache"), **kw)


def test_parse_option_documented_rule():
    opts = [" A", " B", " C"]
    assert parse_option("B", opts) == 1
    assert parse_option("(C) because", opts) == 2
    assert parse_option("A. Paris", opts) == 0
    assert parse_option("The answer is: B", opts) == 1
    assert parse_option("Apples are nice", opts) is None  # 'A' followed by a letter is a word, not a choice
    assert parse_option("I cannot say", opts) is None
    assert parse_option("yes, surely", ["Yes", "No"]) == 0


def test_scores_come_from_top_logprobs_and_usage_counts(fake_server, tmp_path):
    with backend(fake_server, tmp_path) as b:
        s = b.score_options("Q?", [" A", " B", " C"])
        body = fake_server.bodies[-1]
        assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["max_tokens"] == 1
        assert np.all(np.isfinite(s)) and s.shape == (3,)
        again = b.score_options("Q?", [" A", " B", " C"])
        np.testing.assert_array_equal(s, again)
        u = b.usage_summary()
        assert (u["calls"], u["cache_hits"], fake_server.requests) == (1, 1, 1)
        assert u["modes"] == {"logprobs": 2}
        assert u["prompt_tokens"] == 10


def test_fallback_to_parsing_when_no_logprobs_and_no_answer_is_recorded(fake_server, tmp_path):
    fake_server.mode = "nologprobs"
    with backend(fake_server, tmp_path) as b:
        s = b.score_options("Q?", [" A", " B", " C"])
        assert s[1] == 0.0 and np.isneginf(s[[0, 2]]).all()
        fake_server.reply = "I would rather not say"
        s = b.score_options("Q2?", [" A", " B", " C"])
        assert np.isnan(s).all()
        rows = Journal.read(b.journal.path)
        assert [r["mode"] for r in rows] == ["parse", "parse-no-answer"]
        assert rows[1]["reply"] == "I would rather not say" and rows[1]["choice"] is None
        assert b.usage_summary()["no_answer"] == 1


def test_prefill_is_dropped_in_chat_mode_and_said_so(fake_server, tmp_path):
    d = Dialogue.of(Message("user", "Q?"), Message("assistant", "Answer:"))
    with backend(fake_server, tmp_path) as b:
        b.score_options(d, [" A", " B"])
        assert [m["role"] for m in fake_server.bodies[-1]["messages"]] == ["user"]
        assert b.usage_summary()["modes"] == {"logprobs-prefill-dropped": 1}


def test_cache_verified_on_read_and_api_key_never_written(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("LIEDAR_TEST_KEY", "sk-secret-123456")
    with backend(fake_server, tmp_path, api_key_env="LIEDAR_TEST_KEY") as b:
        b.generate("hello", max_tokens=4, temperature=0.7, seed=3)
        assert {k.lower(): v for k, v in fake_server.headers[-1].items()}["authorization"] == "Bearer sk-secret-123456"
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert files and not any("sk-secret-123456" in p.read_text() for p in files)
    entry = next(p for p in files if p.suffix == ".json")
    data = json.loads(entry.read_text())
    data["response"]["choices"][0]["message"]["content"] = "tampered"
    entry.write_text(json.dumps(data))
    with backend(fake_server, tmp_path, api_key_env="LIEDAR_TEST_KEY") as b:
        g = b.generate("hello", max_tokens=4, temperature=0.7, seed=3)
        assert g.text == "B" and fake_server.requests == 2  # refetched, not served tampered
        assert b.usage_summary()["corrupt_cache_entries"] == 1
    assert entry.with_suffix(".corrupt").is_file()  # set aside, not deleted


def test_sampling_parameters_and_seed_are_in_the_key(fake_server, tmp_path):
    with backend(fake_server, tmp_path) as b:
        for t, seed in [(0.7, 1), (0.7, 2), (0.5, 1), (0.7, 1)]:
            b.generate("hello", max_tokens=4, temperature=t, seed=seed)
        assert fake_server.requests == 3 and b.usage_summary()["cache_hits"] == 1


def test_journal_skips_duplicates_and_survives_a_torn_line(tmp_path):
    j = Journal(tmp_path / "j.jsonl")
    assert j.append({"id": "a", "x": 1}) and not j.append({"id": "a", "x": 2})
    with open(j.path, "ab") as fh:
        fh.write(b'{"id": "b", "x"')  # a kill mid-write
    j2 = Journal(j.path)
    assert [r["id"] for r in Journal.read(j.path)] == ["a"]
    assert j2.append({"id": "b", "x": 3})
    assert [r["id"] for r in Journal.read(j.path)] == ["a", "b"]


def test_prefetch_runs_requests_concurrently_bounded(fake_server, tmp_path):
    fake_server.delay = 0.2

    def run(bk):
        return [bk.generate(f"q{i}", max_tokens=2, temperature=0.7, seed=i).text for i in range(12)]

    with backend(fake_server, tmp_path, concurrency=4) as b:
        t0 = time.perf_counter()
        out = b.prefetch(run)
        took = time.perf_counter() - t0
    assert out == ["B"] * 12 and fake_server.requests == 12
    assert fake_server.peak == 4  # bounded, and actually concurrent
    assert took < 12 * 0.2  # under the sequential floor (12 x 0.2 s)


def test_rate_limit_spaces_requests(fake_server, tmp_path):
    with backend(fake_server, tmp_path, concurrency=8, rate_limit=10.0) as b:
        t0 = time.perf_counter()
        b.prefetch(lambda bk: [bk.generate(f"r{i}", max_tokens=1, temperature=0.5, seed=i) for i in range(6)])
        took = time.perf_counter() - t0
    assert took >= 0.45  # 6 starts at 10/s: the 6th no earlier than 0.5 s after the first


# ---- faults: one clear line each ----------------------------------------------------------------
def one_line(exc: BaseException) -> str:
    msg = str(exc)
    assert isinstance(exc, LiedarError) and "\n" not in msg and len(msg) < 300
    return msg


def test_malformed_json(fake_server, tmp_path):
    fake_server.mode = "malformed"
    with backend(fake_server, tmp_path) as b, pytest.raises(IncompatibleError) as e:
        b.generate("x")
    assert "malformed JSON" in one_line(e.value)
    assert not list((tmp_path / "cache" / "responses").rglob("*.json"))  # nothing bad cached


def test_http_500_is_retried_then_one_line(fake_server, tmp_path):
    fake_server.mode = "500"
    with backend(fake_server, tmp_path, max_retries=2) as b, pytest.raises(LiedarError) as e:
        b.generate("x")
    assert "HTTP 500 after 2 retries" in one_line(e.value)
    assert fake_server.requests == 3


def test_slow_response_times_out(fake_server, tmp_path):
    fake_server.mode = "slow"
    t0 = time.perf_counter()
    with backend(fake_server, tmp_path, timeout=0.5) as b, pytest.raises(LiedarError) as e:
        b.generate("x")
    assert "did not answer within 0.5s" in one_line(e.value)
    assert time.perf_counter() - t0 < 2.5


def test_a_timed_out_handler_ends_with_its_server_and_prints_nothing(fake_server, tmp_path, capsys):
    # The handler is still waiting when the client gives up; closing the server must end it,
    # or it wakes during a later test and prints a traceback into that test's captured stderr.
    fake_server.mode = "slow"
    with backend(fake_server, tmp_path, timeout=0.3) as b, pytest.raises(LiedarError):
        b.generate("x")
    fake_server.close()
    handlers = [t for t in threading.enumerate() if "process_request_thread" in repr(getattr(t, "_target", None))]
    assert not handlers
    assert capsys.readouterr().err == ""


def test_unknown_model(fake_server, tmp_path):
    b = load_served("openai:nope", base_url=fake_server.base_url, cache_dir=str(tmp_path))
    with b, pytest.raises(InputError) as e:
        b.generate("x")
    assert "has no model 'nope'" in one_line(e.value) and "fake-model" in str(e.value)


def test_not_openai_compatible(fake_server, tmp_path):
    fake_server.mode = "html"
    with backend(fake_server, tmp_path) as b, pytest.raises(IncompatibleError) as e:
        b.generate("x")
    assert "not an OpenAI-compatible API" in one_line(e.value)


def test_no_server_at_the_url(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    b = load_served("openai:m", base_url=f"http://127.0.0.1:{port}/v1", cache_dir=str(tmp_path))
    with b, pytest.raises(LiedarError) as e:
        b.score_options("x", ["A", "B"])
    assert "no server answers at" in one_line(e.value)


def test_missing_api_key_and_bad_config(monkeypatch, tmp_path):
    monkeypatch.delenv("LIEDAR_NO_SUCH_KEY", raising=False)
    with pytest.raises(InputError) as e:
        load_served("openai:m", base_url="http://127.0.0.1:1/v1", api_key_env="LIEDAR_NO_SUCH_KEY")
    assert "$LIEDAR_NO_SUCH_KEY is not set" in one_line(e.value)
    with pytest.raises(InputError):
        load_served("openai:m")  # no URL
    with pytest.raises(InputError):
        ServedBackend(ServedConfig(model="m", base_url="ftp://x"))


def test_white_box_asks_are_refused_in_one_line(fake_server, tmp_path):
    from liedar.behavioral.runners.noise import run_noise

    with backend(fake_server, tmp_path) as b:
        for call in (lambda: b.hidden_states(["x"], [1]), lambda: b.token_states("x", [1])):
            with pytest.raises(IncompatibleError) as e:
                call()
            assert "hidden states" in one_line(e.value)
        with pytest.raises(IncompatibleError) as e:
            b.generate("x", hook_layer=3)
        one_line(e.value)
        with pytest.raises(IncompatibleError) as e:
            run_noise(b)
        assert "weight noise" in one_line(e.value)
    assert fake_server.requests == 0


def test_cache_only_rerun_needs_no_server(fake_server, tmp_path):
    with backend(fake_server, tmp_path) as b:
        first = b.score_options("Q?", [" A", " B"])
    url = fake_server.base_url
    fake_server.mode = "500"  # the server is now useless; the cache must answer
    with load_served("openai:fake-model", base_url=url, cache_dir=str(tmp_path / "cache"), max_retries=0) as b:
        np.testing.assert_array_equal(b.score_options("Q?", [" A", " B"]), first)
        assert b.usage_summary()["calls"] == 0


def test_response_cache_roundtrip(tmp_path):
    c = ResponseCache(tmp_path)
    c.put("ab" * 32, "e", {"b": 1}, {"choices": [1]})
    assert c.get("ab" * 32) == {"choices": [1]} and c.get("cd" * 32) is None
