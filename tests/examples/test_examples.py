"""The README's quick starts, run as the scripts in examples/ on smollm2-135m.

Every ``liedar ...`` line of the README's quick starts must appear in an example script
(``test_readme_quick_starts_are_the_example_scripts``), and each script runs here on the real
model with its small sizes, so the README cannot drift from the code.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent


def _joined(text: str) -> str:
    """Shell text with backslash-continued lines joined and runs of spaces collapsed."""
    return re.sub(r"[ \t]+", " ", text.replace("\\\n", " "))


def _readme_quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick starts", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    lines = [ln.strip() for b in blocks for ln in _joined(b).splitlines()]
    return [ln for ln in lines if ln.startswith("liedar ")]


def test_readme_quick_starts_are_the_example_scripts():
    commands = _readme_quick_start_commands()
    assert len(commands) >= 4
    scripts = _joined("\n".join(p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.sh"))))
    scripts = scripts.replace('"http://127.0.0.1:$PORT/v1"', "http://127.0.0.1:8765/v1")
    missing = [c for c in commands if c not in scripts]
    assert not missing, f"README quick-start lines not in examples/: {missing}"


def test_readme_python_blocks_run_and_print_what_they_say():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks
    for block in blocks:
        proc = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        prints = [ln for ln in block.splitlines() if ln.startswith("print(")]
        for line, printed in zip(prints, proc.stdout.splitlines()):
            shown = line.split("#", 1)[1].strip().rstrip(".").strip() if "#" in line else ""
            assert printed.startswith(shown), (line, printed)


def _run(script: str, cwd: Path, *args: str, timeout: int = 1800, **extra_env: str) -> str:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", OMP_NUM_THREADS="1", **extra_env)
    proc = subprocess.run(
        ["bash", str(EXAMPLES / script), str(cwd), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if proc.returncode != 0 and "not installed" in proc.stderr:
        pytest.skip(proc.stderr.strip().splitlines()[-1])
    assert proc.returncode == 0, f"{script} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("examples")


@pytest.mark.integration
def test_quick_start_1_probe_on_a_csv(workdir: Path):
    out = _run("01_probe_on_your_csv.sh", workdir)
    assert "10 true/false minimal pairs put in one fold each, 10 CV groups from 20 rows" in out
    assert re.search(r"group-CV AUROC [0-9.]+ \[", out)
    assert (workdir / "probe.npz").is_file() and (workdir / "transfer" / "transfer.json").is_file()


@pytest.mark.integration
def test_quick_start_2_monitor(workdir: Path):
    if not (workdir / "probe.npz").is_file():
        pytest.skip("quick start 1 did not leave a probe")
    _run("02_monitor_a_generation.sh", workdir)
    rows = (workdir / "tokens.jsonl").read_text(encoding="utf-8").splitlines()
    assert rows, "the monitor wrote no per-token record"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.integration
def test_quick_start_3_served_model(tmp_path: Path):
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] (the 'serve' extra) is not installed")
    port = _free_port()
    _run("03_served_model.sh", tmp_path, str(port))
    result = json.loads((tmp_path / "consistency.json").read_text(encoding="utf-8"))
    assert result["instrument"] == "consistency" and result["backend"] == "served"
    with socket.socket() as s:  # the script stopped the server it started
        assert s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.integration
@pytest.mark.timeout(3000)  # two models through every detector at --quick sizes: ~8 min idle, ~25 min at load 5
def test_quick_start_4_validate_on_organisms(tmp_path: Path):
    # small: the sycophant alone (64 held-out facts, yes/no scoring), validated with --quick
    out = _run(
        "04_validate_on_organisms.sh",
        tmp_path,
        timeout=2900,
        ORGANISMS="sycophant",
        VALIDATE_ARGS="--quick --organisms sycophant",
    )
    assert "smollm2-135m:sycophant" in out and "verified" in out, out[-2000:]
    matrix = (tmp_path / "val" / "validation-matrix.json").read_text(encoding="utf-8")
    assert "smollm2-135m:sycophant" in matrix
