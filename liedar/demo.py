"""Deprecated: the demo pipeline moved to `liedar.pipeline.demo` (removed in liedar 0.3)."""

from liedar._util.deprecation import forward_moved_names

__getattr__ = forward_moved_names(__name__, "liedar.pipeline.demo")
