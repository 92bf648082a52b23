"""The bad-input catalogue: every subcommand refuses bad paths, files, flags and numbers
with exit 2, one stderr line, no traceback, its inputs unchanged, nothing written, and —
since every case here can be judged without the model — no model loaded.

Each case is (id, argv, extra files). The argv runs in a fresh folder holding one valid
file of every format (conftest.GOOD_TEXT, a valid probe.npz, a results/ folder, an existing
folder adir/); the extra files are the damaged inputs the case points at. The folder's
full snapshot (every path, size, mode, hash) must be identical after the run, which also
proves no output and no temporary file was left.

Cases run in-process through `liedar.cli.main` (fast); `test_through_a_subprocess` runs a
few through a real interpreter to check the same contract end to end.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Callable, Union

import numpy as np
import pytest
from hardening_support import ModelLoaded, snapshot

Extra = dict[str, Union[str, bytes, Callable[[Path], bytes]]]

# --- damaged files -------------------------------------------------------------------------

NOT_UTF8 = b"statement,label\n\xff\xfe caf\xe9 is French.,1\n"
DIALOGUE = '[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yes.", "detect": true}]'


def _probe_variant(change: Callable[[dict], None]) -> Callable[[Path], bytes]:
    """A copy of the valid probe.npz with its arrays/header changed by `change`."""

    def build(folder: Path) -> bytes:
        with np.load(folder / "probe.npz", allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        change(arrays)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    return build


def _header(edit: Callable[[dict], None]) -> Callable[[dict], None]:
    def change(arrays: dict) -> None:
        header = json.loads(str(arrays["__liedar_probe__"]))
        edit(header)
        arrays["__liedar_probe__"] = np.array(json.dumps(header))

    return change


def _set(path: tuple, value) -> Callable[[dict], None]:
    def edit(header: dict) -> None:
        node = header
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def _truncated(folder: Path) -> bytes:
    return (folder / "probe.npz").read_bytes()[:300]


def _pickled(folder: Path) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, __liedar_probe__=np.array([{"x": 1}], dtype=object))
    return buf.getvalue()


def _corrupt_member(folder: Path) -> bytes:
    data = bytearray((folder / "probe.npz").read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = b"\x00" * 64  # a CRC failure inside a member
    return bytes(data)


def _bare_array(folder: Path) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.zeros(3))
    return buf.getvalue()


def _zip_without_arrays(folder: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("readme.txt", "hello")
    return buf.getvalue()


PICKLE_MODEL = {"pkl-model/config.json": '{"model_type": "llama"}', "pkl-model/pytorch_model.bin": b"\x80\x04N."}
RUN_JSON = "results/run.json"
STEP_JSON = "results/step-gap.json"


def _jsonl(*rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


EP = {"episode_id": "e1", "scenario": "trading-report", "action": "report-tip"}
T = {"prompt": "Q: Is it?\nA:", "response": " Yes.", "label": "honest"}

# (id, argv, extra files)
CASES: list[tuple[str, list[str], Extra]] = [
    # ---- extract --------------------------------------------------------------------------
    ("extract-no-data", ["extract", "--model", "smollm2-135m", "--layers", "3", "--output", "out"], {}),
    (
        "extract-layers-word",
        ["extract", "--model", "smollm2-135m", "--data", "good.csv", "--layers", "abc", "--output", "out"],
        {},
    ),
    (
        "extract-layers-descending",
        ["extract", "--model", "smollm2-135m", "--data", "good.csv", "--layers", "5-2", "--output", "out"],
        {},
    ),
    (
        "extract-layers-negative",
        ["extract", "--model", "smollm2-135m", "--data", "good.csv", "--layers=-1", "--output", "out"],
        {},
    ),
    (
        "extract-layers-empty",
        ["extract", "--model", "smollm2-135m", "--data", "good.csv", "--layers", ",", "--output", "out"],
        {},
    ),
    (
        "extract-threads-zero",
        [
            "extract",
            "--model",
            "smollm2-135m",
            "--data",
            "good.csv",
            "--layers",
            "3",
            "--output",
            "out",
            "--threads",
            "0",
        ],
        {},
    ),
    (
        "extract-threads-negative",
        [
            "extract",
            "--model",
            "smollm2-135m",
            "--data",
            "good.csv",
            "--layers",
            "3",
            "--output",
            "out",
            "--threads=-1",
        ],
        {},
    ),
    (
        "extract-threads-word",
        [
            "extract",
            "--model",
            "smollm2-135m",
            "--data",
            "good.csv",
            "--layers",
            "3",
            "--output",
            "out",
            "--threads",
            "two",
        ],
        {},
    ),
    (
        "extract-output-is-file",
        ["extract", "--model", "smollm2-135m", "--data", "good.csv", "--layers", "3", "--output", "good.jsonl"],
        {},
    ),
    (
        "extract-output-proc",
        ["extract", "--model", "smollm2-135m", "--data", "good.csv", "--layers", "3", "--output", "/proc/liedar-out"],
        {},
    ),
    (
        "extract-output-under-file",
        ["extract", "--model", "smollm2-135m", "--data", "good.csv", "--layers", "3", "--output", "good.jsonl/sub"],
        {},
    ),
    (
        "extract-data-missing",
        ["extract", "--model", "smollm2-135m", "--data", "missing.csv", "--layers", "3", "--output", "out"],
        {},
    ),
    (
        "extract-data-folder",
        ["extract", "--model", "smollm2-135m", "--data", "adir", "--layers", "3", "--output", "out"],
        {},
    ),
    (
        "extract-data-not-utf8",
        ["extract", "--model", "smollm2-135m", "--data", "bad.csv", "--layers", "3", "--output", "out"],
        {"bad.csv": NOT_UTF8},
    ),
    (
        "extract-data-no-label-column",
        ["extract", "--model", "smollm2-135m", "--data", "bad.csv", "--layers", "3", "--output", "out"],
        {"bad.csv": "statement,truth\nA.,1\n"},
    ),
    (
        "extract-data-bom-no-label",
        ["extract", "--model", "smollm2-135m", "--data", "bad.csv", "--layers", "3", "--output", "out"],
        {"bad.csv": b"\xef\xbb\xbfstatement,truth\nA.,1\n"},
    ),
    (
        "extract-data-bad-label",
        ["extract", "--model", "smollm2-135m", "--data", "bad.csv", "--layers", "3", "--output", "out"],
        {"bad.csv": "statement,label\nA.,maybe\n"},
    ),
    (
        "extract-data-header-only",
        ["extract", "--model", "smollm2-135m", "--data", "bad.csv", "--layers", "3", "--output", "out"],
        {"bad.csv": "statement,label\n"},
    ),
    (
        "extract-data-empty-file",
        ["extract", "--model", "smollm2-135m", "--data", "bad.csv", "--layers", "3", "--output", "out"],
        {"bad.csv": ""},
    ),
    (
        "extract-data-short-row",
        ["extract", "--model", "smollm2-135m", "--data", "bad.csv", "--layers", "3", "--output", "out"],
        {"bad.csv": "statement,label\nA.\n"},
    ),
    (
        "extract-data-nul-bytes",
        ["extract", "--model", "smollm2-135m", "--data", "bad.csv", "--layers", "3", "--output", "out"],
        {"bad.csv": b"statement,label\nA.\x00,1\n"},
    ),
    (
        "extract-data-empty-statement",
        ["extract", "--model", "smollm2-135m", "--data", "bad.csv", "--layers", "3", "--output", "out"],
        {"bad.csv": "statement,label\n ,1\n"},
    ),
    (
        "extract-data-jsonl-not-json",
        ["extract", "--model", "smollm2-135m", "--data", "bad.jsonl", "--layers", "3", "--output", "out"],
        {"bad.jsonl": "{nope\n"},
    ),
    (
        "extract-data-jsonl-dialogue-string",
        ["extract", "--model", "smollm2-135m", "--data", "bad.jsonl", "--layers", "3", "--output", "out"],
        {"bad.jsonl": _jsonl({"dialogue": "hello", "label": 1})},
    ),
    (
        "extract-data-jsonl-no-role",
        ["extract", "--model", "smollm2-135m", "--data", "bad.jsonl", "--layers", "3", "--output", "out"],
        {"bad.jsonl": _jsonl({"dialogue": [{"content": "hi"}], "label": 1})},
    ),
    (
        "extract-data-jsonl-null-label",
        ["extract", "--model", "smollm2-135m", "--data", "bad.jsonl", "--layers", "3", "--output", "out"],
        {"bad.jsonl": _jsonl({"statement": "A.", "label": None})},
    ),
    (
        "extract-data-jsonl-list-line",
        ["extract", "--model", "smollm2-135m", "--data", "bad.jsonl", "--layers", "3", "--output", "out"],
        {"bad.jsonl": "[1, 2]\n"},
    ),
    (
        "extract-data-jsonl-nan",
        ["extract", "--model", "smollm2-135m", "--data", "bad.jsonl", "--layers", "3", "--output", "out"],
        {"bad.jsonl": '{"statement": "A.", "label": NaN}\n'},
    ),
    (
        "extract-data-unknown-kind",
        ["extract", "--model", "smollm2-135m", "--data", "notes.txt", "--layers", "3", "--output", "out"],
        {"notes.txt": "hello\n"},
    ),
    (
        "extract-position",
        [
            "extract",
            "--model",
            "smollm2-135m",
            "--data",
            "good.csv",
            "--layers",
            "3",
            "--output",
            "out",
            "--position",
            "middle",
        ],
        {},
    ),
    (
        "extract-backend",
        [
            "extract",
            "--model",
            "smollm2-135m",
            "--data",
            "good.csv",
            "--layers",
            "3",
            "--output",
            "out",
            "--backend",
            "gpu",
        ],
        {},
    ),
    (
        "extract-model-unknown",
        ["extract", "--model", "no-such-model", "--data", "good.csv", "--layers", "3", "--output", "out"],
        {},
    ),
    (
        "extract-model-folder-no-config",
        ["extract", "--model", "adir", "--data", "good.csv", "--layers", "3", "--output", "out"],
        {},
    ),
    (
        "extract-model-pickle-weights",
        ["extract", "--model", "pkl-model", "--data", "good.csv", "--layers", "3", "--output", "out"],
        PICKLE_MODEL,
    ),
    (
        "extract-model-not-gguf",
        ["extract", "--model", "fake.gguf", "--data", "good.csv", "--layers", "3", "--output", "out"],
        {"fake.gguf": b"not a gguf at all"},
    ),
    (
        "extract-model-truncated-gguf",
        ["extract", "--model", "cut.gguf", "--data", "good.csv", "--layers", "3", "--output", "out"],
        {"cut.gguf": b"GGUF\x03\x00\x00\x00"},
    ),
    # ---- probe train / eval / sweep ---------------------------------------------------------
    ("probe-train-layer-negative", ["probe", "train", "--data", "good.csv", "--layer=-1", "--output", "p2.npz"], {}),
    ("probe-train-layer-word", ["probe", "train", "--data", "good.csv", "--layer", "x", "--output", "p2.npz"], {}),
    ("probe-train-layer-float", ["probe", "train", "--data", "good.csv", "--layer", "1.5", "--output", "p2.npz"], {}),
    (
        "probe-train-kind",
        ["probe", "train", "--data", "good.csv", "--layer", "3", "--probe", "svm", "--output", "p2.npz"],
        {},
    ),
    ("probe-train-output-folder", ["probe", "train", "--data", "good.csv", "--layer", "3", "--output", "adir"], {}),
    (
        "probe-train-output-proc",
        ["probe", "train", "--data", "good.csv", "--layer", "3", "--output", "/proc/p.npz"],
        {},
    ),
    (
        "probe-train-output-npz-is-folder",  # --output x saves x.npz, and x.npz is a folder
        ["probe", "train", "--data", "good.jsonl", "--layer", "3", "--output", "x"],
        {"x.npz/keep.txt": "keep"},
    ),
    (
        "probe-train-data-not-utf8",
        ["probe", "train", "--data", "bad.csv", "--layer", "3", "--output", "p2.npz"],
        {"bad.csv": NOT_UTF8},
    ),
    ("probe-train-data-missing", ["probe", "train", "--data", "missing.csv", "--layer", "3", "--output", "p2.npz"], {}),
    (
        "probe-train-seed-negative",
        ["probe", "train", "--data", "good.csv", "--layer", "3", "--seed=-1", "--output", "p2.npz"],
        {},
    ),
    (
        "probe-train-threads-zero",
        ["probe", "train", "--data", "good.csv", "--layer", "3", "--threads", "0", "--output", "p2.npz"],
        {},
    ),
    ("probe-train-no-output", ["probe", "train", "--data", "good.csv", "--layer", "3"], {}),
    ("probe-eval-by", ["probe", "eval", "--data", "good.csv", "--layer", "3", "--by", "colour", "--output", "ev"], {}),
    (
        "probe-eval-output-is-file",
        ["probe", "eval", "--data", "good.csv", "--layer", "3", "--output", "good.jsonl"],
        {},
    ),
    (
        "probe-eval-data-no-label",
        ["probe", "eval", "--data", "bad.csv", "--layer", "3", "--output", "ev"],
        {"bad.csv": "statement\nA.\n"},
    ),
    (
        "probe-eval-data-row-fields",
        ["probe", "eval", "--data", "bad.csv", "--layer", "3", "--output", "ev"],
        {"bad.csv": "statement,label\nA.,1,extra\n"},
    ),
    (
        "probe-sweep-layers-descending",
        ["probe", "sweep", "--data", "good.csv", "--layers", "9-1", "--output", "sw"],
        {},
    ),
    (
        "probe-sweep-output-is-file",
        ["probe", "sweep", "--data", "good.csv", "--layers", "1-2", "--output", "good.csv"],
        {},
    ),
    (
        "probe-sweep-data-empty-jsonl",
        ["probe", "sweep", "--data", "bad.jsonl", "--layers", "1-2", "--output", "sw"],
        {"bad.jsonl": "\n\n"},
    ),
    (
        "probe-sweep-data-statement-number",
        ["probe", "sweep", "--data", "bad.jsonl", "--layers", "1-2", "--output", "sw"],
        {"bad.jsonl": _jsonl({"statement": 5, "label": 1})},
    ),
    # ---- monitor run ----------------------------------------------------------------------
    ("monitor-probe-missing", ["monitor", "run", "--model", "smollm2-135m", "--probe", "missing.npz", "Hi"], {}),
    ("monitor-probe-folder", ["monitor", "run", "--model", "smollm2-135m", "--probe", "adir", "Hi"], {}),
    (
        "monitor-probe-truncated",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _truncated},
    ),
    (
        "monitor-probe-junk",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": b"junk" * 10},
    ),
    ("monitor-probe-csv", ["monitor", "run", "--model", "smollm2-135m", "--probe", "good.csv", "Hi"], {}),
    (
        "monitor-probe-bare-npy",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _bare_array},
    ),
    (
        "monitor-probe-zip-no-arrays",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _zip_without_arrays},
    ),
    (
        "monitor-probe-crc",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _corrupt_member},
    ),
    (
        "monitor-probe-pickle",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _pickled},
    ),
    (
        "monitor-probe-no-metadata",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(lambda a: a.pop("__liedar_probe__"))},
    ),
    (
        "monitor-probe-header-not-json",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(lambda a: a.update(__liedar_probe__=np.array("{oops")))},
    ),
    (
        "monitor-probe-header-list",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(lambda a: a.update(__liedar_probe__=np.array("[1]")))},
    ),
    (
        "monitor-probe-header-no-metadata",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(lambda h: h.pop("metadata")))},
    ),
    (
        "monitor-probe-format-version",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(_set(("format_version",), 99)))},
    ),
    (
        "monitor-probe-unknown-class",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(_set(("class",), "os.system")))},
    ),
    (
        "monitor-probe-unknown-param",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(_set(("params", "evil"), 1)))},
    ),
    (
        "monitor-probe-params-list",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(_set(("params",), [1])))},
    ),
    (
        "monitor-probe-layer-text",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(_set(("metadata", "layer"), "five")))},
    ),
    (
        "monitor-probe-d-model-zero",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(_set(("metadata", "d_model"), 0)))},
    ),
    (
        "monitor-probe-no-fingerprint",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(lambda h: h["metadata"].pop("model_fingerprint")))},
    ),
    (
        "monitor-probe-threshold-text",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(_set(("metadata", "threshold"), "high")))},
    ),
    (
        "monitor-probe-nan-coef",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(lambda a: a["coef_"].__setitem__(0, np.nan))},
    ),
    (
        "monitor-probe-inf-intercept",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(lambda a: a.update(intercept_=np.array([np.inf])))},
    ),
    (
        "monitor-probe-coef-shape",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(lambda a: a.update(coef_=np.zeros(7)))},
    ),
    (
        "monitor-probe-missing-array",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(lambda a: a.pop("direction_"))},
    ),
    (
        "monitor-threshold-nan",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--threshold", "nan", "Hi"],
        {},
    ),
    (
        "monitor-threshold-inf",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--threshold", "inf", "Hi"],
        {},
    ),
    (
        "monitor-threshold-word",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--threshold", "high", "Hi"],
        {},
    ),
    (
        "monitor-threshold-file-list",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--threshold", "t.json", "Hi"],
        {"t.json": "[0.5]\n"},
    ),
    (
        "monitor-threshold-file-nan",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--threshold", "t.json", "Hi"],
        {"t.json": '{"threshold": NaN}\n'},
    ),
    (
        "monitor-threshold-file-not-utf8",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--threshold", "t.json", "Hi"],
        {"t.json": b'{"threshold": "\xff"}'},
    ),
    (
        "monitor-max-tokens-zero",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--max-tokens", "0", "Hi"],
        {},
    ),
    (
        "monitor-temperature-negative",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--temperature=-1", "Hi"],
        {},
    ),
    (
        "monitor-temperature-nan",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--temperature", "nan", "Hi"],
        {},
    ),
    (
        "monitor-jsonl-folder",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--jsonl", "adir", "Hi"],
        {},
    ),
    (
        "monitor-jsonl-is-probe",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--jsonl", "probe.npz", "Hi"],
        {},
    ),
    (
        "monitor-output-proc",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--output", "/proc/m.json", "Hi"],
        {},
    ),
    (
        "monitor-output-is-probe",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--output", "probe.npz", "Hi"],
        {},
    ),
    ("monitor-empty-prompt", ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "  "], {}),
    (
        "monitor-aggregate",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--aggregate", "median", "Hi"],
        {},
    ),
    (
        "monitor-color",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--color", "sometimes", "Hi"],
        {},
    ),
    (
        "monitor-threads-zero",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "probe.npz", "--threads", "0", "Hi"],
        {},
    ),
    # ---- monitor calibrate ----------------------------------------------------------------------
    (
        "calibrate-fpr-zero",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "control.jsonl",
            "--fpr",
            "0",
            "--output",
            "t.json",
        ],
        {},
    ),
    (
        "calibrate-fpr-above-one",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "control.jsonl",
            "--fpr",
            "1.5",
            "--output",
            "t.json",
        ],
        {},
    ),
    (
        "calibrate-fpr-nan",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "control.jsonl",
            "--fpr",
            "nan",
            "--output",
            "t.json",
        ],
        {},
    ),
    (
        "calibrate-held-out-zero",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "control.jsonl",
            "--held-out",
            "0",
            "--output",
            "t.json",
        ],
        {},
    ),
    (
        "calibrate-control-missing",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "missing.jsonl",
            "--output",
            "t.json",
        ],
        {},
    ),
    (
        "calibrate-control-not-utf8",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "c.jsonl",
            "--output",
            "t.json",
        ],
        {"c.jsonl": b'{"prompt": "\xff", "response": "x"}\n'},
    ),
    (
        "calibrate-control-dialogue-string",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "c.jsonl",
            "--output",
            "t.json",
        ],
        {"c.jsonl": _jsonl({"dialogue": "Hi there"})},
    ),
    (
        "calibrate-control-message-no-role",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "c.jsonl",
            "--output",
            "t.json",
        ],
        {"c.jsonl": _jsonl({"dialogue": [{"content": "Hi", "detect": True}]})},
    ),
    (
        "calibrate-control-detect-text",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "c.jsonl",
            "--output",
            "t.json",
        ],
        {"c.jsonl": _jsonl({"dialogue": [{"role": "assistant", "content": "Hi", "detect": "yes"}]})},
    ),
    (
        "calibrate-control-label-number",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "c.jsonl",
            "--output",
            "t.json",
        ],
        {"c.jsonl": _jsonl({**T, "label": 5})},
    ),
    (
        "calibrate-control-only-deceptive",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "c.jsonl",
            "--output",
            "t.json",
        ],
        {"c.jsonl": _jsonl({**T, "label": "deceptive"})},
    ),
    (
        "calibrate-control-empty",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "c.jsonl",
            "--output",
            "t.json",
        ],
        {"c.jsonl": ""},
    ),
    (
        "calibrate-control-no-response",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "c.jsonl",
            "--output",
            "t.json",
        ],
        {"c.jsonl": _jsonl({"prompt": "Q"})},
    ),
    (
        "calibrate-output-is-control",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "control.jsonl",
            "--output",
            "control.jsonl",
        ],
        {},
    ),
    (
        "calibrate-output-is-probe",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "control.jsonl",
            "--output",
            "probe.npz",
        ],
        {},
    ),
    (
        "calibrate-output-folder",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--control",
            "control.jsonl",
            "--output",
            "adir",
        ],
        {},
    ),
    (
        "calibrate-probe-nan-threshold",
        [
            "monitor",
            "calibrate",
            "--model",
            "smollm2-135m",
            "--probe",
            "bad.npz",
            "--control",
            "control.jsonl",
            "--output",
            "t.json",
        ],
        {"bad.npz": _probe_variant(_header(_set(("metadata", "threshold"), float("nan"))))},
    ),
    # ---- monitor audit --------------------------------------------------------------------
    (
        "audit-transcripts-missing",
        ["monitor", "audit", "--model", "smollm2-135m", "--probe", "probe.npz", "--transcripts", "missing.jsonl"],
        {},
    ),
    (
        "audit-transcripts-bad-json",
        ["monitor", "audit", "--model", "smollm2-135m", "--probe", "probe.npz", "--transcripts", "t.jsonl"],
        {"t.jsonl": _jsonl(T, "{bad")},
    ),
    (
        "audit-transcripts-label-maybe",
        ["monitor", "audit", "--model", "smollm2-135m", "--probe", "probe.npz", "--transcripts", "t.jsonl"],
        {"t.jsonl": _jsonl({**T, "label": "maybe"})},
    ),
    (
        "audit-transcripts-prompt-null",
        ["monitor", "audit", "--model", "smollm2-135m", "--probe", "probe.npz", "--transcripts", "t.jsonl"],
        {"t.jsonl": _jsonl({**T, "prompt": None})},
    ),
    (
        "audit-transcripts-nan",
        ["monitor", "audit", "--model", "smollm2-135m", "--probe", "probe.npz", "--transcripts", "t.jsonl"],
        {"t.jsonl": '{"prompt": "Q", "response": "A", "label": NaN}\n'},
    ),
    (
        "audit-transcripts-dialogue-no-detect",
        ["monitor", "audit", "--model", "smollm2-135m", "--probe", "probe.npz", "--transcripts", "t.jsonl"],
        {"t.jsonl": _jsonl({"dialogue": [{"role": "user", "content": "Hi"}]})},
    ),
    (
        "audit-output-is-transcripts",
        [
            "monitor",
            "audit",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--transcripts",
            "transcripts.jsonl",
            "--output",
            "transcripts.jsonl",
        ],
        {},
    ),
    (
        "audit-threshold-nan",
        [
            "monitor",
            "audit",
            "--model",
            "smollm2-135m",
            "--probe",
            "probe.npz",
            "--transcripts",
            "transcripts.jsonl",
            "--threshold",
            "nan",
        ],
        {},
    ),
    # ---- behavioral consistency / menus ---------------------------------------------------------
    ("consistency-items-zero", ["behavioral", "consistency", "--items", "0"], {}),
    ("consistency-items-negative", ["behavioral", "consistency", "--items=-3"], {}),
    ("consistency-shuffles-zero", ["behavioral", "consistency", "--shuffles", "0"], {}),
    ("consistency-paraphrases-negative", ["behavioral", "consistency", "--paraphrases=-1"], {}),
    ("consistency-threshold-nan", ["behavioral", "consistency", "--threshold", "nan"], {}),
    ("consistency-min-effect-nan", ["behavioral", "consistency", "--min-effect", "nan"], {}),
    ("consistency-threads-zero", ["behavioral", "consistency", "--threads", "0"], {}),
    ("consistency-output-folder", ["behavioral", "consistency", "--output", "adir"], {}),
    ("consistency-seed-negative", ["behavioral", "consistency", "--seed=-1"], {}),
    ("menus-mode", ["behavioral", "menus", "--mode", "random"], {}),
    ("menus-samples-zero", ["behavioral", "menus", "--mode", "stochastic", "--samples", "0"], {}),
    ("menus-samples-deterministic", ["behavioral", "menus", "--mode", "deterministic", "--samples", "5"], {}),
    ("menus-temperature-deterministic", ["behavioral", "menus", "--mode", "deterministic", "--temperature", "0.7"], {}),
    ("menus-temperature-negative", ["behavioral", "menus", "--mode", "stochastic", "--temperature=-1"], {}),
    ("menus-alpha-zero", ["behavioral", "menus", "--alpha", "0"], {}),
    ("menus-alpha-above-one", ["behavioral", "menus", "--alpha", "1.5"], {}),
    ("menus-bootstrap-zero", ["behavioral", "menus", "--bootstrap", "0"], {}),
    ("menus-output-folder", ["behavioral", "menus", "--output", "adir"], {}),
    ("menus-threads-negative", ["behavioral", "menus", "--threads=-1"], {}),
    # ---- behavioral gap / noise / sycophancy / negation / honesty ---------------------------------
    ("gap-limit-zero", ["behavioral", "gap", "--limit", "0"], {}),
    ("gap-shots-without-kshot", ["behavioral", "gap", "--protocols", "cloze", "--shots", "3"], {}),
    ("gap-protocols-unknown", ["behavioral", "gap", "--protocols", "telepathy"], {}),
    ("gap-output-proc", ["behavioral", "gap", "--output", "/proc/gap.json"], {}),
    ("gap-threads-zero", ["behavioral", "gap", "--threads", "0"], {}),
    ("gap-interval", ["behavioral", "gap", "--interval", "bayes"], {}),
    ("noise-sigmas-word", ["behavioral", "noise", "--sigmas", "abc"], {}),
    ("noise-sigmas-negative", ["behavioral", "noise", "--sigmas=-0.1,0.01"], {}),
    ("noise-sigmas-nan", ["behavioral", "noise", "--sigmas", "0,nan"], {}),
    ("noise-seeds-zero", ["behavioral", "noise", "--seeds", "0"], {}),
    ("noise-protocol-unknown", ["behavioral", "noise", "--protocol", "telepathy"], {}),
    ("sycophancy-output-folder", ["behavioral", "sycophancy", "--output", "adir"], {}),
    ("sycophancy-limit-negative", ["behavioral", "sycophancy", "--limit=-1"], {}),
    ("negation-threads-zero", ["behavioral", "negation", "--threads", "0"], {}),
    ("negation-output-proc", ["behavioral", "negation", "--output", "/proc/neg.json"], {}),
    ("honesty-evade-margin-negative", ["behavioral", "honesty", "--evade-margin=-1"], {}),
    ("honesty-evade-margin-nan", ["behavioral", "honesty", "--evade-margin", "nan"], {}),
    ("honesty-output-is-file-parent", ["behavioral", "honesty", "--output", "good.csv/h.json"], {}),
    # ---- behavioral episodes / judge ---------------------------------------------------------
    ("episodes-missing", ["behavioral", "episodes", "--episodes", "missing.jsonl"], {}),
    ("episodes-folder", ["behavioral", "episodes", "--episodes", "adir"], {}),
    (
        "episodes-not-utf8",
        ["behavioral", "episodes", "--episodes", "e.jsonl"],
        {"e.jsonl": b'{"episode_id": "\xe9"}\n'},
    ),
    (
        "episodes-null-action",
        ["behavioral", "episodes", "--episodes", "e.jsonl"],
        {"e.jsonl": _jsonl({**EP, "action": None})},
    ),
    (
        "episodes-no-scenario",
        ["behavioral", "episodes", "--episodes", "e.jsonl"],
        {"e.jsonl": _jsonl({"episode_id": "e1", "action": "report-tip"})},
    ),
    (
        "episodes-id-list",
        ["behavioral", "episodes", "--episodes", "e.jsonl"],
        {"e.jsonl": _jsonl({**EP, "episode_id": [1]})},
    ),
    (
        "episodes-action-number",
        ["behavioral", "episodes", "--episodes", "e.jsonl"],
        {"e.jsonl": _jsonl({**EP, "action": 3})},
    ),
    (
        "episodes-unknown-scenario",
        ["behavioral", "episodes", "--episodes", "e.jsonl"],
        {"e.jsonl": _jsonl({**EP, "scenario": "heist"})},
    ),
    (
        "episodes-unknown-action",
        ["behavioral", "episodes", "--episodes", "e.jsonl"],
        {"e.jsonl": _jsonl({**EP, "action": "teleport"})},
    ),
    ("episodes-empty", ["behavioral", "episodes", "--episodes", "e.jsonl"], {"e.jsonl": "\n"}),
    ("episodes-string-line", ["behavioral", "episodes", "--episodes", "e.jsonl"], {"e.jsonl": '"episode"\n'}),
    ("episodes-duplicate-id", ["behavioral", "episodes", "--episodes", "e.jsonl"], {"e.jsonl": _jsonl(EP, EP)}),
    (
        "episodes-output-is-input",
        ["behavioral", "episodes", "--episodes", "episodes.jsonl", "--output", "episodes.jsonl"],
        {},
    ),
    ("episodes-output-folder", ["behavioral", "episodes", "--episodes", "episodes.jsonl", "--output", "adir"], {}),
    ("episodes-interval", ["behavioral", "episodes", "--episodes", "episodes.jsonl", "--interval", "exact"], {}),
    (
        "judge-null-label",
        ["behavioral", "judge", "--judge", "j.jsonl", "--human", "human.jsonl"],
        {"j.jsonl": _jsonl({"id": "a", "label": None}, {"id": "b", "label": "x"})},
    ),
    (
        "judge-missing-label",
        ["behavioral", "judge", "--judge", "j.jsonl", "--human", "human.jsonl"],
        {"j.jsonl": _jsonl({"id": "a"}, {"id": "b", "label": "x"})},
    ),
    (
        "judge-label-number",
        ["behavioral", "judge", "--judge", "j.jsonl", "--human", "human.jsonl"],
        {"j.jsonl": _jsonl({"id": "a", "label": 1}, {"id": "b", "label": 0})},
    ),
    (
        "judge-duplicate-id",
        ["behavioral", "judge", "--judge", "j.jsonl", "--human", "human.jsonl"],
        {"j.jsonl": _jsonl({"id": "a", "label": "x"}, {"id": "a", "label": "y"})},
    ),
    (
        "judge-csv-not-utf8",
        ["behavioral", "judge", "--judge", "judge.jsonl", "--human", "h.csv"],
        {"h.csv": b"id,label\na,h\xe9\n"},
    ),
    (
        "judge-csv-empty-label",
        ["behavioral", "judge", "--judge", "judge.jsonl", "--human", "h.csv"],
        {"h.csv": "id,label\na,\nb,honest\n"},
    ),
    (
        "judge-csv-bom-no-id",
        ["behavioral", "judge", "--judge", "judge.jsonl", "--human", "h.csv"],
        {"h.csv": b"\xef\xbb\xbfitem,label\na,honest\n"},
    ),
    (
        "judge-ids-do-not-pair",
        ["behavioral", "judge", "--judge", "judge.jsonl", "--human", "h.jsonl"],
        {"h.jsonl": _jsonl({"id": "z", "label": "honest"})},
    ),
    (
        "judge-label-not-allowed",
        ["behavioral", "judge", "--judge", "judge.jsonl", "--human", "human.jsonl", "--labels", "honest"],
        {},
    ),
    (
        "judge-output-is-input",
        ["behavioral", "judge", "--judge", "judge.jsonl", "--human", "human.jsonl", "--output", "judge.jsonl"],
        {},
    ),
    ("judge-missing-file", ["behavioral", "judge", "--judge", "judge.jsonl", "--human", "missing.jsonl"], {}),
    # ---- report --------------------------------------------------------------------------
    ("report-from-missing", ["report", "--from", "missing", "--output", "rep"], {}),
    ("report-from-file", ["report", "--from", "good.csv", "--output", "rep"], {}),
    ("report-from-empty-folder", ["report", "--from", "adir", "--output", "rep"], {}),
    ("report-run-json-list", ["report", "--from", "results", "--output", "rep"], {RUN_JSON: "[1, 2]\n"}),
    (
        "report-run-json-not-utf8",
        ["report", "--from", "results", "--output", "rep"],
        {RUN_JSON: b'{"schema_version": "\xff"}'},
    ),
    ("report-run-json-bad", ["report", "--from", "results", "--output", "rep"], {RUN_JSON: "{"}),
    (
        "report-run-json-steps-string",
        ["report", "--from", "results", "--output", "rep"],
        {RUN_JSON: '{"schema_version": "2.1", "steps": "gap"}'},
    ),
    (
        "report-run-json-schema",
        ["report", "--from", "results", "--output", "rep"],
        {RUN_JSON: '{"schema_version": "9.0", "steps": []}'},
    ),
    ("report-step-damaged", ["report", "--from", "results", "--output", "rep"], {STEP_JSON: '{"name": '}),
    (
        "report-step-status",
        ["report", "--from", "results", "--output", "rep"],
        {STEP_JSON: lambda d: (d / STEP_JSON).read_text().replace('"not_run"', '"great"').encode()},
    ),
    ("report-step-list", ["report", "--from", "results", "--output", "rep"], {STEP_JSON: "[]"}),
    (
        "report-step-section-list",
        ["report", "--from", "results", "--output", "rep"],
        {STEP_JSON: lambda d: (d / STEP_JSON).read_text().replace('"section": {', '"section": [], "x": {').encode()},
    ),
    ("report-output-is-file", ["report", "--from", "results", "--output", "good.csv"], {}),
    ("report-output-proc", ["report", "--from", "results", "--output", "/proc/rep"], {}),
    # ---- demo ------------------------------------------------------------------------------
    ("demo-threads-zero", ["demo", "--threads", "0", "--output", "demo-out"], {}),
    ("demo-threads-negative", ["demo", "--threads=-1", "--output", "demo-out"], {}),
    ("demo-seed-negative", ["demo", "--seed=-1", "--output", "demo-out"], {}),
    ("demo-output-is-file", ["demo", "--output", "good.csv"], {}),
    ("demo-output-proc", ["demo", "--output", "/proc/demo"], {}),
    ("demo-datasets-missing", ["demo", "--datasets", "missing-folder", "--output", "demo-out"], {}),
    ("demo-model-unknown", ["demo", "--model", "no-such-model", "--output", "demo-out"], {}),
    ("demo-backend", ["demo", "--backend", "tpu", "--output", "demo-out"], {}),
    ("demo-unknown-flag", ["demo", "--fast", "--output", "demo-out"], {}),
    # ---- validate / organism ------------------------------------------------------------
    ("validate-threads-zero", ["validate", "--threads", "0", "--output", "v"], {}),
    ("validate-seed-negative", ["validate", "--seed=-1", "--output", "v"], {}),
    ("validate-output-is-file", ["validate", "--output", "good.csv"], {}),
    ("validate-output-proc", ["validate", "--output", "/proc/v"], {}),
    ("validate-organisms-empty", ["validate", "--organisms", ",", "--output", "v"], {}),
    ("validate-organisms-unknown", ["validate", "--organisms", "no-such-organism", "--output", "v"], {}),
    ("validate-backend", ["validate", "--backend", "llamacpp", "--output", "v"], {}),
    ("validate-build-and-no-build", ["validate", "--build", "x", "--no-build", "--output", "v"], {}),
    ("organism-no-action", ["organism"], {}),
    ("organism-build-unknown", ["organism", "build", "no-such-organism"], {}),
    ("organism-build-threads-zero", ["organism", "build", "--all", "--threads", "0"], {}),
    ("organism-describe-unknown", ["organism", "describe", "no-such-organism"], {}),
    ("organism-describe-output-folder", ["organism", "describe", "no-such-organism", "--output", "adir"], {}),
    ("organism-list-threads-negative", ["organism", "list", "--threads=-1"], {}),
    # ---- a served model where hidden states are needed (refused while parsing) ----------------
    *[
        (f"served-model-{'-'.join(argv[:2]) if argv[0] in ('probe', 'monitor') else argv[0]}", argv, {})
        for argv in (
            ["extract", "--model", "openai:x", "--data", "good.csv", "--layers", "6", "--output", "out"],
            ["probe", "train", "--model", "openai:x", "--data", "good.csv", "--output", "p.npz"],
            ["probe", "eval", "--model", "openai:x", "--data", "good.csv", "--output", "out"],
            ["probe", "sweep", "--model", "openai:x", "--data", "good.csv", "--output", "out"],
            ["monitor", "run", "--model", "openai:x", "--probe", "probe.npz", "Hi"],
            [
                "monitor",
                "calibrate",
                "--model",
                "openai:x",
                "--probe",
                "probe.npz",
                "--control",
                "control.jsonl",
                "--output",
                "t.json",
            ],
            ["monitor", "audit", "--model", "openai:x", "--probe", "probe.npz", "--transcripts", "transcripts.jsonl"],
            ["demo", "--model", "openai:x", "--output", "rep"],
        )
    ],  # fmt: skip
    # ---- options that would be silently ignored ----------------------------------------------
    ("demo-quick-with-datasets", ["demo", "--quick", "--datasets", "adir", "--output", "rep"], {}),
    (
        "behavioral-base-url-with-local-model",
        ["behavioral", "menus", "--model", "smollm2-135m", "--base-url", "http://127.0.0.1:9/v1"],
        {},
    ),
    ("report-same-run-twice", ["report", "--from", "results", "--from", "./results/", "--output", "rep"], {}),
    ("from-inspect-same-log-twice", ["behavioral", "from-inspect", "good.jsonl", "good.jsonl", "--output", "o"], {}),
    (
        "from-inspect-log-copy",
        ["behavioral", "from-inspect", "good.jsonl", "copy.jsonl", "--output", "o"],
        {"copy.jsonl": lambda folder: (folder / "good.jsonl").read_bytes()},
    ),
    (
        "monitor-probe-position-middle",
        ["monitor", "run", "--model", "smollm2-135m", "--probe", "bad.npz", "Hi"],
        {"bad.npz": _probe_variant(_header(_set(("metadata", "position"), "middle")))},
    ),
    ("monitor-probe-is-text", ["monitor", "run", "--model", "smollm2-135m", "--probe", "good.csv", "Hi"], {}),
    (
        "monitor-probe-for-another-builtin",
        ["monitor", "run", "--model", "gemma3-270m", "--probe", "probe.npz", "Hi"],
        {},
    ),
    # ---- the top level -----------------------------------------------------------------------
    ("unknown-command", ["frobnicate"], {}),
    ("behavioral-unknown-instrument", ["behavioral", "astrology"], {}),
    ("behavioral-no-instrument", ["behavioral"], {}),
    ("no-command", [], {}),
]

# Cases that need CLI wiring not landed yet: strict xfail, so each one fails loudly the moment
# it starts to pass and the mark must be removed. Every case of the commands covered by
# "CLI: shared arguments" (b649da5) passes; these are in commands added after it.
CLI_PENDING: dict[str, str] = {}


def _params():
    for case_id, argv, extra in CASES:
        marks = []
        if case_id in CLI_PENDING:
            marks.append(pytest.mark.xfail(reason=CLI_PENDING[case_id], strict=True))
        yield pytest.param(argv, extra, id=case_id, marks=marks)


def _materialise(folder: Path, extra: Extra) -> None:
    for name, content in extra.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content(folder) if callable(content) else content
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


def test_catalogue_is_big_and_spread():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    assert len(ids) >= 100
    commands = {
        " ".join(argv[:2]) if argv and argv[0] in ("behavioral", "probe", "monitor") else (argv[0] if argv else "")
        for _, argv, _ in CASES
    }
    for needed in (
        "extract", "probe train", "probe eval", "probe sweep", "monitor run", "monitor calibrate", "monitor audit",
        "behavioral consistency", "behavioral menus", "behavioral gap", "behavioral noise", "behavioral sycophancy",
        "behavioral negation", "behavioral honesty", "behavioral episodes", "behavioral judge", "report", "demo",
    ):  # fmt: skip
        assert needed in commands, f"no bad-input case for `liedar {needed}`"


@pytest.mark.parametrize(("argv", "extra"), list(_params()))
def test_bad_input_is_refused(argv, extra, workdir, no_model, capsys):
    from liedar.cli import main

    _materialise(workdir, extra)
    before = snapshot(workdir)
    try:
        rc = main(argv)
    except ModelLoaded:
        pytest.fail("the model was loaded before the bad input was refused")
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2, f"exit {rc}, stderr: {err[-500:]!r}"
    assert "Traceback" not in err
    assert len(lines) == 1, f"stderr must be one line, got {len(lines)}: {err[-800:]!r}"
    assert lines[0].startswith("liedar"), lines[0]
    assert snapshot(workdir) == before, "an input changed, or an output/temporary file was left"


SUBPROCESS_CASES = [
    "monitor-probe-nan-coef",
    "report-run-json-list",
    "extract-model-pickle-weights",
    "episodes-output-is-input",
]


@pytest.mark.parametrize("case_id", SUBPROCESS_CASES)
def test_through_a_subprocess(case_id, workdir):
    """The same contract through a real interpreter: exit 2, one line, no traceback."""
    argv, extra = next((a, e) for i, a, e in CASES if i == case_id)
    if case_id in CLI_PENDING:
        pytest.xfail(CLI_PENDING[case_id])
    _materialise(workdir, extra)
    before = snapshot(workdir)
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from liedar.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr[-800:]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-800:]
    assert snapshot(workdir) == before
