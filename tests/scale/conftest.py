"""One local 2-CPU Ray cluster (no dashboard; see models.distributed.ray_session on binding) for every Ray test,
started on first use and stopped by the test run that started it; one BLAS thread per test."""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(scope="session")
def cluster():
    pytest.importorskip("ray")
    from liedar.core._util.netns import loopback_only
    from liedar.models.distributed import ray_session

    if not loopback_only():
        pytest.skip(
            "a local Ray cluster listens on every interface (Ray 2.60): these tests run only in a private "
            "network namespace (make test runs the suite through scripts/isolated.sh)"
        )

    with ray_session(num_cpus=2) as ray:
        yield ray
    assert not ray.is_initialized(), "the test run that started the cluster must stop it"


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(1):
        yield
