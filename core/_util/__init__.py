"""The bottom layer's plumbing: atomic writes, JSON-safe values, the dataclass-to-JSON codec,
JSON-lines reading, and the offline switches for Hugging Face libraries.

Why a package of its own: every other package (models, probes, behavioral, report, CLI)
needs these, so they import nothing of the project except `liedar.core.errors`; the
layering test (tests/house/test_layers.py) holds the whole of `liedar.core` below the rest.
"""
