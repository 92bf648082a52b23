"""Fixtures for the hardening suite: valid input files to damage, an isolated cache, and a
guard that fails a test the moment anything tries to load a model.

Why a guard rather than a stopwatch: "refused before the model loads" is the property; a
timing bound would pass on a fast machine and fail on a loaded one. The guard raises a
`BaseException` subclass so no ``except Exception`` in the code under test can swallow it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for `import hardening_support`

from hardening_support import GOOD_TEXT, ModelLoaded, probe_bytes, write_results  # noqa: E402


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch) -> Path:
    """Every hardening test gets its own empty cache root (never the user's)."""
    root = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("LIEDAR_CACHE", str(root))
    return root


@pytest.fixture
def no_model(monkeypatch):
    """Fail the test if any backend is constructed or a GGUF dequantized."""
    from liedar.models import hf, llamacpp, registry, served

    def refuse(*args, **kwargs):
        raise ModelLoaded("a model was loaded although the input was bad")

    monkeypatch.setattr(hf.TransformersBackend, "__init__", refuse)
    monkeypatch.setattr(llamacpp.LlamaCppBackend, "__init__", refuse)
    monkeypatch.setattr(registry, "dequantized_copy", refuse)
    monkeypatch.setattr(registry, "_gemma3_gguf", refuse)
    monkeypatch.setattr(served.ServedBackend, "__init__", refuse)  # nor is a server asked
    return refuse


@pytest.fixture(scope="session")
def good_probe(tmp_path_factory) -> bytes:
    return probe_bytes(tmp_path_factory.mktemp("probe"))


@pytest.fixture
def workdir(tmp_path, good_probe, monkeypatch) -> Path:
    """A folder holding one valid file of every input format, plus an existing folder."""
    for name, text in GOOD_TEXT.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "probe.npz").write_bytes(good_probe)
    (tmp_path / "adir").mkdir()
    (tmp_path / "adir" / "keep.txt").write_text("keep\n")
    write_results(tmp_path / "results")
    monkeypatch.chdir(tmp_path)
    return tmp_path
