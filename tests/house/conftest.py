"""The house tests share `package_dirs` (the package-dir map read from pyproject.toml); with
pytest's importlib import mode a sibling module is importable only with its folder on the path."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
