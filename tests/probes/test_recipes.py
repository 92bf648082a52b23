"""Probe recipes: pinned templates, sklearn conformance, pairing, layer choice on validation only."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator

from liedar.core.errors import InputError
from liedar.models.chat import Dialogue, Message, render
from liedar.probes.datasets import StatementSet, builtin_set
from liedar.probes.estimators import BuergerTTPD, LogisticProbe
from liedar.probes.evaluation import auroc
from liedar.probes.recipes import (
    CHAT_ANSWERS,
    PLAIN_ANSWERS,
    RECIPES,
    LayerChoice,
    Recipe,
    answer_logodds,
    candidate_choices,
    centre_by_topic,
    choose_layers,
    fit_recipe,
    get_recipe,
    layer_features,
    make_estimator,
    read_input,
    twin_pairs,
)

S = "The city of Krasnodar is in Russia."


# ---- templates: the exact text each read mode gives the model -----------------------------


def test_templates_are_pinned() -> None:
    assert read_input("statement", S) == "The city of Krasnodar is in Russia."
    assert read_input("statement-word", S) == "The city of Krasnodar is in Russia"
    assert read_input("prompt-plain", S) == (
        "The city of Krasnodar is in Russia.\nQuestion: Is the statement above true or false?\nAnswer:"
    )
    assert read_input("prompt-chat", S) == Dialogue.of(
        Message("user", "Is the following statement true or false?\nThe city of Krasnodar is in Russia."),
        Message("assistant", "This statement is", detect=True),
    )
    assert PLAIN_ANSWERS == (" True", " False") and CHAT_ANSWERS == (" true", " false")


def test_chat_template_is_read_at_the_prefilled_answer_slot() -> None:
    chatml = (
        "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content']"
        " + '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
    )
    r = render(read_input("prompt-chat", S), chatml)
    assert r.text == (
        "<|im_start|>user\nIs the following statement true or false?\nThe city of Krasnodar is in Russia.<|im_end|>\n"
        "<|im_start|>assistant\nThis statement is"
    )
    assert r.detect == (False, True)


def test_unknown_read_mode_and_recipe_fields_are_refused() -> None:
    with pytest.raises(InputError, match="read mode"):
        read_input("whisper", S)
    with pytest.raises(InputError, match="position"):
        Recipe("x", position="first")
    with pytest.raises(InputError, match="choose one of"):
        get_recipe("nope")


# ---- estimators ---------------------------------------------------------------------------


def _estimator_configs():
    seen = {}
    for r in RECIPES.values():
        est = make_estimator(r, Cs=(0.1, 1.0))
        if isinstance(est, LogisticProbe):
            est.cv = 2
        seen.setdefault(repr(est), (r.name, est))
    return list(seen.values())


@pytest.mark.parametrize("name,est", _estimator_configs(), ids=[n for n, _ in _estimator_configs()])
def test_every_recipe_estimator_passes_check_estimator(name, est) -> None:
    results = check_estimator(est, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert not failed, (name, failed)


def _polar_data(n: int = 400, d: int = 16, seed: int = 0):
    """Truth along u for both polarities; a polarity-sensitive direction v whose sign flips
    with negation (the confound that inverts an affirmative-only probe); topic offsets."""
    rng = np.random.default_rng(seed)
    u, v, w = np.linalg.qr(rng.normal(size=(d, 3)))[0].T
    truth = rng.integers(0, 2, n)  # 1 = true
    pol = rng.integers(0, 2, n)  # 1 = affirmative
    topic = rng.integers(0, 3, n)
    t, p = 2 * truth - 1, 2 * pol - 1
    X = rng.normal(size=(n, d)) * 0.5 + np.outer(t, u) + np.outer(3 * t * p, v) + np.outer(2 * p, w)
    X += np.eye(d)[topic] * 4.0
    return X, 1 - truth, pol, topic.astype(str)


def test_buerger_ttpd_survives_negation_where_logistic_inverts() -> None:
    X, lie, pol, topic = _polar_data()
    train, test = np.arange(0, 400, 2), np.arange(1, 400, 2)
    ttpd = BuergerTTPD().fit(X[train], lie[train], polarity=pol[train], topic=topic[train])
    neg_test = test[pol[test] == 0]
    assert auroc(ttpd.decision_function(X[neg_test]), lie[neg_test]).value > 0.9
    aff = train[pol[train] == 1]
    lr = LogisticProbe(Cs=(1.0,)).fit(X[aff], lie[aff])  # affirmative-only: learns u + 3v
    assert auroc(lr.decision_function(X[neg_test]), lie[neg_test]).value < 0.5
    # t_G is the planted u (up to sign: it points to "false")
    assert abs(float(ttpd.truth_direction_ @ (X[lie == 1].mean(0) - X[lie == 0].mean(0)))) > 0


# ---- pairing and centring -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["capitals", "animals", "numbers"])
def test_twin_pairs_pair_each_statement_with_its_negation(name: str) -> None:
    s = builtin_set(name)
    pairs = twin_pairs(s)
    assert sorted(pairs.ravel().tolist()) == list(range(len(s)))
    for a, n in pairs:
        assert s.inputs[n].replace(" not ", " ") == s.inputs[a]
        assert s.labels[a] == 1 - s.labels[n]


def test_topic_centring_uses_no_labels() -> None:
    rng = np.random.default_rng(1)
    F = rng.normal(size=(30, 4)) + 5
    topics = np.repeat(["a", "b", "c"], 10)
    C = centre_by_topic(F, topics)
    for t in "abc":
        assert np.allclose(C[topics == t].mean(0), 0)


def _set_from(lie, pol, topic, groups=None) -> StatementSet:
    n = len(lie)
    return StatementSet(
        "synthetic",
        [f"s{i}" for i in range(n)],
        1 - np.asarray(lie),
        np.asarray(topic),
        np.where(np.asarray(pol) == 1, "affirmative", "negated"),
        np.full(n, "plain"),
        np.asarray(groups if groups is not None else [f"g{i}" for i in range(n)]),
    )


def _paired_layers(n_pairs: int = 120, d: int = 12, n_layers: int = 5, signal_layer: int = 3, seed: int = 0):
    """Affirmative/negated twins; truth readable (u) only at ``signal_layer``."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    truth_aff = rng.integers(0, 2, n_pairs)
    rows, lie, pol, grp = [], [], [], []
    for i, ta in enumerate(truth_aff):
        base = rng.normal(size=(n_layers + 2, d))
        for p, tr in ((1, ta), (0, 1 - ta)):
            x = base + 0.3 * rng.normal(size=base.shape)
            x[signal_layer] += 2.0 * (2 * tr - 1) * u
            rows.append(x)
            lie.append(1 - tr)
            pol.append(p)
            grp.append(f"g{i}")
    topic = np.array([f"t{int(g[1:]) % 3}" for g in grp])
    return np.array(rows), _set_from(lie, pol, topic, grp), list(range(n_layers + 2))


def test_contrast_pair_recipe_fits_on_differences_and_scores_twins_oppositely() -> None:
    X, S, layers = _paired_layers()
    recipe = get_recipe("contrast-pair")
    half = np.isin(S.group, [f"g{i}" for i in range(60)])
    fitted = fit_recipe(recipe, LayerChoice("one", (3,)), X[half], layers, S.subset(half))
    test = S.subset(~half)
    s = fitted.score(X[~half], test)
    pairs = twin_pairs(test)
    assert np.allclose(s[pairs[:, 0]], -s[pairs[:, 1]])
    assert auroc(s, test.lie_labels).value > 0.9
    lone = test.subset(~test.is_negated)  # without the twins the recipe cannot score
    with pytest.raises(InputError, match="twin"):
        fitted.score(X[~half][~test.is_negated], lone)


# ---- layer choices ------------------------------------------------------------------------


def test_candidate_choices_shapes() -> None:
    layers = list(range(0, 8))  # n_layers = 6 -> blocks 1..7 usable
    one = candidate_choices(get_recipe("default"), layers, 6)
    assert [c.layers for c in one] == [(v,) for v in range(1, 8)]
    band = candidate_choices(get_recipe("layer-band"), layers, 6)
    assert {len(c.layers) for c in band} == {3, 5} and all(c.layers[0] >= 1 for c in band)
    cat = candidate_choices(get_recipe("layer-concat"), layers, 6)
    assert all(c.layers == (c.layers[1] - 1, c.layers[1], c.layers[1] + 1) for c in cat)
    X = np.arange(2 * 8 * 3, dtype=float).reshape(2, 8, 3)
    assert layer_features(X, layers, LayerChoice("band", (2, 3, 4))).shape == (2, 3)
    assert np.allclose(layer_features(X, layers, LayerChoice("band", (2, 3, 4))), X[:, 3])
    assert layer_features(X, layers, LayerChoice("concat", (1, 2, 3))).shape == (2, 9)


def test_choose_layers_finds_the_signal_and_never_reads_other_rows() -> None:
    X, S, layers = _paired_layers(signal_layer=4)
    groups = np.unique(S.group)
    tr = np.flatnonzero(np.isin(S.group, groups[:60]))
    va = np.flatnonzero(np.isin(S.group, groups[60:90]))
    te = np.flatnonzero(np.isin(S.group, groups[90:]))
    recipe = get_recipe("default")
    choice, trail = choose_layers(recipe, X, layers, 5, S.subset(tr), tr, S.subset(va), va)
    assert choice.layers == (4,)
    poisoned = X.copy()
    poisoned[te] = np.nan  # a choice that read any test row would fail or change
    again, trail2 = choose_layers(recipe, poisoned, layers, 5, S.subset(tr), tr, S.subset(va), va)
    assert again == choice and [t["val_auroc"] for t in trail] == [t["val_auroc"] for t in trail2]


# ---- the answer-slot log-likelihood equals score_options ---------------------------------


def test_answer_logodds_matches_score_options_on_tiny_model(tiny_model_dir) -> None:
    from liedar import models

    lm = models.load(str(tiny_model_dir), n_threads=1)
    tok = lm.tokenizer
    words = [w for w in (" the", " is", " and", " blue", " green") if len(tok.encode(w, add_special_tokens=False)) == 1]
    assert len(words) >= 2, "the tiny tokenizer has no two single-token words"
    answers = (words[0], words[1])
    prompts = ["Paris is the capital of France.", "The sky", "Water boils at one hundred"]
    H = lm.hidden_states(prompts, [lm.n_layers + 1], "last")[:, 0]
    fast = answer_logodds(lm, H, answers)
    slow = np.array([np.subtract(*lm.score_options(p, list(answers))[::-1]) for p in prompts])
    assert np.allclose(fast, slow, atol=1e-3), (fast, slow)
