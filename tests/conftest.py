"""Shared test fixtures.

Unit tests need no real model. Integration tests (marker ``integration``) load a real
shipped model; they skip with a reason when the model package is not installed.
Tests that need ../shared/datasets skip with a reason when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SHARED_DATASETS = Path(
    os.environ.get("LIEDAR_SHARED_DATASETS", Path(__file__).resolve().parents[1].parent / "shared" / "datasets")
)


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """Path to ../shared/datasets (real external statement sets); skips when absent."""
    if not (SHARED_DATASETS / "truth_is_universal").is_dir():
        pytest.skip(f"external datasets not found at {SHARED_DATASETS} (set LIEDAR_SHARED_DATASETS)")
    return SHARED_DATASETS
