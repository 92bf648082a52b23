"""Wording families composed from parts, for organism training data.

Why compose: an organism trained on a handful of strings learns the strings (the first liar
lied with a trained role wording and not with a held-out one); every combination of a few
interchangeable parts gives a family large enough that only the concept is worth learning.
"""

from __future__ import annotations

from itertools import product


def compose(*parts: tuple[str, ...]) -> tuple[str, ...]:
    """Every combination of one wording per part, joined by spaces (empty parts dropped), in a fixed order."""
    return tuple(" ".join(p for p in combo if p) for combo in product(*parts))
