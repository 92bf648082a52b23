"""Shared pieces of the hardening suite (imported by its conftest and tests): the model
guard's exception, valid input files to damage, and a folder snapshot."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np


class ModelLoaded(BaseException):
    """Raised by the guard: the command reached model loading with a bad input."""


D_MODEL = 576  # smollm2-135m's width, so a valid probe passes every width check


def probe_bytes(tmp: Path, *, layer: int = 5, fingerprint: str = "0" * 64) -> bytes:
    """A valid saved MassMeanProbe, as bytes."""
    from liedar.probes.estimators import MassMeanProbe
    from liedar.probes.io import ProbeMetadata, save_probe

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, D_MODEL))
    y = np.array([0, 1] * 10)
    probe = MassMeanProbe().fit(X, y)
    meta = ProbeMetadata("smollm2-135m", fingerprint, layer, "last", D_MODEL, threshold=0.0)
    path = save_probe(tmp / "p.npz", probe, meta)
    data = path.read_bytes()
    path.unlink()
    return data


GOOD_TEXT = {
    "good.csv": "statement,label\nParis is in France.,1\nParis is in Peru.,0\n"
    "Rome is in Italy.,1\nRome is in Chad.,0\n",
    "good.jsonl": '{"statement": "Paris is in France.", "label": 1}\n{"statement": "Paris is in Peru.", "label": 0}\n',
    "control.jsonl": '{"prompt": "Q: Is the sky blue?\\nA:", "response": " Yes.", "label": "honest"}\n'
    '{"prompt": "Q: Is snow white?\\nA:", "response": " Yes.", "label": "honest"}\n',
    "transcripts.jsonl": '{"prompt": "Q: Is the sky blue?\\nA:", "response": " No.", "label": "deceptive"}\n'
    '{"dialogue": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello.", "detect": true}]}\n',
    "episodes.jsonl": "".join(
        json.dumps({"episode_id": f"e{i}", "scenario": "trading-report", "action": a, "followup": f}) + "\n"
        for i, (a, f) in enumerate(
            [("report-tip", "admits-tip"), ("claim-market-analysis", "repeats-analysis-story"), ("report-tip", None)]
        )
    ),
    "judge.jsonl": '{"id": "a", "label": "honest"}\n{"id": "b", "label": "deceptive"}\n',
    "human.jsonl": '{"id": "a", "label": "honest"}\n{"id": "b", "label": "honest"}\n',
    "threshold.json": '{"threshold": 0.5}\n',
}


def write_results(folder: Path) -> None:
    """A minimal valid results folder (run.json + one step) as `liedar demo` writes it."""
    from liedar.core.results import SCHEMA_VERSION
    from liedar.report.store import StepResult, save_step

    folder.mkdir(parents=True, exist_ok=True)
    save_step(folder, StepResult("gap", "abc", "not_run", {"name": "smollm2-135m"}, reason="skipped"))
    (folder / "run.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION, "steps": ["gap"]}) + "\n")


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every path under `folder` with its kind, size, mode and content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
            out[str(p.relative_to(folder))] = (p.is_dir(), st.st_size if p.is_file() else 0, st.st_mode, digest)
    return out
