"""How many threads a test's model may use: one per xdist worker, two without workers.

Why: `make test` runs the suite on two pytest-xdist workers, one per core of the machines it
is made for. A worker whose model ran on two threads would share each core with the other
worker's threads, and torch's spinning threads slow each other down far more than they gain.
"""

from __future__ import annotations

import os

UNDER_XDIST = bool(os.environ.get("PYTEST_XDIST_WORKER"))
THREADS = 1 if UNDER_XDIST else 2
