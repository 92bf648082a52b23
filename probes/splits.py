"""Group-aware folds: a statement, its negated twin and items sharing an entity stay together.

Why: if "Paris is the capital of France" is in training and "Paris is not the capital of
France" in testing, a probe can score well by recognising the sentence rather than its
truth, and entity reuse across folds can push AUROC *below* chance. Every function here
takes the per-item ``group`` array (`StatementSet.group`) and never splits a group.
"""

from __future__ import annotations

from typing import Iterator, Sequence, Union

import numpy as np

from liedar.core.errors import InputError

Fold = tuple[np.ndarray, np.ndarray]  # (train indices, test indices)


def group_folds(groups: Sequence, n_splits: int = 5, seed: Union[int, np.random.Generator] = 0) -> list[Fold]:
    """K folds over groups, balanced by item count (largest groups placed first).

    Raises InputError when there are fewer items or fewer groups than folds.
    """
    groups = np.asarray(groups)
    n = groups.shape[0]
    if n_splits < 2:
        raise InputError(f"n_splits={n_splits}: cross-validation needs at least 2 folds")
    if n < n_splits:
        raise InputError(f"{n} items cannot fill {n_splits} folds: use fewer folds or more data")
    uniq, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    if len(uniq) < n_splits:
        raise InputError(
            f"only {len(uniq)} groups (statement + twins + shared entities) for {n_splits} folds: "
            "use fewer folds or more data"
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    order = rng.permutation(len(uniq))
    order = order[np.argsort(-counts[order], kind="stable")]  # big groups first, ties random
    fold_of_group = np.empty(len(uniq), dtype=int)
    sizes = np.zeros(n_splits, dtype=int)
    for g in order:
        k = int(np.argmin(sizes))
        fold_of_group[g] = k
        sizes[k] += counts[g]
    fold = fold_of_group[inverse]
    return [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(n_splits)]


def leave_one_out(labels_per_item: Sequence) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(held-out value, train indices, test indices) for each distinct value, e.g. topic."""
    arr = np.asarray(labels_per_item).astype(str)
    values = sorted(set(arr.tolist()))
    if len(values) < 2:
        raise InputError(f"leave-one-out needs at least 2 distinct values, found {values}")
    for v in values:
        yield v, np.flatnonzero(arr != v), np.flatnonzero(arr == v)


def group_split(
    groups: Sequence, fractions: Sequence[float] = (0.6, 0.2, 0.2), seed: Union[int, np.random.Generator] = 0
) -> list[np.ndarray]:
    """Split item indices into parts (e.g. train/validation/test) without splitting groups."""
    groups = np.asarray(groups)
    fr = np.asarray(fractions, dtype=float)
    if fr.min() <= 0 or abs(fr.sum() - 1) > 1e-9:
        raise InputError(f"fractions {list(fractions)} must be positive and sum to 1")
    uniq, inverse = np.unique(groups, return_inverse=True)
    if len(uniq) < len(fr):
        raise InputError(f"only {len(uniq)} groups for {len(fr)} parts: give more data")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    order = rng.permutation(len(uniq))
    cuts = np.round(np.cumsum(fr)[:-1] * len(uniq)).astype(int)
    cuts = np.clip(cuts, np.arange(1, len(fr)), len(uniq) - np.arange(len(fr) - 1, 0, -1))
    part_of_group = np.empty(len(uniq), dtype=int)
    for p, chunk in enumerate(np.split(order, cuts)):
        part_of_group[chunk] = p
    part = part_of_group[inverse]
    return [np.flatnonzero(part == p) for p in range(len(fr))]


def cap_per_topic(
    topics: Sequence, groups: Sequence, max_items: int, seed: Union[int, np.random.Generator] = 0
) -> np.ndarray:
    """Indices of a seeded subsample with at most about ``max_items`` items per topic, taking
    whole groups (twins and shared entities stay together); sorted."""
    if max_items < 1:
        raise InputError(f"max_items={max_items}: keep at least one item per topic")
    topics, groups = np.asarray(topics).astype(str), np.asarray(groups).astype(str)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    keep = []
    for topic in sorted(set(topics.tolist())):
        idx = np.flatnonzero(topics == topic)
        uniq = np.unique(groups[idx])
        taken = 0
        for g in uniq[rng.permutation(len(uniq))]:
            if taken >= max_items:
                break
            members = idx[groups[idx] == g]
            keep.append(members)
            taken += len(members)
    return np.sort(np.concatenate(keep))
