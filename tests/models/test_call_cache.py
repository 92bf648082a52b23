"""The model-call cache: replays are bit-identical, hits never reach the model, damaged rows
are recomputed, anything that changes the answer changes the key, live/unseeded calls are
never cached, two processes can share a store, and `--no-call-cache` really turns it off."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from liedar.models.backend import Generation
from liedar.models.call_cache import CachedBackend, CallStore, decode, encode, store_path, wrap
from liedar.models.chat import Dialogue, Message
from liedar.report.store import shared_results_root

ROOT = Path(__file__).resolve().parents[2]
Q = Dialogue.of(Message("system", "Answer briefly."), Message("user", "What is the capital of France?"))
LETTERS = [" A", " B", " C", " D"]
WORDS = [" Paris is the capital", " Rome", " Madrid, in Spain"]


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    import torch

    from liedar import models

    torch.set_num_threads(1)
    return models.load(str(tiny_model_dir), n_threads=1)


def _count(backend, monkeypatch, method: str) -> list[int]:
    """Count calls that reach the bare backend's `method`."""
    seen: list[int] = []
    real = getattr(backend, method)

    def counting(*a, **k):
        seen.append(1)
        return real(*a, **k)

    monkeypatch.setattr(backend, method, counting)
    return seen


def _same_array(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ---- exact replay ------------------------------------------------------------------------------------


@pytest.mark.parametrize("prompt,options", [(Q, LETTERS), (Q, WORDS), ("The capital of France is", WORDS)])
def test_score_options_replay_is_bit_identical_and_skips_the_model(lm, tmp_path, monkeypatch, prompt, options):
    direct = lm.score_options(prompt, options)
    cb = CachedBackend(lm, tmp_path / "calls.sqlite")
    seen = _count(lm, monkeypatch, "score_options")
    first = cb.score_options(prompt, options)
    assert seen == [1] and cb.stats["misses"] == 1 and cb.stats["hits"] == 0
    _same_array(first, direct)
    again = cb.score_options(prompt, options)
    assert seen == [1] and cb.stats["hits"] == 1  # answered from the store, the model not asked
    _same_array(again, direct)
    # a new wrapper (a later run) on the same store replays the same bits
    later = CachedBackend(lm, tmp_path / "calls.sqlite")
    _same_array(later.score_options(prompt, options), direct)
    assert later.stats == {"hits": 1, "misses": 0, "corrupt": 0, "passed_through": 0} and seen == [1]


def test_greedy_and_seeded_generations_replay_exactly(lm, tmp_path, monkeypatch):
    greedy = lm.generate(Q, max_tokens=8)
    sampled = lm.generate(Q, max_tokens=8, temperature=0.9, seed=3)
    cb = CachedBackend(lm, tmp_path / "calls.sqlite")
    seen = _count(lm, monkeypatch, "generate")
    assert cb.generate(Q, max_tokens=8) == greedy
    assert cb.generate(Q, max_tokens=8, temperature=0.9, seed=3) == sampled
    assert len(seen) == 2
    g2, s2 = cb.generate(Q, max_tokens=8), cb.generate(Q, max_tokens=8, temperature=0.9, seed=3)
    assert len(seen) == 2 and cb.stats["hits"] == 2
    assert isinstance(g2, Generation) and g2 == greedy and s2 == sampled
    assert cb.generate(Q, max_tokens=8, temperature=0.9, seed=4) == lm.generate(Q, 8, 0.9, 4)  # another seed: a miss


def test_token_logprobs_batches_replay_exactly(lm, tmp_path):
    batch = [lm._tokenize("Paris is the capital of France.", False)[0], lm._tokenize("Rome is.", False)[0]]
    direct = lm.token_logprobs_of_ids(batch)
    cb = CachedBackend(lm, tmp_path / "calls.sqlite")
    cb.token_logprobs_of_ids(batch)
    replay = cb.token_logprobs_of_ids(batch)
    assert cb.stats["hits"] == 1 and len(replay) == len(direct)
    for a, b in zip(replay, direct):
        _same_array(a, np.asarray(b))


def test_values_round_trip_through_json_exactly():
    odd = np.array([-np.inf, -0.0, np.nan, 1e-310, np.pi], dtype=np.float64)
    for value in (odd, odd.astype(np.float32), [odd, odd[:2]], Generation("p", "t é", [1, 2], 3)):
        back = decode(json.loads(json.dumps(encode(value))))
        if isinstance(value, list):
            for a, b in zip(back, value):
                _same_array(a, b)
        elif isinstance(value, np.ndarray):
            _same_array(back, value)
        else:
            assert back == value


# ---- what is never cached ------------------------------------------------------------------------------


def test_live_streams_and_unseeded_sampling_pass_through(lm, tmp_path, monkeypatch):
    cb = CachedBackend(lm, tmp_path / "calls.sqlite")
    seen = _count(lm, monkeypatch, "generate")
    tokens: list = []
    for _ in range(2):
        cb.generate(Q, max_tokens=4, on_token=tokens.append)
        cb.generate(Q, max_tokens=4, hook_layer=2)
        cb.generate(Q, max_tokens=4, temperature=0.7, seed=None)
    assert len(seen) == 6 and len(tokens) > 0  # every call reached the model, the callback got its tokens
    assert cb.stats == {"hits": 0, "misses": 0, "corrupt": 0, "passed_through": 6}
    assert cb.store.count() == 0


def test_handing_out_the_weights_ends_caching(lm, tmp_path, monkeypatch):
    """Weight noise perturbs `backend.model` in place: answers after that are not the
    fingerprint's, so the wrapper must stop replaying (and storing)."""
    cb = CachedBackend(lm, tmp_path / "calls.sqlite")
    cb.score_options(Q, LETTERS)
    assert cb.model is lm.model  # the raw torch model, forwarded
    seen = _count(lm, monkeypatch, "score_options")
    cb.score_options(Q, LETTERS)
    assert seen == [1] and cb.stats["passed_through"] == 1 and not cb.caching


def test_attributes_are_the_backend_s_own(lm, tmp_path):
    cb = CachedBackend(lm, tmp_path / "calls.sqlite")
    assert (cb.fingerprint, cb.n_layers, cb.d_model, cb.kind) == (lm.fingerprint, lm.n_layers, lm.d_model, lm.kind)
    np.testing.assert_array_equal(cb.hidden_states(["Paris."], [1]), lm.hidden_states(["Paris."], [1]))
    assert cb.inner is lm and wrap(cb) is cb and CachedBackend(cb).inner is lm
    assert cb.caching  # reading metadata and hidden states does not expose the weights


# ---- verification ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["value", "digest", "undecodable"])
def test_a_damaged_row_is_recomputed_and_counted(lm, tmp_path, damage):
    path = tmp_path / "calls.sqlite"
    cb = CachedBackend(lm, path)
    want = cb.score_options(Q, LETTERS)
    with sqlite3.connect(path) as conn:
        if damage == "value":  # a flipped payload under the old digest
            (value,) = conn.execute("SELECT value FROM calls").fetchone()
            d = json.loads(value)
            d["b64"] = encode(want + 1.0)["b64"]
            conn.execute("UPDATE calls SET value = ?", (json.dumps(d),))
        elif damage == "digest":
            conn.execute("UPDATE calls SET sha256 = ?", ("0" * 64,))
        else:
            import hashlib

            conn.execute("UPDATE calls SET value = ?, sha256 = ?", ("{}", hashlib.sha256(b"{}").hexdigest()))
    again = CachedBackend(lm, path)
    _same_array(again.score_options(Q, LETTERS), want)
    assert again.stats["corrupt"] == 1 and again.stats["misses"] == 1 and again.stats["hits"] == 0
    _same_array(again.score_options(Q, LETTERS), want)  # rewritten: a verified hit now
    assert again.stats["hits"] == 1


def test_a_file_that_is_not_a_database_is_moved_aside(lm, tmp_path, capsys):
    path = tmp_path / "calls.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    cb = CachedBackend(lm, path)
    _same_array(cb.score_options(Q, LETTERS), lm.score_options(Q, LETTERS))
    assert cb.stats["misses"] == 1 and "unreadable" in capsys.readouterr().err
    assert list(tmp_path.glob("calls.sqlite.damaged-*"))


# ---- keys -----------------------------------------------------------------------------------------------------


class Scripted:
    """A fake local backend whose answer depends on its fingerprint (counts its calls)."""

    kind = "transformers"
    n_ctx = 2048
    batch_size = 8

    def __init__(self, fingerprint: str, n_threads: int = 1) -> None:
        self.fingerprint, self.n_threads, self.calls = fingerprint, n_threads, 0

    def score_options(self, prompt, options):
        self.calls += 1
        return np.array([float(len(o) + len(self.fingerprint)) for o in options])


def test_anything_that_changes_the_answer_misses(lm, tmp_path):
    store = CallStore(tmp_path / "shared.sqlite")  # one file on purpose: only the key separates them
    base = CachedBackend(Scripted("a" * 64), store)
    base.score_options(Q, LETTERS)
    assert base.stats["misses"] == 1
    base.score_options(Q, LETTERS)
    assert base.stats["hits"] == 1
    variants = [
        (CachedBackend(Scripted("b" * 64), store), Q, LETTERS),  # another model
        (CachedBackend(Scripted("a" * 64, n_threads=2), store), Q, LETTERS),  # other threads
        (base, Q, LETTERS[::-1]),  # option order
        (base, Q, LETTERS[:3]),  # option list
        (base, Dialogue.of(Message("user", "What is the capital of France?")), LETTERS),  # prompt
        (base, "What is the capital of France?", LETTERS),  # plain text vs dialogue
    ]
    for cb, prompt, options in variants:
        before = cb.stats["misses"]
        cb.score_options(prompt, options)
        assert cb.stats["misses"] == before + 1, (prompt, options)
    fake = Scripted("a" * 64)
    adapter = CachedBackend(fake, store)
    fake.adapter_sha256 = "f" * 64  # same fingerprint string, an adapter recorded: still another key
    adapter.score_options(Q, LETTERS)
    assert adapter.stats["misses"] == 1


def test_base_and_organism_never_share_keys_or_files(lm, tmp_path, monkeypatch):
    """apply_adapter gives the merged model its own fingerprint: another store, other answers."""
    from liedar.models.lora import LoraAdapter, apply_adapter

    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path))
    rng = np.random.default_rng(0)
    module = "model.layers.2.self_attn.q_proj"
    weight = dict(lm.model.named_modules())[module].weight
    out_f, in_f = weight.shape
    adapter = LoraAdapter(
        {f"{module}.lora_A": rng.normal(0, 0.5, (2, in_f)).astype(np.float32),
         f"{module}.lora_B": rng.normal(0, 0.5, (out_f, 2)).astype(np.float32)},
        2, 4.0, [2], lm.fingerprint, lm.name, lm.d_model, lm.n_layers,
    )  # fmt: skip
    organism = apply_adapter(lm, adapter, name="tiny:org")
    b, o = wrap(lm), wrap(organism)
    assert store_path(lm) != store_path(organism) and b.store.path != o.store.path
    want_b, want_o = lm.score_options(Q, WORDS), organism.score_options(Q, WORDS)
    assert want_b.tobytes() != want_o.tobytes()
    _same_array(b.score_options(Q, WORDS), want_b)
    _same_array(o.score_options(Q, WORDS), want_o)
    assert b.stats["misses"] == o.stats["misses"] == 1
    # even forced into one file, the organism's key differs from the base's
    shared = CachedBackend(organism, b.store)
    _same_array(shared.score_options(Q, WORDS), want_o)
    assert shared.stats["misses"] == 1 and shared.stats["hits"] == 0


def test_wrap_leaves_served_and_fake_backends_alone():
    class Served:
        kind = "openai"
        fingerprint = "x"

    s = Served()
    assert wrap(s) is s


# ---- two processes -----------------------------------------------------------------------------------------


WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from liedar.models.call_cache import CachedBackend

    class Scripted:
        kind, n_ctx, batch_size, n_threads, fingerprint = "transformers", 2048, 8, 1, "c" * 64
        def score_options(self, prompt, options):
            return np.array([float(len(prompt) * 1000 + len(o)) for o in options])

    cb = CachedBackend(Scripted(), sys.argv[1])
    who = sys.argv[2]
    for i in range(150):
        # 100 prompts both processes ask, 50 only this one asks
        prompt = f"shared {i}" if i < 100 else f"{who} {i}"
        got = cb.score_options(prompt, [" A", " BB"])
        assert got.tolist() == [len(prompt) * 1000 + 2.0, len(prompt) * 1000 + 3.0], got
    print(cb.stats["hits"] + cb.stats["misses"], cb.stats["corrupt"])
    """
)


def test_two_processes_writing_one_store(tmp_path):
    path = tmp_path / "calls.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), who],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in ("one", "two")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.split() == ["150", "0"]
    store = CallStore(path)
    assert store.count() == 200  # 100 shared + 50 + 50, each stored once
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# ---- the switch ------------------------------------------------------------------------------------------


def test_demo_context_wraps_by_default_and_the_switch_turns_it_off(tiny_model_dir, tmp_path, monkeypatch):
    from liedar.pipeline.context import DemoConfig, DemoContext

    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    on = DemoContext(DemoConfig(str(tiny_model_dir), output=tmp_path / "a", threads=1))
    assert isinstance(on.model().inner, CachedBackend) and on.model().inner.inner is on.raw_model()
    on.model().score_options(Q, LETTERS)
    on.model().score_options(Q, LETTERS)  # the step's scoring engine remembers it
    assert on.call_cache_stats()["hits"] == 0
    on.begin_step()
    on.model().score_options(Q, LETTERS)  # the next step's engine: read from the store
    assert on.call_cache_stats()["hits"] == 1
    off = DemoContext(DemoConfig(str(tiny_model_dir), output=tmp_path / "b", threads=1, call_cache=False))
    assert not isinstance(off.model().inner, CachedBackend) and off.model().inner is off.raw_model()
    off.model().score_options(Q, LETTERS)
    assert off.call_cache_stats() is None
    # a new step gets a fresh wrapper: one step handing out the weights does not end caching for the next
    exposed = on.model()
    _ = exposed.model
    on.begin_step()
    assert on.model() is not exposed and on.model().inner.caching


@pytest.mark.parametrize("command", ["demo", "validate"])
def test_no_call_cache_flag_reaches_the_pipeline(command, monkeypatch):
    from liedar import cli

    seen: dict = {}
    if command == "demo":
        import liedar.pipeline.demo as target

        monkeypatch.setattr(target, "run_demo", lambda config: seen.setdefault("config", config) and _Stop.fire())
    else:
        import liedar.pipeline.validate as target

        monkeypatch.setattr(target, "validate", lambda config: seen.setdefault("config", config) and _Stop.fire())
    for argv, want in (([command], True), ([command, "--no-call-cache"], False)):
        seen.clear()
        with pytest.raises(_Stop):
            cli.main(argv)
        assert seen["config"].call_cache is want


class _Stop(Exception):
    @staticmethod
    def fire():
        raise _Stop


def test_the_demo_records_replayed_answers_in_its_run_file(tiny_model_dir, tmp_path, monkeypatch):
    from liedar.core.results import Section
    from liedar.pipeline.context import DemoConfig, Step
    from liedar.pipeline.demo import run_demo
    from liedar.report.store import RUN_FILE

    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    answers: list = []

    def ask(ctx):
        answers.append(ctx.model().score_options(Q, WORDS).tobytes())
        return Section(), {}

    steps = (Step("ask", ask, shared=False),)  # read from no other folder: replayed by the call cache alone
    runs = {}
    for label, enabled in (("cold", True), ("warm", True), ("off", False)):
        cfg = DemoConfig(str(tiny_model_dir), output=tmp_path / label, threads=1, call_cache=enabled)
        run_demo(cfg, steps, say=lambda s: None)
        runs[label] = json.loads((cfg.results_dir / RUN_FILE).read_text())["call_cache"]
    assert runs["cold"]["misses"] == 1 and runs["cold"]["hits"] == 0
    assert runs["warm"]["hits"] == 1 and runs["warm"]["misses"] == 0
    assert runs["warm"]["per_step"]["ask"]["hits"] == 1
    assert runs["off"] == {"enabled": False}
    assert len(set(answers)) == 1  # the replayed answer is the model's, bit for bit


# ---- the real model ----------------------------------------------------------------------------------------


@pytest.mark.integration
def test_smollm2_cached_score_options_equal_uncached(tmp_path):
    from liedar import models
    from liedar.core.errors import ModelUnavailableError

    try:
        lm = models.load("smollm2-135m", backend="llamacpp", n_threads=1)
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))
    cb = CachedBackend(lm, tmp_path / "calls.sqlite")
    for prompt, options in ((Q, LETTERS), (Q, [" Paris", " Lyon", " The capital is Paris"])):
        direct = lm.score_options(prompt, options)
        _same_array(cb.score_options(prompt, options), direct)
        _same_array(cb.score_options(prompt, options), direct)
    greedy = lm.generate(Q, max_tokens=6)
    assert cb.generate(Q, max_tokens=6) == greedy == cb.generate(Q, max_tokens=6)
    assert cb.stats["hits"] == 3 and cb.stats["misses"] == 3


def test_validate_into_a_fresh_folder_replays_the_same_matrix(tiny_model_dir, tmp_path, monkeypatch):
    """End to end: the second run (warm cache, fresh output, no shared results) asks the model
    nothing it asked before and writes the very same matrix; weight noise (bare backend) is never
    replayed. The shared results a new folder reads are tested in tests/liedar/test_shared_results.py."""
    from liedar.pipeline.validate import ValidateConfig, validate

    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    sizes = dict(
        gap_items=8,
        gap_protocols=("zero_shot_letter", "cloze_norm"),
        finetune_demos=0,
        finetune_epochs=0,
        consistency_items=4,
        shuffles=2,
        paraphrases=2,
        noise_items=3,
        noise_sigmas=(0.0, 0.01),
        noise_seeds=1,
        sycophancy_claims=3,
        honesty_items=4,
        lie_claims=3,
        lie_tokens=4,
        sycophancy_choice_items=4,
        honesty_choice_products=2,
    )
    outs = []
    for label, enabled in (("cold", True), ("warm", True), ("off", False)):
        shutil.rmtree(shared_results_root(), ignore_errors=True)  # every unit asks the (cached) model
        cfg = ValidateConfig(str(tiny_model_dir), "transformers", tmp_path / label, True, 0, 1, None, (), enabled)
        outs.append(validate(cfg, say=lambda m: None, sizes=sizes))
    cold, warm, off = outs
    assert cold.call_cache["misses"] > 0 and cold.call_cache["hits"] >= 0
    assert warm.call_cache["misses"] == 0 and warm.call_cache["hits"] >= cold.call_cache["misses"]
    assert off.call_cache == {"enabled": False}
    assert warm.matrix.to_dict() == cold.matrix.to_dict() == off.matrix.to_dict()
    assert warm.per_model[str(tiny_model_dir)].statuses["noise"] == "ok"  # ran on the bare backend


def test_generate_runs_exactly_max_tokens_when_told_not_to_stop(lm, tmp_path, monkeypatch):
    """``stop_at_end=False`` emits the end token and goes on, so speed is timed over equal work."""
    monkeypatch.setattr(lm, "_is_end", lambda token: True)  # every token ends the plain generation
    assert lm.generate(Q, max_tokens=6).token_ids == []
    exact = lm.generate(Q, max_tokens=6, stop_at_end=False)
    assert len(exact.token_ids) == 6
    cb = CachedBackend(lm, tmp_path / "calls.sqlite")
    assert cb.generate(Q, max_tokens=6, stop_at_end=False).token_ids == exact.token_ids
    assert cb.stats["passed_through"] == 1


def test_public_token_faces_match_the_primitives(lm):
    ids, offsets = lm.tokenize("Paris is the capital of France.")
    assert (ids, offsets) == lm._tokenize("Paris is the capital of France.", False)
    assert [lm.token_text(t) for t in ids] == [lm._piece(t) for t in ids]
    for a, b in zip(lm.token_logprobs_of_ids([ids]), lm._token_logprobs([ids])):
        _same_array(np.asarray(a), np.asarray(b))
