"""The behavioural tests' helpers (``cli_harness``, the scripted fakes) import by module name,
whichever test file runs first or alone."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
