"""Property-based fuzzing of every loader: arbitrary bytes and arbitrary JSON in, and the only
exception that may come out is a `LiedarError` (the CLI prints it as one line, exit 2).

Bytes are drawn raw and also as near-misses (a valid file with bytes flipped or cut), since
random bytes alone rarely get past the first check. Each loader gets a bounded number of
examples (``LIEDAR_FUZZ_EXAMPLES``, default 200) and each example a deadline, so the suite
stays bounded; ``scripts/fuzz_loaders.py`` runs the same properties with many more.
"""

from __future__ import annotations

import argparse
import io
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from liedar.core.errors import LiedarError

EXAMPLES = int(os.environ.get("LIEDAR_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    # generous: on two shared cores (load average 14) one saved-results example took 7.1 s once
    # and 0.1 s on replay; a loader that hangs still fails
    deadline=timedelta(seconds=30),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
KEYS = ["statement", "label", "dialogue", "role", "content", "detect", "prompt", "response", "id", "episode_id"]
KEYS += ["scenario", "action", "followup", "topic", "group", "style", "polarity", "schema_version", "steps"]
KEYS += ["name", "config_hash", "status", "section", "raw", "model", "seconds", "reason", "files", "version"]
# objects whose keys are the ones loaders look for, so fuzzing reaches the field checks
objects = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6)
messages = st.lists(
    st.dictionaries(st.sampled_from(["role", "content", "detect"]), json_values, max_size=3), max_size=3
)
dialogue_rows = st.fixed_dictionaries({"dialogue": messages | json_values, "label": json_values})


def _lines(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _mutate(data: bytes, cut: int, flips: list[tuple[int, int]]) -> bytes:
    b = bytearray(data[: max(0, len(data) - cut)] if cut else data)
    for pos, val in flips:
        if b:
            b[pos % len(b)] = val
    return bytes(b)


mutations = st.tuples(st.integers(0, 64), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4))
file_bytes = (
    st.binary(max_size=300)
    | st.lists(objects, max_size=4).map(_lines)
    | st.lists(dialogue_rows, max_size=3).map(_lines)
    | st.lists(json_values, max_size=3).map(_lines)
    | st.text(max_size=200).map(lambda t: t.encode("utf-8"))
)


def _only_liedar_errors(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except LiedarError:
        return None


@pytest.fixture
def f(tmp_path) -> Path:
    return tmp_path / "input"


@FUZZ
@given(data=file_bytes, bom=st.booleans())
def test_jsonl_reader(f, data, bom):
    from liedar.core._util.jsonl import check_dialogue, iter_jsonl, read_records

    path = f.with_suffix(".jsonl")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    _only_liedar_errors(lambda: list(iter_jsonl(path)))
    _only_liedar_errors(read_records, path, ("id", "label"))
    rows = _only_liedar_errors(lambda: list(iter_jsonl(path))) or []
    for lineno, row in rows:
        if "dialogue" in row:
            _only_liedar_errors(check_dialogue, row["dialogue"], f"{path}:{lineno}")


csv_text = st.lists(
    st.lists(st.text(max_size=10) | st.sampled_from(["statement", "label", "1", "0", "true", "id"]), max_size=4),
    max_size=5,
).map(lambda rows: "\n".join(",".join(r) for r in rows).encode())


@FUZZ
@given(data=st.binary(max_size=200) | csv_text, header=st.booleans(), bom=st.booleans())
def test_statement_csv(f, data, header, bom):
    from liedar.probes.datasets import load_csv

    path = f.with_suffix(".csv")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + (b"statement,label\n" if header else b"") + data)
    _only_liedar_errors(load_csv, path)


@FUZZ
@given(data=file_bytes)
def test_statement_jsonl(f, data):
    from liedar.probes.datasets import load_jsonl

    path = f.with_suffix(".jsonl")
    path.write_bytes(data)
    _only_liedar_errors(load_jsonl, path)


@FUZZ
@given(data=file_bytes)
def test_transcripts(f, data):
    from liedar.probes.monitor_calibration import load_control_file, load_transcripts

    path = f.with_suffix(".jsonl")
    path.write_bytes(data)
    _only_liedar_errors(load_transcripts, path)
    _only_liedar_errors(load_control_file, path)


@FUZZ
@given(data=file_bytes)
def test_episodes(f, data):
    from liedar.behavioral.episodes import load_episodes, score_episodes
    from liedar.behavioral.items.episodes import RUBRICS

    path = f.with_suffix(".jsonl")
    path.write_bytes(data)
    episodes = _only_liedar_errors(load_episodes, path)
    if episodes:
        _only_liedar_errors(score_episodes, episodes, RUBRICS)


@FUZZ
@given(data=file_bytes | csv_text, as_csv=st.booleans())
def test_judge_labels(f, data, as_csv):
    from liedar.behavioral.judges import load_labels

    path = f.with_suffix(".csv" if as_csv else ".jsonl")
    path.write_bytes((b"id,label\n" if as_csv else b"") + data)
    _only_liedar_errors(load_labels, path)


@pytest.fixture(scope="module")
def probe_npz(tmp_path_factory) -> bytes:
    from hardening_support import probe_bytes

    return probe_bytes(tmp_path_factory.mktemp("fuzz-probe"))


@FUZZ
@given(raw=st.binary(max_size=300), mutation=mutations, use_raw=st.booleans())
def test_probe_file_bytes(f, probe_npz, raw, mutation, use_raw):
    from liedar.probes.io import load_probe

    path = f.with_suffix(".npz")
    path.write_bytes(raw if use_raw else _mutate(probe_npz, *mutation))
    _only_liedar_errors(load_probe, path, expect_fingerprint="0" * 64, expect_d_model=576)


@FUZZ
@given(
    header=objects | json_values,
    keep=st.booleans(),
    extra=st.dictionaries(st.sampled_from(["coef_", "x"]), json_values),
)
def test_probe_file_header(f, probe_npz, header, keep, extra):
    """A well-formed npz whose header (or its parts) is arbitrary JSON."""
    from liedar.probes.io import load_probe

    with np.load(io.BytesIO(probe_npz), allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    real = json.loads(str(arrays["__liedar_probe__"]))
    if keep and isinstance(header, dict):
        real["metadata"].update(header)  # a real header with fuzzed metadata fields
        header = real
    arrays["__liedar_probe__"] = np.array(json.dumps(header))
    for k, v in extra.items():
        try:
            arrays[k] = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            arrays[k] = np.array(json.dumps(v))
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path = f.with_suffix(".npz")
    path.write_bytes(buf.getvalue())
    _only_liedar_errors(load_probe, path)


@FUZZ
@given(
    run=file_bytes | objects.map(lambda o: json.dumps(o).encode()),
    step=file_bytes | objects.map(lambda o: json.dumps(o).encode()),
)
def test_saved_results(tmp_path, run, step):
    from liedar.report.store import load_results, load_step

    folder = tmp_path / "results"
    folder.mkdir(exist_ok=True)
    (folder / "run.json").write_bytes(run)
    (folder / "step-gap.json").write_bytes(step)
    _only_liedar_errors(load_results, folder)
    load_step(folder, "gap", "abc")  # damaged steps are recomputed: never raises


@FUZZ
@given(manifest=file_bytes | objects.map(lambda o: json.dumps(o).encode()), payload=st.binary(max_size=64))
def test_cache_manifests_and_shards(tmp_path, manifest, payload):
    """Cache readers never raise on damage: they report it, and the caller rebuilds."""
    from liedar.models.cache import _DAMAGED, _read
    from liedar.models.storage import verify_manifest

    (tmp_path / "w.bin").write_bytes(payload)
    (tmp_path / "m.json").write_bytes(manifest)
    assert verify_manifest(tmp_path / "m.json", tmp_path) is None or isinstance(
        verify_manifest(tmp_path / "m.json", tmp_path), str
    )
    (tmp_path / "shard.npz").write_bytes(payload + manifest)
    got = _read(tmp_path / "shard.npz", {"layer": 1}, ["h"], 4)
    assert got is None or got is _DAMAGED


@FUZZ
@given(
    data=file_bytes
    | objects.map(lambda o: json.dumps(o).encode())
    | st.dictionaries(st.sampled_from(["threshold", "aggregate", "control_sha256"]), json_values).map(
        lambda o: json.dumps(o).encode()
    )
)
def test_threshold_files(f, data):
    """`--threshold FILE`: a number from a calibration file, or argparse's one-line error."""
    from liedar.commands.monitor import threshold_value

    path = f.with_suffix(".json")
    path.write_bytes(data)
    try:
        threshold_value(str(path))
    except argparse.ArgumentTypeError:
        pass


# ---- inspect_ai eval logs -----------------------------------------------------------------------

SAMPLE_FIELDS = ["id", "epoch", "input", "target", "choices", "output", "scores", "metadata"]


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory) -> dict:
    """A valid two-sample multiple-choice log, written and read back by inspect_ai itself."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    created = "2026-12-03T00:00:00+00:00"
    spec = EvalSpec(created=created, task="t", dataset=EvalDataset(), model="m", config=EvalConfig())
    samples = [
        EvalSample(
            id=i, epoch=e, input="Which?", target="A", choices=["x", "y", "z"],
            output=ModelOutput.from_content("m", "ANSWER: A"),
            scores={"choice": Score(value="C", answer="A")}, metadata={"shuffle_seed": e},
        )
        for i in range(2) for e in (1, 2)
    ]  # fmt: skip
    path = tmp_path_factory.mktemp("inspect") / "log.json"
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path))
    return json.loads(path.read_text())


def _inspect_pipeline(path: Path) -> None:
    from liedar.integrations.inspect_logs import build_records, read_logs, run_detectors

    def run() -> None:
        run_detectors(build_records(read_logs([path])), seed=0)

    _only_liedar_errors(run)


@FUZZ
@given(raw=file_bytes, mutation=mutations, use_raw=st.booleans(), suffix=st.sampled_from([".json", ".eval"]))
def test_inspect_log_bytes(f, inspect_log, raw, mutation, use_raw, suffix):
    path = f.with_suffix(suffix)
    path.write_bytes(raw if use_raw else _mutate(json.dumps(inspect_log).encode(), *mutation))
    _inspect_pipeline(path)


@FUZZ
@given(
    edits=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(SAMPLE_FIELDS), json_values | objects), min_size=1, max_size=3
    ),
    top=st.none() | st.tuples(st.sampled_from(["samples", "eval", "status", "version"]), json_values),
)
def test_inspect_log_structure(f, inspect_log, edits, top):
    """Well-formed JSON, wrong content: a sample field (or a top-level one) replaced."""
    log = json.loads(json.dumps(inspect_log))
    for i, key, value in edits:
        log["samples"][i][key] = value
    if top is not None:
        log[top[0]] = top[1]
    path = f.with_suffix(".json")
    path.write_text(json.dumps(log))
    _inspect_pipeline(path)


# ---- organism cards (models.cards.read_card): the shipped ground truth ------------------------

_CARD = Path(__file__).resolve().parents[2] / "zoo" / "smollm2-135m" / "sycophant" / "card.json"


def _card_folder(tmp_path: Path, data: bytes) -> Path:
    folder = tmp_path / "card"
    folder.mkdir(exist_ok=True)
    (folder / "card.json").write_bytes(data)
    return folder


def _read_card_or_liedar_error(folder: Path) -> None:
    from liedar.models.cards import read_card

    try:
        card = read_card(folder)
    except LiedarError:
        return
    assert card.headline in card.ground_truth  # accepted only when well formed


@pytest.mark.skipif(not _CARD.is_file(), reason="no shipped card in zoo/ to mutate")
@FUZZ
@given(cut=st.integers(0, 64), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=6))
def test_organism_card_mutated_bytes(tmp_path, cut, flips):
    _read_card_or_liedar_error(_card_folder(tmp_path, _mutate(_CARD.read_bytes(), cut, flips)))


@pytest.mark.skipif(not _CARD.is_file(), reason="no shipped card in zoo/ to mutate")
@FUZZ
@given(path=st.lists(st.sampled_from(["base", "adapter", "recipe", "build", "ground_truth", "headline", "learned",
                                      "sycophancy_gap", "value", "lo", "n", "fingerprint", "sha256", "bytes"]),
                     min_size=1, max_size=3),
       value=json_values)  # fmt: skip
def test_organism_card_with_a_field_replaced(tmp_path, path, value):
    data = json.loads(_CARD.read_text())
    node = data
    for key in path[:-1]:
        if not isinstance(node, dict):
            break
        node = node.setdefault(key, {})
    if isinstance(node, dict):
        node[path[-1]] = value
    _read_card_or_liedar_error(_card_folder(tmp_path, json.dumps(data).encode()))


@FUZZ
@given(data=st.binary(max_size=512))
def test_organism_card_raw_bytes(tmp_path, data):
    _read_card_or_liedar_error(_card_folder(tmp_path, data))


_AUDIT_RECORD = Path(__file__).resolve().parents[2] / "docs" / "records" / "audit-zoo-smollm2-135m-test.json"
_AUDIT_KEYS = ["format", "rule", "models", "zoo", "score", "verdict", "rows", "state", "effect", "value", "confusion"]
_AUDIT_KEYS += ["per_detector", "recall", "false_flags", "rate", "curve", "points", "anchor", "truth", "name", "id"]


def _read_audit_or_liedar_error(tmp_path: Path, data: bytes) -> None:
    from liedar.report.audit_record import read_record

    path = tmp_path / "audit.json"
    path.write_bytes(data)
    try:
        record = read_record(path)
    except LiedarError:
        return
    from liedar.report.audit import audit_blocks

    assert record["format"] == "liedar-audit-1" and record["models"]  # accepted only when well formed
    audit_blocks(record, {})  # and then the page renders from it


def _position(key: Any) -> int:
    return key if isinstance(key, int) else len(key)


def _replace(data: Any, path: list[Any], value: Any) -> None:
    """Set ``value`` at ``path`` (keys of objects, indices of lists, taken modulo) where it leads."""
    node = data
    for key in path[:-1]:
        if isinstance(node, dict) and node:
            node = node.get(key, next(iter(node.values())))
        elif isinstance(node, list) and node:
            node = node[_position(key) % len(node)]
    if isinstance(node, dict):
        node[path[-1]] = value
    elif isinstance(node, list) and node:
        node[_position(path[-1]) % len(node)] = value


@pytest.mark.skipif(not _AUDIT_RECORD.is_file(), reason="no committed audit record to damage")
@FUZZ
@given(path=st.lists(st.sampled_from(_AUDIT_KEYS), min_size=1, max_size=5), value=json_values, drop=st.booleans())
def test_audit_record_with_a_field_replaced(tmp_path, path, value, drop):
    data = json.loads(_AUDIT_RECORD.read_text(encoding="utf-8"))
    if drop and isinstance(data.get(path[0]), dict):
        data[path[0]].pop(path[-1], None)
    else:
        _replace(data, path, value)
    _read_audit_or_liedar_error(tmp_path, json.dumps(data).encode())


@pytest.mark.skipif(not _AUDIT_RECORD.is_file(), reason="no committed audit record to damage")
@FUZZ
@given(data=file_bytes | mutations.map(lambda m: _mutate(_AUDIT_RECORD.read_bytes()[:4000], *m)))
def test_audit_record_bytes(tmp_path, data):
    _read_audit_or_liedar_error(tmp_path, data)


_ANSWER_KEYS = ["choices", "index", "message", "content", "text", "logprobs", "top_logprobs", "token", "logprob"]
_ANSWER_KEYS += ["usage", "prompt_tokens", "completion_tokens"]
_GOOD_ANSWER = {
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "A"},
            "logprobs": {
                "content": [
                    {
                        "token": "A",
                        "logprob": -0.1,
                        "top_logprobs": [{"token": "A", "logprob": -0.1}, {"token": "B", "logprob": -2.5}],
                    }
                ]
            },
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 1},
}


@FUZZ
@given(
    path=st.lists(st.sampled_from(_ANSWER_KEYS) | st.integers(0, 3), min_size=1, max_size=6),
    value=json_values | st.floats(),
    n=st.integers(1, 4),
    top=st.integers(1, 20),
)
def test_served_answer_check(path, value, n, top):
    """Whatever a server sends, `check_answer` accepts it only when every reader can use it."""
    import copy

    from liedar.models.served import _texts, _top_logprobs, check_answer, option_logprobs

    answer = copy.deepcopy(_GOOD_ANSWER)
    _replace(answer, path, value)
    body = {"n": n, "logprobs": True, "top_logprobs": top}
    try:
        check_answer(answer, body, "http://127.0.0.1:9/v1/chat/completions")
    except LiedarError as exc:
        assert "broke the OpenAI API" in str(exc)
        return
    assert len(_texts(answer)) <= n  # the readers the instruments use, on the accepted answer
    found = _top_logprobs(answer)
    if found:
        assert all(v <= 0 and np.isfinite(v) for v in found.values())
        option_logprobs(found, ["A", "B"], exact=False)
