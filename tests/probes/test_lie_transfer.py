"""Lie-probe styles: Apollo's instructed pairs (text pinned), the role-play set, and
`style_transfer` (a mix scored on one of its parts never trains on the items it scores)."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.core.errors import InputError
from liedar.models.chat import Dialogue
from liedar.probes.datasets import (
    DECEPTIVE_PERSONA,
    HONEST_PERSONA,
    StatementSet,
    apollo_instructed_pairs,
)
from liedar.probes.estimators import LogisticProbe
from liedar.probes.evaluation import cross_validated, style_transfer, train_test
from liedar.probes.roleplay import roleplay_dialogues, roleplay_statements


def _facts() -> StatementSet:
    texts = [
        "The Earth's atmosphere protects us from harmful radiation from the sun.",
        "The largest flower in the world is the daisy.",  # false: dropped
        "Water boils at one hundred degrees.",  # 6 words: one word read
        "Cats are mammals.",  # 3 words: nothing left to read, dropped
    ]
    n = len(texts)
    return StatementSet(
        "facts",
        texts,
        np.array([1, 0, 1, 1]),
        np.full(n, "facts"),
        np.full(n, "affirmative"),
        np.full(n, "plain"),
        np.array([f"facts:{i}" for i in range(n)]),
    )


def test_apollo_pairs_read_up_to_five_words_before_the_end() -> None:
    S = apollo_instructed_pairs(_facts())
    assert len(S) == 4 and list(S.labels) == [1, 0, 1, 0]
    first, second = S.inputs[0], S.inputs[1]
    assert isinstance(first, Dialogue)
    assert [m.content for m in first.messages] == [HONEST_PERSONA, "The Earth's atmosphere protects us from"]
    assert [m.content for m in second.messages] == [DECEPTIVE_PERSONA, "The Earth's atmosphere protects us from"]
    assert [m.detect for m in first.messages] == [False, True]
    assert S.inputs[2].messages[-1].content == "Water"
    assert list(S.group) == ["apollo:facts:0"] * 2 + ["apollo:facts:2"] * 2  # both personas of a fact: one group
    assert set(S.style) == {"apollo-instructed"}


def test_apollo_pairs_refuse_a_set_with_nothing_to_read() -> None:
    short = _facts().subset([3])
    with pytest.raises(InputError, match="longer than 5 words"):
        apollo_instructed_pairs(short)


def test_roleplay_statements_label_the_honest_answer_true() -> None:
    dialogues, deceptive, groups = roleplay_dialogues()
    S = roleplay_statements()
    assert len(S) == len(dialogues) and list(S.lie_labels) == list(deceptive) and list(S.group) == groups


def _style(name: str, n_groups: int, shift: float, rng: np.random.Generator) -> tuple[np.ndarray, StatementSet]:
    """Two items per group (honest, deceptive); deceptive items moved by ``shift`` along axis 0."""
    n = 2 * n_groups
    labels = np.tile([1, 0], n_groups)
    X = rng.normal(size=(n, 4))
    X[:, 0] += shift * (1 - labels)
    S = StatementSet(
        name,
        [f"{name} {i}" for i in range(n)],
        labels,
        np.full(n, name),
        np.full(n, "affirmative"),
        np.full(n, name),
        np.repeat([f"{name}:{g}" for g in range(n_groups)], 2),
    )
    return X, S


class _Recording:
    """A probe factory that remembers every training set it was fitted on."""

    def __init__(self) -> None:
        self.seen: list[set[str]] = []

    def __call__(self) -> LogisticProbe:
        outer = self

        class Probe(LogisticProbe):
            def fit(self, X, y, groups=None):
                outer.seen.append(set(map(str, groups)))
                return super().fit(X, y, groups=groups)

        return Probe(Cs=(0.1,))


def test_a_mix_scored_on_its_own_part_never_trains_on_the_scored_groups() -> None:
    rng = np.random.default_rng(0)
    parts = {"a": _style("a", 30, 3.0, rng), "b": _style("b", 20, 3.0, rng)}
    factory = _Recording()
    score = style_transfer(factory, parts, ("a", "b"), "b", n_splits=5, seed=0)
    b_groups = set(parts["b"][1].group)
    assert len(factory.seen) == 5
    for seen in factory.seen:
        assert set(parts["a"][1].group) <= seen  # the other style is always in training
        assert 0 < len(b_groups - seen) < len(b_groups)  # one fold of b held out each time
    held_out = [b_groups - seen for seen in factory.seen]
    assert set().union(*held_out) == b_groups and sum(map(len, held_out)) == len(b_groups)  # each once
    assert score.n_test == 40 and score.auroc.value > 0.9


def test_style_transfer_reduces_to_train_test_and_cross_validation() -> None:
    rng = np.random.default_rng(1)
    parts = {"a": _style("a", 30, 3.0, rng), "b": _style("b", 20, -3.0, rng)}  # b's lies point the other way
    across = style_transfer("logistic", parts, ("a",), "b", seed=0)
    direct = train_test("logistic", *parts["a"], *parts["b"], seed=0)
    assert across.auroc.value == direct.auroc.value < 0.2  # the direction inverts: measured, not hidden
    own = style_transfer("logistic", parts, ("a",), "a", seed=0)
    assert own.auroc.value == cross_validated("logistic", *parts["a"], seed=0).auroc.value
    with pytest.raises(InputError, match="no data"):
        style_transfer("logistic", parts, ("c",), "a")
