"""The bottom layer's plumbing: atomic writes, JSON-safe values, the dataclass-to-JSON codec,
JSON-lines reading, and the offline switches for Hugging Face libraries.

Why a layer of its own: every other package (models, probes, behavioral, report, CLI)
needs these, so they must import nothing of the project except `liedar.errors`; the
layering test (tests/test_layers.py) holds them to it.
"""
