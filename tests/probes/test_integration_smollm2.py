"""Integration: a probe on real smollm2-135m separates true from false built-in statements."""

from __future__ import annotations

import pytest

from liedar.core.errors import ModelUnavailableError
from liedar.probes.datasets import builtin_set
from liedar.probes.evaluation import cross_validated

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def smollm2():
    from liedar import models

    try:
        return models.load("smollm2-135m", n_threads=1)
    except ModelUnavailableError as exc:
        pytest.skip(f"smollm2-135m not installed: {exc}")


def test_middle_layer_probe_reaches_auroc_above_0_8_with_group_folds(smollm2) -> None:
    from liedar.models.cache import cached_hidden_states

    data = builtin_set("capitals")
    layer = smollm2.n_layers // 2
    X = cached_hidden_states(smollm2, data.inputs, [layer], "last")[:, 0]
    score = cross_validated("logistic", X, data, n_splits=5, seed=0)
    # folds keep each two-country block (both entities, their swaps and negations) together
    assert score.auroc.value > 0.8, score.auroc
    assert score.auroc.lo > 0.5
