"""Group-aware splits: properties checked with hypothesis."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liedar.core.errors import InputError
from liedar.probes.datasets import builtin_set
from liedar.probes.splits import cap_per_topic, group_folds, group_split, leave_one_out

group_lists = st.lists(st.integers(0, 30), min_size=5, max_size=120)


@settings(max_examples=60, deadline=None)
@given(groups=group_lists, k=st.integers(2, 5), seed=st.integers(0, 10_000))
def test_folds_partition_items_and_never_split_a_group(groups, k, seed) -> None:
    g = np.array(groups)
    if len(np.unique(g)) < k:
        with pytest.raises(InputError):
            group_folds(g, k, seed)
        return
    folds = group_folds(g, k, seed)
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests.tolist()) == list(range(len(g)))  # every item tested exactly once
    for train, test in folds:
        assert len(test) > 0
        assert not set(g[train]) & set(g[test])  # no group on both sides
        assert len(train) + len(test) == len(g)


@settings(max_examples=60, deadline=None)
@given(groups=group_lists, seed=st.integers(0, 10_000))
def test_group_split_keeps_groups_whole(groups, seed) -> None:
    g = np.array(groups)
    if len(np.unique(g)) < 3:
        return
    parts = group_split(g, (0.6, 0.2, 0.2), seed)
    assert sorted(np.concatenate(parts).tolist()) == list(range(len(g)))
    sets = [set(g[p]) for p in parts]
    assert all(sets) and not (sets[0] & sets[1] or sets[0] & sets[2] or sets[1] & sets[2])


def test_twins_and_entities_stay_together_on_a_builtin_set() -> None:
    s = builtin_set("elements")
    for train, test in group_folds(s.group, 5, seed=0):
        train_text = " ".join(s.inputs[i] for i in train)
        for i in test:
            subject = s.inputs[i].split(" for ")[1].split(" is ")[0]
            assert f"for {subject} is" not in train_text


def test_fewer_items_than_folds() -> None:
    with pytest.raises(InputError, match="3 items cannot fill 5 folds"):
        group_folds(["a", "b", "c"], 5)
    with pytest.raises(InputError, match="only 2 groups"):
        group_folds(["a", "a", "b", "b", "b"], 3)


def test_leave_one_out_values() -> None:
    out = list(leave_one_out(["x", "y", "x", "z"]))
    assert [v for v, _, _ in out] == ["x", "y", "z"]
    assert out[0][2].tolist() == [0, 2]
    with pytest.raises(InputError):
        list(leave_one_out(["x", "x"]))


@settings(max_examples=40, deadline=None)
@given(groups=st.lists(st.integers(0, 40), min_size=1, max_size=150), cap=st.integers(1, 30), seed=st.integers(0, 99))
def test_cap_per_topic_takes_whole_groups(groups, cap, seed) -> None:
    g = np.array(groups)
    topics = np.where(g % 2 == 0, "even", "odd")
    keep = cap_per_topic(topics, g, cap, seed)
    kept_groups = set(g[keep])
    assert sorted(keep.tolist()) == sorted(np.flatnonzero(np.isin(g, list(kept_groups))).tolist())
    for t in ("even", "odd"):
        in_topic = keep[topics[keep] == t]
        biggest = max((np.sum(g == x) for x in set(g[topics == t])), default=0)
        assert len(in_topic) < cap + biggest  # stops once the cap is reached
