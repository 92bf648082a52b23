"""`liedar demo --quick` end to end on the real default model (integration; CI runs it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from liedar.report.schema import report_schema

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.integration
def test_demo_quick_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    try:
        from liedar.models.registry import resolve

        resolve("smollm2-135m")
    except Exception as exc:  # the model package is not installed here
        pytest.skip(f"smollm2-135m unavailable: {exc}")
    out = tmp_path / "liedar-report"
    cmd = [sys.executable, "-m", "liedar.cli", "demo", "--quick", "--output", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"report: {out / 'index.html'}" in proc.stdout
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, report_schema())
    (model,) = data["models"]
    steps = {s["name"]: s for s in model["steps"]}
    failed = {k: s["reason"] for k, s in steps.items() if s["status"] == "failed"}
    assert not failed, failed
    for skipped in ("noise", "observer", "contamination", "validation"):  # --quick skips them, visibly
        assert steps[skipped]["status"] == "not_run" and "--quick" in steps[skipped]["reason"], skipped
    assert steps["probes"]["status"] == "ok" and model["transfer"] and model["layer_sweep"]
    assert model["ceilings"] and model["measures"]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in html

    # resume: a second run reuses every finished step
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    n_ok = sum(s["status"] == "ok" for s in steps.values())
    assert f"({n_ok} step(s) from cache" in again.stdout
