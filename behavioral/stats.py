"""Deprecated: `Estimate` and the interval functions moved to `liedar.stats`, the bottom
layer shared by white-box and black-box numbers (removed in liedar 0.3)."""

from liedar._util.deprecation import forward_moved_names

__getattr__ = forward_moved_names(__name__, "liedar.stats")
