"""The repository's package folders, read from pyproject.toml's ``package-dir``: the one map
of which folder installs as which package, so the house tests walk exactly what installs."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIRS: dict[str, Path] = {
    package: ROOT / folder
    for package, folder in tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-dir"
    ].items()
}
