"""Fixtures for tests/probes: one BLAS thread per test.

Why: on a shared 2-core machine, multi-threaded BLAS inside small logistic fits thrashes
(a 1000x576 fit took 48 s with default threads and 0.05 s with one)."""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(1):
        yield
