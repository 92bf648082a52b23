"""Offline model backends: text in, hidden states / option log-probs / tokens out.

Import-light on purpose: nothing here imports torch or llama_cpp until a backend is
loaded, so `probes` and the CLI can import `models` cheaply.

    >>> from liedar import models
    >>> lm = models.load("smollm2-135m", backend="llamacpp")   # or "transformers"
    >>> lm.hidden_states(["Paris is in France."], layers=[6, 12]).shape
    (1, 2, 576)
"""

from __future__ import annotations

from typing import Any


def load(name_or_path: str, backend: str = "transformers", n_threads: "int | None" = None, **kwargs: Any):
    """Load a model by name, path or served endpoint; every part of liedar takes what this returns.

    Why one entry point: probes, the monitor and the instruments only need a backend that
    answers ``hidden_states``, ``score_options`` and ``generate``; where it runs is the
    caller's choice.

    Parameters
    ----------
    name_or_path : str
        A built-in name (``"smollm2-135m"``, ``"gemma3-270m"``), a local ``.gguf`` file, a
        Hugging Face folder, an organism (``"smollm2-135m:sandbagger"``) or a served model
        (``"openai:MODEL"`` with ``base_url=...``).
    backend : {"transformers", "llamacpp"}, default "transformers"
        The local engine (ignored for served models).
    n_threads : int, optional
        CPU threads; default: the engine's own choice.
    **kwargs
        Passed on: see `liedar.models.registry.load` (device, dtype, ...) and
        `liedar.models.served.load_served` (base_url, concurrency, ...).

    Returns
    -------
    Backend
        A loaded model; served backends are context managers.

    Raises
    ------
    liedar.core.errors.ModelUnavailableError
        When the model package is not installed (the message names the install line).
    liedar.core.errors.InputError
        For an unknown name, a bad path or bad options.

    Examples
    --------
    >>> from liedar import models
    >>> lm = models.load("smollm2-135m", backend="llamacpp", n_threads=1)  # doctest: +SKIP
    >>> lm.hidden_states(["Paris is in France."], layers=[12]).shape  # doctest: +SKIP
    (1, 1, 576)
    """
    if str(name_or_path).startswith("openai:"):
        from liedar.models.served import load_served

        return load_served(str(name_or_path), **kwargs)
    from liedar.models.registry import load as _load

    return _load(name_or_path, backend=backend, n_threads=n_threads, **kwargs)


__all__ = ["load"]
