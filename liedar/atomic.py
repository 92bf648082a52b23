"""Deprecated: atomic writers moved to `liedar._util.atomic` (removed in liedar 0.3)."""

from liedar._util.deprecation import forward_moved_names

__getattr__ = forward_moved_names(__name__, "liedar._util.atomic")
