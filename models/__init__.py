"""Offline model backends: text in, hidden states / option log-probs / tokens out.

Import-light on purpose: nothing here imports torch or llama_cpp until a backend is
loaded, so `probes` and the CLI can import `models` cheaply.

    >>> import models
    >>> lm = models.load("smollm2-135m", backend="llamacpp")   # or "transformers"
    >>> lm.hidden_states(["Paris is in France."], layers=[6, 12]).shape
    (1, 2, 576)
"""

from __future__ import annotations

from typing import Any


def load(name_or_path: str, backend: str = "transformers", n_threads: "int | None" = None, **kwargs: Any):
    """Load a built-in model name, a local .gguf file or a Hugging Face folder as a Backend.

    See models.registry.load for the options.
    """
    from liedar.models.registry import load as _load

    return _load(name_or_path, backend=backend, n_threads=n_threads, **kwargs)


__all__ = ["load"]
