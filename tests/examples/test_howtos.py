"""The how-to pages' commands are the scripts in examples/, and those scripts run.

Every ``liedar ...`` line of a ```bash block in docs/howto/ must appear in an example script
(``test_howto_commands_are_example_scripts``); the scripts the README's quick starts do not
already cover run here on smollm2-135m at small sizes, so a how-to whose command changes
fails the suite.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the quick starts' helpers: one way to run a script
from test_examples import EXAMPLES, ROOT, _joined, _run  # noqa: E402

HOWTO = ROOT / "docs" / "howto"


def _howto_commands() -> dict[str, list[str]]:
    out = {}
    for page in sorted(HOWTO.glob("*.md")):
        blocks = re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
        lines = [ln.strip() for b in blocks for ln in _joined(b).splitlines()]
        out[page.name] = [ln for ln in lines if ln.startswith("liedar ")]
    return out


def test_howto_commands_are_example_scripts():
    commands = _howto_commands()
    assert len(commands) == 7 and all(commands.values()), commands
    scripts = _joined("\n".join(p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.sh"))))
    scripts = scripts.replace('"http://127.0.0.1:$PORT/v1"', "http://127.0.0.1:8765/v1")
    missing = [f"{page}: {c}" for page, cs in commands.items() for c in cs if c not in scripts]
    assert not missing, f"how-to lines not in examples/: {missing}"


@pytest.mark.integration
def test_howto_audit(tmp_path: Path):
    _run("05_audit_a_model.sh", tmp_path, AUDIT_ARGS="--quick --workers 1")
    record = json.loads((tmp_path / "audit" / "audit.json").read_text(encoding="utf-8"))
    assert [m["model"] for m in record["models"]] == ["smollm2-135m:sycophant"]
    assert all(m["verdict"] for m in record["models"]) and (tmp_path / "audit" / "page" / "index.html").is_file()


@pytest.mark.integration
@pytest.mark.timeout(1800)  # the sycophant's build: about 90 s of training and 90 s of measuring on one thread
def test_howto_build_and_verify_an_organism(tmp_path: Path):
    out = _run("06_build_an_organism.sh", tmp_path, VERIFY_ARGS="--limit 16")
    assert re.search(r"smollm2-135m:sycophant\s+verified", out), out[-2000:]
    assert json.loads((tmp_path / "sycophant.json").read_text(encoding="utf-8"))


@pytest.mark.integration
def test_howto_ray(tmp_path: Path):
    pytest.importorskip("ray", reason="ray (the 'ray' extra) is not installed")
    from liedar.core._util.netns import loopback_only

    if not loopback_only():
        pytest.skip("a local Ray cluster needs a loopback-only network namespace (make test runs in one)")
    _run("07_ray.sh", tmp_path)
    assert (tmp_path / "sweep" / "sweep.json").is_file()


@pytest.mark.integration
def test_howto_bring_your_own_model(tmp_path: Path):
    _run("08_bring_your_own_model.sh", tmp_path)
    assert (tmp_path / "my-probe.npz").is_file() and (tmp_path / "my-hf-model" / "config.json").is_file()
    assert json.loads((tmp_path / "my-gap").read_text(encoding="utf-8"))["instrument"] == "gap"
