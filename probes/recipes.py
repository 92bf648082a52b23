"""Named probe recipes: *where* to read a hidden state, *which layers*, *which estimator*.

Why recipes: the estimator is only one of the choices that decide whether a truth probe
transfers to topics it never saw. The others — what text the model reads (the bare
statement, or the statement followed by a true/false question whose answer slot is read),
which token (the last one, the mean over tokens, the last word before the full stop),
which layers (one, a band averaged, a few concatenated), how the training mix is used
(both polarities, contrast pairs, per-topic centring) — are named here together, so that
`scripts/probe_leaderboard.py` can compare whole recipes and `liedar probe train --recipe`
can pick one by name.

A recipe's *free choices* (which layer or band) are never fixed here: `choose_layers`
makes them on validation data the caller hands in, and only there (the leaderboard's test
asserts that its test rows are never read). Regularisation (C) is chosen by each
estimator's own inner cross-validation on its training data.

Templates are part of a recipe's identity and are pinned by tests (the exact text read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from liedar.core.errors import InputError
from liedar.models.backend import Backend
from liedar.models.chat import Dialogue, Message, TextInput
from liedar.probes.datasets import StatementSet, builtin_set
from liedar.probes.estimators import BuergerTTPD, LogisticProbe, MassMeanProbe

# ---- templates (pinned by tests/probes/test_recipes.py) -----------------------------------

PLAIN_TEMPLATE = "{statement}\nQuestion: Is the statement above true or false?\nAnswer:"
"""Prompted probing, plain text: the hidden state is read at the final ``:``, the slot
where the model is about to answer; the log-likelihood baseline compares the two answers."""
PLAIN_ANSWERS = (" True", " False")

CHAT_QUESTION = "Is the following statement true or false?\n{statement}"
CHAT_PREFILL = "This statement is"
"""Prompted probing, chat: the user asks, the assistant's turn is prefilled with
``CHAT_PREFILL`` (the only detect message), so the last token read is the answer slot."""
CHAT_ANSWERS = (" true", " false")

READS = ("statement", "statement-word", "prompt-plain", "prompt-chat")
"""statement: the text itself; statement-word: the text without its final punctuation (so
"last" is the last word, not the full stop); prompt-plain / prompt-chat: the templates."""
POSITIONS = ("last", "mean")
LAYER_MODES = ("one", "band", "concat")
ESTIMATORS = ("logistic", "mass-mean-cov", "ttpd-published", "contrast-pair")
CENTRINGS = ("none", "topic")
MIXES = ("given", "plus-builtin")
"""given: train on the data the evaluation hands in; plus-builtin: add liedar's own built-in
sets (their training and validation parts only) to every training set."""


def strip_final_punctuation(statement: str) -> str:
    """'Paris is in France.' -> 'Paris is in France' (one trailing . ! or ? removed)."""
    text = statement.rstrip()
    return text[:-1].rstrip() if text and text[-1] in ".!?" else text


def read_input(read: str, statement: str) -> TextInput:
    """The exact input the model reads for one statement under a ``read`` mode."""
    if read == "statement":
        return statement
    if read == "statement-word":
        return strip_final_punctuation(statement)
    if read == "prompt-plain":
        return PLAIN_TEMPLATE.format(statement=statement)
    if read == "prompt-chat":
        return Dialogue.of(
            Message("user", CHAT_QUESTION.format(statement=statement)),
            Message("assistant", CHAT_PREFILL, detect=True),
        )
    raise InputError(f"unknown read mode {read!r}: choose one of {', '.join(READS)}")


def is_dialogue_data(statements: StatementSet) -> bool:
    return any(not isinstance(x, str) for x in statements.inputs)


def read_inputs(read: str, statements: StatementSet) -> list[TextInput]:
    if is_dialogue_data(statements):
        raise InputError(f"recipe read mode {read!r} needs plain-text statements, not dialogues")
    return [read_input(read, str(x)) for x in statements.inputs]


# ---- recipes ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recipe:
    """One way of turning a statement into a probe score (see the module docstring).

    The estimator is only one of the choices that decide whether a probe transfers to new
    topics; a recipe names them all, so whole recipes can be compared and picked by name
    (``liedar probe train --recipe``). Values are checked against the allowed choices.

    Parameters
    ----------
    name : str
        The recipe's name (a key of ``RECIPES``).
    read : str, default "statement"
        What text the model reads: one of ``READS``.
    position : str, default "last"
        Which token: ``"last"`` or ``"mean"``.
    layers : str, default "one"
        ``"one"`` layer, a ``"band"`` averaged, or a few layers ``"concat"``-enated.
    estimator : str, default "logistic"
        One of ``ESTIMATORS``.
    centring : str, default "none"
        ``"topic"`` centres activations per topic (transductive).
    mix : str, default "given"
        ``"plus-builtin"`` adds liedar's built-in sets to every training set.
    summary : str, optional
        One line describing the recipe.
    source : str, optional
        Where the recipe comes from (a paper, a repository).

    Raises
    ------
    InputError
        When a choice is not among the allowed values.

    Examples
    --------
    >>> r = get_recipe("layer-band")
    >>> r.layers, r.position, r.needs_pairs
    ('band', 'last', False)
    """

    name: str
    read: str = "statement"
    position: str = "last"
    layers: str = "one"
    estimator: str = "logistic"
    centring: str = "none"
    mix: str = "given"
    summary: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        for field_, allowed in (
            ("read", READS),
            ("position", POSITIONS),
            ("layers", LAYER_MODES),
            ("estimator", ESTIMATORS),
            ("centring", CENTRINGS),
            ("mix", MIXES),
        ):
            if getattr(self, field_) not in allowed:
                raise InputError(f"recipe {self.name!r}: {field_}={getattr(self, field_)!r}; choose from {allowed}")

    @property
    def needs_pairs(self) -> bool:
        """Contrast pairs score a statement together with its negated twin."""
        return self.estimator == "contrast-pair"

    @property
    def transductive(self) -> bool:
        """Per-topic centring subtracts the mean of the *unlabelled* test topic: it needs a
        batch of statements from the same topic at scoring time."""
        return self.centring == "topic"


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe("default", summary="the statement's last token (its full stop), one layer, logistic regression"),
        Recipe("last-word", read="statement-word", summary="the last word's token (full stop removed), one layer"),
        Recipe("mean-tokens", position="mean", summary="mean over the statement's tokens, one layer"),
        Recipe("layer-band", layers="band", summary="last token, a band of 3 or 5 layers averaged"),
        Recipe("layer-concat", layers="concat", summary="last token, three layers concatenated"),
        Recipe(
            "prompted",
            read="prompt-plain",
            summary="statement + plain true/false question; read at the answer slot",
            source="prompted probing (e.g. Azaria & Mitchell-style readouts at a judgement slot)",
        ),
        Recipe(
            "prompted-chat",
            read="prompt-chat",
            summary="chat-formatted true/false question; read at the assistant's answer slot",
        ),
        Recipe(
            "ttpd",
            estimator="ttpd-published",
            summary="TTPD as published: per-file centring, t_G + polarity direction fitted jointly",
            source="Bürger et al. 2024, Truth is Universal (sciai-lab/Truth_is_Universal probes.py)",
        ),
        Recipe(
            "contrast-pair",
            estimator="contrast-pair",
            summary="statement minus its negation as one example (supervised CCS-style); needs the twin",
            source="Burns et al. 2023 (CCS) contrast pairs, supervised",
        ),
        Recipe(
            "topic-centred",
            centring="topic",
            summary="activations centred per topic (test topic by its own unlabelled mean), logistic",
        ),
        Recipe("mass-mean-cov", estimator="mass-mean-cov", summary="Fisher LDA direction, last token, one layer"),
        Recipe(
            "mix-builtin",
            mix="plus-builtin",
            summary="the default, trained on the given topics plus liedar's built-in sets (train/validation parts)",
        ),
        Recipe(
            "ttpd-mix-builtin",
            estimator="ttpd-published",
            mix="plus-builtin",
            summary="published TTPD trained on the given topics plus the built-in sets",
        ),
        Recipe(
            "prompted-chat-centred",
            read="prompt-chat",
            centring="topic",
            summary="chat answer slot + per-topic centring",
        ),
    )
}
DEFAULT_RECIPE = "mix-builtin"
"""The command line's default for true/false statements: the best single-statement recipe of
the leaderboard in all four measurements (smollm2-135m and gemma3-270m, 604 and 6,334
statements; +0.02 to +0.036 leave-one-topic-out AUROC over ``default``: docs/probes.md)."""
DIALOGUE_RECIPE = "default"
"""The default for dialogues (lie probes): the leaderboard measured truth probes only, and no
lie-probe training mix transferred to another style (docs/probes.md, "Lie probes")."""
MIX_SETS = ("capitals", "elements", "animals", "numbers")
"""The built-in true/false sets that ``mix="plus-builtin"`` adds to a training set."""

BASELINES = {
    "loglik-statement": "minus the summed log-probability of the statement after a newline (no training)",
    "loglik-prompt-plain": "log p(' False') - log p(' True') at the plain template's answer slot (no training)",
    "loglik-prompt-chat": "log p(' false') - log p(' true') at the chat template's answer slot (no training)",
}


def default_recipe_for(statements: StatementSet) -> str:
    """`DEFAULT_RECIPE` for plain statements, `DIALOGUE_RECIPE` for dialogues."""
    return DIALOGUE_RECIPE if is_dialogue_data(statements) else DEFAULT_RECIPE


def builtin_mix(recipe: Recipe, statements: StatementSet, seed: int = 0) -> Optional[StatementSet]:
    """What a ``plus-builtin`` recipe adds to ``statements`` before fitting: the `MIX_SETS`
    the data do not already contain (by topic), at the polarities the data have (as the
    leaderboard adds them). None for other recipes or when every set is already there.
    Dialogues are refused: the mix was measured for truth probes on plain statements only."""
    if recipe.mix != "plus-builtin":
        return None
    if is_dialogue_data(statements):
        raise InputError(
            f"recipe {recipe.name!r} adds true/false statements to the training set, measured for truth probes "
            f"only; for dialogues (a lie probe) use --recipe {DIALOGUE_RECIPE}"
        )
    present = set(np.asarray(statements.topic).tolist())
    parts = [builtin_set(name, seed) for name in MIX_SETS if name not in present]
    if not parts:
        return None
    mix = StatementSet.concat(parts, name="builtin-mix")
    return mix.subset(np.flatnonzero(np.isin(mix.polarity, np.unique(statements.polarity))), name="builtin-mix")


def get_recipe(name: str) -> Recipe:
    """The named recipe from ``RECIPES``.

    Parameters
    ----------
    name : str
        A recipe name, e.g. ``"default"``, ``"prompted"``, ``"ttpd"``.

    Returns
    -------
    Recipe
        The recipe.

    Raises
    ------
    InputError
        When no recipe has that name (the message lists them).

    Examples
    --------
    >>> get_recipe("default").summary
    "the statement's last token (its full stop), one layer, logistic regression"
    """
    if name not in RECIPES:
        raise InputError(f"unknown probe recipe {name!r}: choose one of {', '.join(RECIPES)}")
    return RECIPES[name]


# ---- layer choices ------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerChoice:
    """Which layers a fitted recipe reads: one, a band (averaged) or a set (concatenated)."""

    mode: str
    layers: tuple[int, ...]

    def label(self) -> str:
        if self.mode == "one":
            return f"layer {self.layers[0]}"
        if self.mode == "band":
            return f"layers {self.layers[0]}-{self.layers[-1]} averaged"
        return "layers " + "+".join(str(v) for v in self.layers) + " concatenated"

    # stays hand-written: writes the label() a method derives
    def to_dict(self) -> dict:
        return {"mode": self.mode, "layers": list(self.layers), "label": self.label()}


def candidate_choices(recipe: Recipe, layers: Sequence[int], n_layers: int) -> list[LayerChoice]:
    """Every layer choice a recipe may make among the extracted ``layers`` (blocks 1..n+1).

    one: each layer; band: widths 3 and 5 centred on each layer; concat: (c - s, c, c + s)
    with s = max(1, n_layers // 6)."""
    avail = [int(v) for v in layers if 1 <= int(v) <= n_layers + 1]
    have = set(avail)
    if recipe.layers == "one":
        return [LayerChoice("one", (v,)) for v in avail]
    out = []
    if recipe.layers == "band":
        for half in (1, 2):
            for c in avail:
                band = tuple(range(c - half, c + half + 1))
                if all(b in have for b in band):
                    out.append(LayerChoice("band", band))
    else:
        step = max(1, n_layers // 6)
        for c in avail:
            trio = (c - step, c, c + step)
            if all(b in have for b in trio):
                out.append(LayerChoice("concat", trio))
    if not out:
        raise InputError(f"recipe {recipe.name!r}: no {recipe.layers} layer choice fits the extracted layers {avail}")
    return out


def layer_features(X_layers: np.ndarray, layers: Sequence[int], choice: LayerChoice) -> np.ndarray:
    """[n, L, d] activations (L = ``layers``) -> [n, d'] features for ``choice``."""
    pos = {int(v): k for k, v in enumerate(layers)}
    missing = [v for v in choice.layers if v not in pos]
    if missing:
        raise InputError(f"layers {missing} were not extracted (have {list(layers)})")
    ks = [pos[v] for v in choice.layers]
    if choice.mode == "one":
        return np.asarray(X_layers[:, ks[0]], dtype=np.float64)
    if choice.mode == "band":
        return np.asarray(X_layers[:, ks], dtype=np.float64).mean(axis=1)
    return np.concatenate([np.asarray(X_layers[:, k], dtype=np.float64) for k in ks], axis=1)


# ---- pairing, centring --------------------------------------------------------------------


def twin_pairs(statements: StatementSet) -> np.ndarray:
    """[m, 2] (affirmative row, negated row) twins: the k-th affirmative and the k-th negated
    statement of each group, in order (Truth-is-Universal files are row-aligned and the
    built-in sets write each statement next to its negation). Rows without a twin are left out."""
    pairs = []
    for g in np.unique(statements.group):
        idx = np.flatnonzero(statements.group == g)
        aff = idx[~statements.is_negated[idx]]
        neg = idx[statements.is_negated[idx]]
        pairs.extend(zip(aff[: len(neg)], neg[: len(aff)]))
    return np.array(pairs, dtype=int).reshape(-1, 2)


def centre_by_topic(F: np.ndarray, topics: Sequence) -> np.ndarray:
    """Subtract each topic's mean (of these rows, no labels used)."""
    topics = np.asarray(topics).astype(str)
    out = np.array(F, dtype=np.float64, copy=True)
    for t in np.unique(topics):
        m = topics == t
        out[m] -= out[m].mean(axis=0)
    return out


# ---- fitting and scoring ------------------------------------------------------------------


def make_estimator(recipe: Recipe, Cs: Sequence[float] = (1e-3, 1e-2, 1e-1, 1.0, 10.0)) -> Any:
    """The scikit-learn estimator a recipe fits (every one passes check_estimator)."""
    if recipe.estimator in ("logistic", "contrast-pair"):
        return LogisticProbe(Cs=Cs)
    if recipe.estimator == "mass-mean-cov":
        return MassMeanProbe(covariance="within")
    return BuergerTTPD()


@dataclass
class FittedRecipe:
    recipe: Recipe
    choice: LayerChoice
    layers: tuple[int, ...]  # the extracted layers X_layers is indexed by
    estimator: Any

    def features(self, X_layers: np.ndarray, statements: StatementSet) -> np.ndarray:
        F = layer_features(X_layers, self.layers, self.choice)
        if self.recipe.centring == "topic":
            F = centre_by_topic(F, statements.topic)
        return F

    def score(self, X_layers: np.ndarray, statements: StatementSet) -> np.ndarray:
        """Per-statement score, higher = more likely false. Contrast pairs: the affirmative
        statement gets the pair's score, its negation minus it; an unpaired row is refused."""
        F = self.features(X_layers, statements)
        if not self.recipe.needs_pairs:
            return self.estimator.decision_function(F)
        pairs = twin_pairs(statements)
        if len(pairs) < len(statements) / 2 or len(np.unique(pairs)) != len(statements):
            raise InputError(
                "the contrast-pair recipe scores a statement together with its negated twin: "
                "every statement needs its twin in the same set"
            )
        s = self.estimator.decision_function(F[pairs[:, 0]] - F[pairs[:, 1]])
        out = np.empty(len(statements))
        out[pairs[:, 0]], out[pairs[:, 1]] = s, -s
        return out


def fit_recipe(
    recipe: Recipe,
    choice: LayerChoice,
    X_layers: np.ndarray,
    layers: Sequence[int],
    statements: StatementSet,
    *,
    Cs: Sequence[float] = (1e-3, 1e-2, 1e-1, 1.0, 10.0),
) -> FittedRecipe:
    """Fit ``recipe`` at ``choice`` on these rows (lie labels; 1 = false)."""
    if X_layers.shape[0] != len(statements):
        raise InputError(f"{X_layers.shape[0]} activation rows but {len(statements)} statements")
    fitted = FittedRecipe(recipe, choice, tuple(int(v) for v in layers), make_estimator(recipe, Cs))
    F = fitted.features(X_layers, statements)
    y = statements.lie_labels
    est = fitted.estimator
    if recipe.needs_pairs:
        pairs = twin_pairs(statements)
        if len(pairs) == 0:
            raise InputError("the contrast-pair recipe needs statements with their negated twins in training")
        D = F[pairs[:, 0]] - F[pairs[:, 1]]
        est.fit(D, y[pairs[:, 0]], groups=statements.group[pairs[:, 0]])
    elif isinstance(est, LogisticProbe):
        est.fit(F, y, groups=statements.group)
    elif isinstance(est, BuergerTTPD):
        est.fit(F, y, polarity=(~statements.is_negated).astype(int), topic=statements.topic)
    else:
        est.fit(F, y)
    return fitted


def choose_layers(
    recipe: Recipe,
    X_layers: np.ndarray,
    layers: Sequence[int],
    n_layers: int,
    train: StatementSet,
    train_rows: np.ndarray,
    val: StatementSet,
    val_rows: np.ndarray,
    *,
    Cs: Sequence[float] = (1e-2, 1e-1, 1.0),
) -> tuple[LayerChoice, list[dict]]:
    """Pick the recipe's layer choice by validation AUROC: fit on ``train_rows`` of
    ``X_layers``, score ``val_rows``. No other row of ``X_layers`` is read, so test rows can
    sit in the same array (the leaderboard's split test relies on this)."""
    from liedar.probes.evaluation import auc_value

    Xt, Xv = X_layers[np.asarray(train_rows)], X_layers[np.asarray(val_rows)]
    y = val.lie_labels
    trail = []
    for choice in candidate_choices(recipe, layers, n_layers):
        fitted = fit_recipe(recipe, choice, Xt, layers, train, Cs=Cs)
        s = fitted.score(Xv, val)
        trail.append({"choice": choice.to_dict(), "val_auroc": auc_value(s[y == 1], s[y == 0])})
    best = int(np.argmax([t["val_auroc"] for t in trail]))
    return candidate_choices(recipe, layers, n_layers)[best], trail


# ---- the answer-slot log-likelihood (zero-shot baseline) ---------------------------------


def answer_logodds(backend: Backend, final_states: np.ndarray, answers: tuple[str, str]) -> np.ndarray:
    """log p(answers[1]) - log p(answers[0]) at the read slot, from the final-norm hidden
    state (layer n_layers + 1, what the unembedding reads) and the two answers' unembedding
    rows: the softmax normaliser cancels in the difference, so this equals the difference of
    ``score_options`` for single-token answers (checked by the integration test), at one
    matrix product instead of one forward pass per statement. transformers backend only.
    """
    model = getattr(backend, "model", None)
    tok = getattr(backend, "tokenizer", None)
    if model is None or tok is None:
        raise InputError("the answer-slot log-likelihood needs the transformers backend (--backend transformers)")
    cfg = getattr(model, "config", None)
    cap = getattr(getattr(cfg, "text_config", cfg), "final_logit_softcapping", None)
    ids = []
    for a in answers:
        got = tok.encode(a, add_special_tokens=False)
        if len(got) != 1:
            raise InputError(f"answer {a!r} is {len(got)} tokens for {backend.name}; the slot baseline needs one")
        ids.append(got[0])
    W = model.get_output_embeddings().weight.detach().float().cpu().numpy()[ids]  # [2, d]
    logits = np.asarray(final_states, dtype=np.float64) @ W.T.astype(np.float64)
    if cap:
        logits = cap * np.tanh(logits / cap)
    return logits[:, 1] - logits[:, 0]


# ---- the command line's view: recipes a saved probe can carry ------------------------------


def saved_probe_recipes() -> tuple[str, ...]:
    """Recipes that a saved probe (one layer of the raw text, one linear map: what
    `probes.io` stores and the inline monitor scores) can represent exactly. A training mix
    changes only what the map is fitted on, so ``plus-builtin`` recipes qualify."""
    return tuple(
        n
        for n, r in RECIPES.items()
        if r.read == "statement" and r.layers == "one" and r.centring == "none" and not r.needs_pairs
    )


def cli_probe(recipe: Recipe) -> tuple[Any, str]:
    """(probe factory, position) for `liedar probe train --recipe`; other recipes are refused
    with the reason, because a saved probe could not reproduce what they read."""
    if recipe.name not in saved_probe_recipes():
        why = []
        if recipe.read != "statement":
            why.append(f"reads {recipe.read!r} (a template around the text)")
        if recipe.layers != "one":
            why.append(f"combines layers ({recipe.layers})")
        if recipe.centring != "none":
            why.append("centres each topic by its own mean")
        if recipe.needs_pairs:
            why.append("scores a statement together with its negated twin")
        raise InputError(
            f"recipe {recipe.name!r} {' and '.join(why)}, which a saved probe (one layer of the raw text) cannot "
            f"carry; measure it with scripts/probe_leaderboard.py, or train one of {', '.join(saved_probe_recipes())}"
        )
    return (lambda: make_estimator(recipe)), recipe.position
