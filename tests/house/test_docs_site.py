"""The documentation site (docs/ and the API reference from the docstrings) builds offline
with every warning an error, and its source mirror of the installed layout is complete."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from package_dirs import PACKAGE_DIRS, ROOT


def test_api_mirror_has_every_module_of_the_installed_layout():
    # .api/liedar/ shows the code as it installs (liedar.probes from probes/, ...), as symlinks
    mirror = ROOT / ".api" / "liedar"
    expected = {p.name for p in (ROOT / "liedar").iterdir() if p.name != "__pycache__"}
    expected |= {package.split(".", 1)[1] for package in PACKAGE_DIRS if package != "liedar"}
    assert {p.name for p in mirror.iterdir()} == expected
    for p in mirror.iterdir():
        assert p.is_symlink() and p.exists(), p


def test_mkdocs_build_strict(tmp_path: Path):
    pytest.importorskip("mkdocs", reason="mkdocs (the 'test' extra) is not installed")
    pytest.importorskip("mkdocstrings_handlers.python", reason="mkdocstrings[python] (the 'test' extra) is missing")
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for page in ("index.html", "results/index.html", "api/probes/index.html", "api/stats/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    stats = (tmp_path / "site" / "api" / "stats" / "index.html").read_text(encoding="utf-8")
    assert "clopper_pearson" in stats and "Estimate" in stats
