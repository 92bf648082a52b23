"""Fixtures for the organism tests: a private cache root and a tiny trainable recipe."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # so tests can `from tiny_recipe import ...`


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("LIEDAR_CACHE", str(root))
    return root


@pytest.fixture(scope="session")
def tiny_backend(tiny_model_dir):
    from liedar.models.hf import TransformersBackend

    return TransformersBackend(tiny_model_dir, n_threads=1)
