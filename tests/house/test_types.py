"""mypy (configured in pyproject.toml) is clean on the library as it installs: one name, ``liedar``.

The tree keeps core/, models/, probes/ and behavioral/ beside liedar/ and installs them as
liedar.core, liedar.models, liedar.probes and liedar.behavioral; an editable install maps them
with an import hook that mypy cannot follow. So the check lays the installed shape out as symlinks
in the system temp dir (with mypy's cache beside it, never in the tree) and checks
``-p liedar`` there: every import between the packages is then resolved and checked.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from package_dirs import PACKAGE_DIRS, ROOT

# the sub-packages that package-dir maps from folders of their own (core, models, probes, behavioral)
SUBPACKAGES = {package.split(".", 1)[1]: folder for package, folder in PACKAGE_DIRS.items() if package != "liedar"}


def _installed_shape(where: Path) -> Path:
    """``where/src/liedar``: liedar/'s entries plus the top-level sub-package folders, all symlinks."""
    pkg = where / "src" / "liedar"
    pkg.mkdir(parents=True, exist_ok=True)
    wanted = {p.name: p for p in (ROOT / "liedar").iterdir() if p.name != "__pycache__"}
    wanted.update(SUBPACKAGES)
    for old in pkg.iterdir():
        if old.name not in wanted or old.resolve() != wanted[old.name].resolve():
            old.unlink()
    for name, target in wanted.items():
        link = pkg / name
        if not link.is_symlink():
            link.symlink_to(target)
    return pkg.parent


def test_mypy_is_clean_on_the_library() -> None:
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is not installed: it is in the test extra (pip install -e '.[test]')")
    key = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    where = Path(tempfile.gettempdir()) / f"liedar-mypy-{key}"
    src = _installed_shape(where)
    cmd = [sys.executable, "-m", "mypy", "-p", "liedar", "--config-file", str(ROOT / "pyproject.toml")]
    cmd += ["--cache-dir", str(where / "cache"), "--no-error-summary", "--hide-error-context"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, "mypy found type errors:\n" + done.stdout + done.stderr
