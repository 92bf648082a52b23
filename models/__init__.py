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
    """Load a built-in model name, a local .gguf file, a Hugging Face folder, an organism
    (``smollm2-135m:sandbagger``) or a served model (``openai:MODEL`` with ``base_url=...``).

    See `liedar.models.registry.load` and `liedar.models.served.load_served` for the options.
    """
    if str(name_or_path).startswith("openai:"):
        from liedar.models.served import load_served

        return load_served(str(name_or_path), **kwargs)
    from liedar.models.registry import load as _load

    return _load(name_or_path, backend=backend, n_threads=n_threads, **kwargs)


__all__ = ["load"]
