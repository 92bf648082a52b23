"""Deprecated: the report's data model moved to `liedar.results` (removed in liedar 0.3)."""

from liedar._util.deprecation import forward_moved_names

__getattr__ = forward_moved_names(__name__, "liedar.results")
