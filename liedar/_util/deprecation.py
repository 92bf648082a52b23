"""Moved names keep working for one release, with a DeprecationWarning naming the new home.

Why: users wrote ``from liedar.atomic import write_json_atomic`` against 0.1; breaking their
imports silently would be the kind of surprise the house rebuild is meant to end. This is
TransformerLens's pattern: a module ``__getattr__`` that forwards and warns.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable


def forward_moved_names(old_module: str, new_module: str, names: "set[str] | None" = None) -> Callable[[str], Any]:
    """Return a module-level ``__getattr__`` that forwards ``names`` (all if None) to
    ``new_module`` with a DeprecationWarning; removal is planned for liedar 0.3."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__") or (names is not None and name not in names):
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        target = importlib.import_module(new_module)
        if not hasattr(target, name):
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        warnings.warn(
            f"{old_module}.{name} moved to {new_module}.{name}; import it from there "
            "(the old path goes away in liedar 0.3)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(target, name)

    return __getattr__
