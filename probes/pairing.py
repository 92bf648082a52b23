"""Minimal pairs in a user's statement file: find them, so they share one CV fold.

Why: a CSV of true/false twins ("The sun rises in the east." / "... in the west.") with
every row its own group puts each pair's halves in different folds. The probe then learns
the shared subject from one half and scores the other half with the twin's label, so the
cross-validated AUROC comes out *inverted*: 0.088 [0.025, 0.182] on 25 such pairs
(smollm2-135m layer 12, logistic, one row per group), 0.507 [0.392, 0.622] with the pairs
grouped (docs/results.md). A file without a ``group`` column gets its minimal pairs grouped
here, and the caller says how many.

A minimal pair is a true and a false statement whose word sets differ in at most
``MAX_DIFFERENT_WORDS`` words and share at least half the words of the longer one: one word
swapped ("east"/"west"), or a negation added ("is" / "is not", "rises" / "does not rise").
Each row joins at most one pair (closest twins first), so a templated file ("The capital of
X is Y.") is never chained into one giant group.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
from scipy import sparse

from liedar.core.errors import InputError

MAX_DIFFERENT_WORDS = 4  # "rises" -> "does not rise" differs in 4 words of the two sets
MIN_SHARED_SHARE = 0.5
_WORD = re.compile(r"[a-z0-9]+")


def words(statement: str) -> frozenset[str]:
    """Lower-cased word set of a statement, with "n't" read as "not".

    Parameters
    ----------
    statement : str
        One statement.

    Returns
    -------
    frozenset of str
        Its distinct words.

    Examples
    --------
    >>> sorted(words("Paris isn't in Spain."))
    ['in', 'is', 'not', 'paris', 'spain']
    """
    return frozenset(_WORD.findall(statement.lower().replace("n't", " not")))


def minimal_pairs(statements: Sequence[str], labels: Sequence[int], chunk: int = 512) -> list[tuple[int, int]]:
    """Disjoint (i, j) pairs of rows that are a true/false minimal pair, closest twins first.

    Parameters
    ----------
    statements : sequence of str
        The rows' statements.
    labels : sequence of int
        1 = true, 0 = false, one per statement.
    chunk : int, default 512
        Rows compared per block (bounds memory at ``chunk * len(statements)`` integers).

    Returns
    -------
    list of (int, int)
        Row index pairs, ``i < j``, each row in at most one pair.

    Raises
    ------
    liedar.core.errors.InputError
        When ``statements`` and ``labels`` differ in length.

    Examples
    --------
    >>> minimal_pairs(["The sun rises in the east.", "The sun rises in the west.", "Ice is cold."], [1, 0, 1])
    [(0, 1)]
    """
    n = len(statements)
    if len(labels) != n:
        raise InputError(f"{n} statements but {len(labels)} labels: give one label per statement")
    label_array = np.asarray(labels, dtype=int)
    sets = [words(s) for s in statements]
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, ws in enumerate(sets):
        for w in ws:
            rows.append(i)
            cols.append(vocab.setdefault(w, len(vocab)))
    if n < 2 or not vocab:
        return []
    X = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(n, len(vocab)))
    sizes = np.asarray(X.sum(axis=1)).ravel()
    candidates: list[tuple[int, int, int]] = []
    for start in range(0, n, chunk):
        shared = (X[start : start + chunk] @ X.T).toarray()
        size_i = sizes[start : start + chunk, None]
        different = size_i + sizes[None, :] - 2 * shared
        longer = np.maximum(size_i, sizes[None, :])
        ok = (different <= MAX_DIFFERENT_WORDS) & (shared >= MIN_SHARED_SHARE * longer)
        ok &= label_array[start : start + chunk, None] != label_array[None, :]
        ii, jj = np.nonzero(ok)
        ii = ii + start
        keep = ii < jj
        candidates += zip(different[ii[keep] - start, jj[keep]].tolist(), ii[keep].tolist(), jj[keep].tolist())
    used = np.zeros(n, dtype=bool)
    pairs = []
    for _, i, j in sorted(candidates):
        if not used[i] and not used[j]:
            used[i] = used[j] = True
            pairs.append((i, j))
    return sorted(pairs)
