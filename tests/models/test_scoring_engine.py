"""The scoring engine: every instrument's numbers are the direct path's, bit for bit; duplicates
are computed once; weights handed out end the engine's memory; the cache under it keeps
backends and dtypes apart and recomputes a damaged entry with one note line."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from liedar.behavioral.registry import instruments
from liedar.models.call_cache import CachedBackend, CallStore
from liedar.models.chat import Dialogue, Message
from liedar.models.scoring import ScoringEngine, request, score_many

Q = Dialogue.of(Message("system", "Answer briefly."), Message("user", "What is the capital of France?"))
LETTERS = [" A", " B", " C", " D"]
# every instrument that asks a model (episodes and judge read recorded files, never a model)
MODEL_INSTRUMENTS = sorted(n for n, i in instruments().items() if i.needs_model)
# small options per instrument: its --quick plan where it has one, else the fewest that run
SMALL: dict[str, dict[str, Any]] = {
    "menus": {"tiers": ("clear",), "framings": ("minimal",)},
    "noise": {"sigmas": (0.0, 0.01), "seeds": (0,)},
    "contamination": {"n_fresh": 80},
}


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    """The tiny random model with a context long enough for every instrument's prompts."""
    import torch
    from tiny_model import build_tiny_model

    from liedar import models

    torch.set_num_threads(1)
    return models.load(str(build_tiny_model(tmp_path_factory.mktemp("tiny-1024"), n_ctx=1024)), n_threads=1)


def _run(name: str, backend: Any, limit: int = 3) -> dict:
    inst = instruments()[name]
    options = dict(inst.demo.quick or inst.demo.full) if inst.demo is not None else {}
    options.pop("limit", None)
    options.update(SMALL.get(name, {}))
    options = {k: v for k, v in options.items() if k in _accepted(inst)}
    items = inst.items(limit=limit, seed=0, **options)
    return _untimed(json.loads(json.dumps(inst.run(backend, items, seed=0, **options).to_dict(), default=str)))


def _untimed(d: Any) -> Any:
    """The result without its wall-clock timings (the only numbers a run may not repeat)."""
    if isinstance(d, dict):
        return {k: _untimed(v) for k, v in d.items() if k != "seconds" and not k.endswith("_seconds")}
    return [_untimed(v) for v in d] if isinstance(d, list) else d


def _differences(a: Any, b: Any, at: str = "") -> list[str]:
    """Where two results differ, as paths (readable where a dict comparison is not)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str) for d in _differences(a.get(k), b.get(k), f"{at}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{at}[{i}]")]
    both_nan = isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b)
    return [] if a == b or both_nan else [f"{at}: {a!r} != {b!r}"]


def _accepted(inst: Any) -> set[str]:
    """The option names an instrument's items and run take (its flags' keys)."""
    return {f.key for f in inst.flags if getattr(f, "key", None)} | set(SMALL.get(inst.name, {}))


@pytest.mark.parametrize("name", MODEL_INSTRUMENTS)
def test_every_instrument_gives_the_direct_paths_numbers_through_the_engine(lm, tmp_path, name):
    direct = _run(name, lm)
    engine = ScoringEngine(CachedBackend(lm, tmp_path / "calls.sqlite"))
    assert not _differences(direct, _run(name, engine))
    replayed = ScoringEngine(CachedBackend(lm, tmp_path / "calls.sqlite"))  # answered from the store
    assert not _differences(direct, _run(name, replayed))


class Counting:
    """A scorer whose answer depends on the prompt and options; counts what reaches it."""

    def __init__(self) -> None:
        self.asked: list[tuple[Any, tuple[str, ...]]] = []

    def score_options(self, prompt, options):
        self.asked.append((prompt, tuple(options)))
        return np.array([float(len(str(prompt)) * 7 + len(o) + k) for k, o in enumerate(options)])


def test_duplicates_in_a_bulk_and_across_calls_are_computed_once_and_answered_in_order():
    inner = Counting()
    engine = ScoringEngine(inner)
    other = Dialogue.of(Message("user", "What is the capital of Italy?"))
    asked = [request(Q, LETTERS), request(other, LETTERS), request(Q, LETTERS), request(Q, LETTERS[::-1])]
    got = engine.score_many(asked)
    assert len(inner.asked) == 3  # (Q, LETTERS) once
    for r, scores in zip(asked, got):
        assert scores.tobytes() == Counting().score_options(r.prompt, r.options).tobytes()
    engine.score_options(other, LETTERS)  # another instrument asking the same: remembered
    assert len(inner.asked) == 3 and engine.stats == {"requests": 5, "remembered": 2, "computed": 3}
    assert engine.score_options("What is the capital of France?", LETTERS) is not None  # text is not a Dialogue
    assert len(inner.asked) == 4


def test_score_many_asks_a_plain_scorer_one_request_at_a_time():
    inner = Counting()
    got = score_many(inner, [request(Q, LETTERS), request(Q, LETTERS)])
    assert len(inner.asked) == 2 and got[0].tobytes() == got[1].tobytes()


def test_weights_handed_out_end_the_engines_memory():
    inner = Counting()
    inner.model = object()  # what weight noise and LoRA merges read
    engine = ScoringEngine(inner)
    engine.score_options(Q, LETTERS)
    assert engine.model is inner.model
    engine.score_options(Q, LETTERS)
    engine.score_options(Q, LETTERS)
    assert len(inner.asked) == 3  # asked again each time: the weights may have changed


def test_an_engine_over_an_engine_counts_its_own_run_and_shares_the_model_runs_answers():
    inner = Counting()
    shared = ScoringEngine(inner)
    shared.score_options(Q, LETTERS)
    run = ScoringEngine(shared)
    run.score_many([request(Q, LETTERS), request(Q, LETTERS)])
    assert run.stats["computed"] == 1 and len(inner.asked) == 1


# ---- the cache under the engine -------------------------------------------------------------------------


class Scripted:
    """A fake local backend whose answer depends on its kind and dtype (counts its calls)."""

    n_ctx = 2048
    batch_size = 8
    n_threads = 1

    def __init__(self, kind: str = "transformers", dtype: str = "float32") -> None:
        self.kind, self.dtype_name, self.fingerprint, self.calls = kind, dtype, "a" * 64, 0

    def score_options(self, prompt, options):
        self.calls += 1
        return np.array([float(len(o) + len(self.kind) + len(self.dtype_name)) for o in options])


def test_an_entry_written_by_another_backend_or_dtype_is_never_read_as_this_ones(tmp_path):
    store = CallStore(tmp_path / "shared.sqlite")  # one file on purpose: only the key separates them
    first = ScoringEngine(CachedBackend(Scripted(), store))
    want = first.score_options(Q, LETTERS)
    for kind, dtype in (("llamacpp", "float32"), ("transformers", "bfloat16"), ("llamacpp", "gguf")):
        other = Scripted(kind, dtype)
        engine = ScoringEngine(CachedBackend(other, store))
        got = engine.score_options(Q, LETTERS)
        assert other.calls == 1 and engine.inner.stats["misses"] == 1, (kind, dtype)
        assert got.tobytes() == other.score_options(Q, LETTERS).tobytes() != want.tobytes()
    again = Scripted()
    assert ScoringEngine(CachedBackend(again, store)).score_options(Q, LETTERS).tobytes() == want.tobytes()
    assert again.calls == 0  # the same backend and dtype: read back


def test_a_damaged_entry_is_computed_again_with_one_note_line(tmp_path, capsys):
    path = tmp_path / "calls.sqlite"
    want = ScoringEngine(CachedBackend(Scripted(), path)).score_options(Q, LETTERS)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE calls SET value = ?", ('{"t": "ndarray", "dtype": "<f8"}',))
    capsys.readouterr()
    fresh = Scripted()
    got = ScoringEngine(CachedBackend(fresh, path)).score_options(Q, LETTERS)
    assert got.tobytes() == want.tobytes() and fresh.calls == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("liedar: note:") and "damaged" in err[0]


# ---- a real model -----------------------------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("name", ["gap", "consistency", "sycophancy", "observer"])
def test_smollm2_bank_subset_gives_the_direct_paths_numbers_through_the_engine(smollm2_transformers, tmp_path, name):
    direct = _run(name, smollm2_transformers, limit=4)
    assert _run(name, ScoringEngine(CachedBackend(smollm2_transformers, Path(tmp_path) / "c.sqlite")), 4) == direct
