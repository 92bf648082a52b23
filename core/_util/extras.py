"""Optional dependencies: import one, or say in one line which extra installs it.

Why: the core install is light (the black-box instruments on records need numpy and scipy);
torch, llama.cpp, peft, the OpenAI client, inspect_ai and Ray are extras. A user who calls
into a part whose extra is missing gets a `MissingExtraError` naming the install command,
which the CLI prints as one line (exit 2), instead of a ModuleNotFoundError traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from liedar.core.errors import LiedarError

# module -> the extra that provides it
EXTRA_OF = {
    "torch": "local",
    "transformers": "local",
    "accelerate": "local",
    "gguf": "local",
    "safetensors": "local",
    "llama_cpp": "local",
    "sklearn": "local",
    "threadpoolctl": "local",
    "matplotlib": "plots",
    "peft": "organisms",
    "openai": "serve",
    "httpx": "serve",
    "uvicorn": "serve",
    "inspect_ai": "inspect",
    "ray": "ray",
}


class MissingExtraError(LiedarError, ImportError):
    """An optional dependency is not installed (the message names the pip command)."""


def install_hint(extra: str) -> str:
    return f"pip install 'liedar[{extra}]'"


def require(module: str, purpose: str = "") -> ModuleType:
    """Import ``module`` or raise `MissingExtraError` with the install line for its extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".")[0]
        if exc.name is None or exc.name.split(".")[0] != top:
            raise  # the module exists but one of *its* imports is broken: not a missing extra
        extra = EXTRA_OF.get(top, "all")
        what = f" ({purpose})" if purpose else ""
        raise MissingExtraError(f"{module} is not installed{what}: {install_hint(extra)}") from None
