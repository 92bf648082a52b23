"""Strict orderings of a few items, enumerated or as integer-program variables.

Why one module: the Houtman-Maks index and the random-utility test both search over
strict rankings — by listing all s! of them when s is small, and otherwise with binary
pair-order variables ``x[p, q] = 1 iff p is ranked above q`` (p < q) constrained to be
transitive. Both searches share these pieces.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def rank_table(s: int) -> np.ndarray:
    """``ranks[p, item]`` = position of ``item`` (0 = best) in the p-th of the s! orderings."""
    perms = np.array(list(itertools.permutations(range(s))), dtype=np.int8)
    ranks = np.empty_like(perms)
    ranks[np.arange(len(perms))[:, None], perms] = np.arange(s, dtype=np.int8)[None, :]
    return ranks


def pair_index(s: int) -> dict[tuple[int, int], int]:
    """Column of the pair-order variable ``x[p, q]`` (p < q) among the s(s-1)/2 pairs."""
    return {pq: k for k, pq in enumerate(itertools.combinations(range(s), 2))}


def transitivity_rows(s: int, pairs: dict[tuple[int, int], int]) -> tuple[list[int], list[int], list[float], int]:
    """Sparse rows ``0 <= x_pq + x_qt - x_pt <= 1`` for every p < q < t.

    These 3-cycle inequalities make integral pair orders exactly the strict rankings.
    Returns (row ids, column ids, values, number of rows).
    """
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    r = 0
    for p, q, t in itertools.combinations(range(s), 3):
        rows += [r, r, r]
        cols += [pairs[p, q], pairs[q, t], pairs[p, t]]
        vals += [1.0, 1.0, -1.0]
        r += 1
    return rows, cols, vals, r


def above_matrix(s: int, x: np.ndarray, pairs: dict[tuple[int, int], int]) -> np.ndarray:
    """Boolean ``above[p, q]`` from rounded pair-order variables."""
    above = np.zeros((s, s), dtype=bool)
    for (p, q), k in pairs.items():
        above[p, q], above[q, p] = bool(x[k] > 0.5), not x[k] > 0.5
    return above


def ranking_from_above(above: np.ndarray) -> list[int]:
    """Items best first (an item's position is the number of items above it)."""
    return [int(i) for i in np.argsort(above.sum(axis=0), kind="stable")]
