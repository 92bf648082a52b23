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


# --- models helper: a tiny random-weight model for fast unit tests -------------------------
import sys  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # so tests can `from tiny_model import ...`

from workers import THREADS, UNDER_XDIST  # noqa: E402

if UNDER_XDIST:  # one thread per worker, for the models and for every CLI a test starts
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A Hugging Face folder holding a random 3-layer Llama (d_model 48) and a fast BPE
    tokenizer with a ChatML-style chat template; built offline once per test run."""
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


def _load_or_skip(name: str, backend: str):
    from liedar import models
    from liedar.core.errors import ModelUnavailableError

    try:
        return models.load(name, backend=backend, n_threads=THREADS)
    except ModelUnavailableError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def smollm2_llamacpp():
    """The shipped SmolLM2-135M-Instruct through llama.cpp, loaded once per test run."""
    return _load_or_skip("smollm2-135m", "llamacpp")


@pytest.fixture(scope="session")
def smollm2_transformers():
    """The same GGUF through transformers (dequantized copy in the liedar cache), loaded once."""
    return _load_or_skip("smollm2-135m", "transformers")
