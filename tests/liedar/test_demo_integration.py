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
# top-level modules of the serve, inspect and ray extras and of the test tools
NOT_INSTALLED_BY_MAKE_DEMO = (
    "openai",
    "fastapi",
    "uvicorn",
    "inspect_ai",
    "ray",
    "pyarrow",
    "pytest",
    "hypothesis",
    "statsmodels",
)


@pytest.mark.integration
def test_demo_quick_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    try:
        from liedar.models.registry import resolve

        resolve("smollm2-135m")
    except Exception as exc:  # the model package is not installed here
        pytest.skip(f"smollm2-135m unavailable: {exc}")
    out = tmp_path / "liedar-report"
    # make demo's set-up installs only the local, plots and organisms extras (scripts/bootstrap.sh):
    # the run fails here if a step imports a package of the other extras or of the test tools
    # the path finder made blind to them, as an environment without them is (find_spec returns None,
    # so libraries that probe for an optional package see it missing instead of failing to import it)
    blocked = (
        "import sys, importlib.machinery as m\n"
        "class WithoutThem(m.PathFinder):\n"
        "    @classmethod\n"
        "    def find_spec(cls, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {NOT_INSTALLED_BY_MAKE_DEMO!r}:\n"
        "            return None\n"
        "        return m.PathFinder.find_spec(name, path, target)\n"
        "sys.meta_path[:] = [WithoutThem if f is m.PathFinder else f for f in sys.meta_path]\n"
    )
    prelude = f"{blocked}from liedar.cli import main\nsys.exit(main())"
    cmd = [sys.executable, "-c", prelude, "demo", "--quick", "--output", str(out)]
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
