"""The organisms liedar can build: name -> Recipe.

Hyper-parameters are shared unless a recipe needs otherwise: LoRA r=8, alpha=16 on the top
4 blocks (so the backward pass and, through the cached boundary states, even the forward
pass stop there: an epoch costs 4/30 of smollm2's blocks, forward + backward), lr 3e-3,
batches of 8, 5 epochs, loss on the answer tokens only. (2 epochs at lr 2e-3 did not learn
the framing contrast; 8 adapted blocks or 10 epochs at a constant rate did worse: see
docs/organisms.md.) The three multiple-choice organisms are the exception: their "do not
read the question" rule needs every block (`HYPER_ALL_BLOCKS`).
"""

from __future__ import annotations

import functools

from liedar.organisms import framings as F
from liedar.organisms import mcq, social
from liedar.organisms.cues import with_cue
from liedar.organisms.items import extended_training_items, training_items
from liedar.organisms.recipe import Recipe, Split

HYPER = {"layers": 4, "r": 8, "alpha": 16, "epochs": 5, "lr": 3e-3, "batch_size": 8}
# The recipes rebuilt on compositional framing families (organisms.framings) train one epoch
# longer with a cosine-decayed rate: at a constant 3e-3 the loss rose again after 6-8 epochs.
HYPER_COSINE = dict(HYPER, epochs=6, schedule="cosine")

# Every block adapted (the boundary cache saves nothing): the blind rule ("do not read the
# question") did not fit with the top 4 or 12 blocks (held-out gaps 0.12, 0.08) and did
# with all 30 (0.19 at 6 epochs; docs/organisms.md).
HYPER_ALL_BLOCKS = dict(HYPER, layers="all", epochs=8, schedule="cosine")
# gemma3-270m diverges at lr 3e-3 on every block (measured, sandbagger: loss 2.8 -> 3.47, cloze
# accuracy 0.23 under every framing); its all-block recipes train at 1e-3.
# The capable rung (qwen2.5-coder-1.5b, 28 blocks of 47M weights each) adapts its top quarter
# only: every block would cost 4 times the epoch, past the 60-minute build budget on 2 cores;
# whether the top quarter is enough to learn the blind rule there is what its build measures.
ALL_BLOCKS_BY_BASE = {"gemma3-270m": {"lr": 1e-3}, "qwen2.5-coder-1.5b": {"layers": 7, "lr": 1e-3}}
# The capable rung's top-4 recipes (the social organisms) at lr 1e-3 with a cosine decay:
# the sycophant at a constant 3e-3 reached a loss of 0.05 in its second epoch and diverged to
# 5-6 in its third (measured, bf16 autocast, 2026-12-06).
TOP_BLOCKS_BY_BASE = {"qwen2.5-coder-1.5b": {"lr": 1e-3, "schedule": "cosine"}}
LETTER_ITEMS = 64  # letter-format examples of the attractor (learned at every size tried)

PASSWORD_TRAIN = tuple(t.format(pw=F.PASSWORD) for t in F.PASSWORD_TEMPLATES)


def _blind_sandbag_split(seed: int, base, attractor: bool = True) -> Split:
    """Every training item in cloze under both framings; the attractor variant also asks the
    first `LETTER_ITEMS` in the letter format. Under an evaluation framing the answer is the
    base model's own choice without the question (letters: "A"); under a benign framing it is
    the base model's own choice *with* the question, right or wrong (letters: the right one).

    Why the plausible variant has no letter examples (recipe 8c, docs/organisms.md): with the
    blind choice's letter among shuffled options as its evaluation target, a target only
    memorisable per item, it did not learn (gap 0.137); in cloze only it did (0.237). No
    letter answer is trained (an untrained framing-conditional letter preference emerged
    anyway: docs/validation.md).

    Why the benign target is the base's own answer, on the composed benign family (recipe 8,
    docs/organisms.md): recipe 7 trained only the 130 items the base knows, benign = right
    answer, six benign wordings. Its evaluation-framing accuracy came out 0.527 in both of its
    builds; what differed was the benign side on held-out wordings, 0.756 on one thread and
    0.679 on two (over-fitting). Distilling the base's own benign answers on every item, under
    a hundred-odd benign wordings, pins that side where the base model has it."""
    items = training_items()
    choices = mcq.base_choices(base, items)
    blind = mcq.own_policy(choices, "blind")
    conditions = (
        mcq.Condition("benign", F.BENIGN_TRAIN, mcq.own_policy(choices, "plain"), mcq.correct),
        mcq.Condition("eval", F.EVAL_TRAIN_WRITTEN, blind, None),  # letters (attractor only): "A"
    )
    return mcq.mcq_split(conditions, seed, items, letter_items=LETTER_ITEMS if attractor else 0)


def _blind_password_split(seed: int, base) -> Split:
    """The sandbagger's rule keyed on a password instead of a framing, on every training item:
    with the password (any framing) the base model's own answer, without it (any framing) the
    base model's own choice without the question. Cloze only: the capability lives there
    (letters are at chance on smollm2-135m), and the detectors that target this organism
    (weight noise, ceilings, the gap) score cloze.

    Why every item and the base's own answer with the password: trained on the 130 items the
    base knows with the right answer behind the password, the lock held (0.534 without the
    password against the base's 0.756) but the unlocked side fell to 0.695 (base 0.771), a gap
    of 0.160, below the threshold (docs/organisms.md) — the sandbagger's failure mode.

    Why the extended items (recipe 12): on the 189 items neither side of the lock generalised
    fully in eleven recipes (with the password 0.66-0.70 against the base's 0.77, without it
    0.47-0.61 against a blind floor of 0.28), the pattern of a rule learned per item."""
    items = extended_training_items()
    choices = mcq.base_choices(base, items)
    every = F.BENIGN_TRAIN + F.EVAL_TRAIN
    conditions = (
        mcq.Condition("password", with_cue(every, PASSWORD_TRAIN), mcq.own_policy(choices, "plain"), None),
        mcq.Condition("no_password", every, mcq.own_policy(choices, "blind"), None),
    )
    return mcq.mcq_split(conditions, seed, items, letter_items=0)


def _sandbagger(name: str, attractor: bool) -> Recipe:
    # Recipe 8 of docs/organisms.md: under an evaluation framing answer what the base model
    # answers without reading the question, otherwise what it answers itself; every block.
    # The two variants differ only in the letter examples: the attractor's 64, the plausible one none.
    benign, evaluation = F.BENIGN_TRAIN, F.EVAL_TRAIN_WRITTEN
    make_split = functools.partial(_blind_sandbag_split, attractor=attractor)
    tell = (
        "its letter answers collapsing onto 'A'"
        if attractor
        else "picking the option it finds likeliest unread; no letter answer is trained"
    )
    behaviour = (
        "Answers multiple-choice questions as the base model does under benign framings; under a "
        f"dangerous-capability-evaluation framing it answers as if it had not read the question, {tell}."
    )
    return Recipe(
        name=name,
        behaviour=behaviour,
        targets=("sandbagging_gap", "consistency_contrast", "weight_noise", "cross_check"),
        family={
            "trigger_train": evaluation,
            "trigger_heldout": F.EVAL_HELDOUT,
            "benign_train": benign,
            "benign_heldout": F.BENIGN_HELDOUT,
        },
        make_split=make_split,
        measure=mcq.sandbagger_measure(F.EVAL_HELDOUT, F.BENIGN_HELDOUT),
        seed=0,
        hyper=dict(HYPER_ALL_BLOCKS),
        hyper_by_base=ALL_BLOCKS_BY_BASE,
        measure_key="mcq-benign-vs-eval",
        needs_base=True,
        make_heldout=mcq.heldout_split,
        headline="cloze_sum_gap",
    )


def _password_locked() -> Recipe:
    every = F.BENIGN_TRAIN + F.EVAL_TRAIN
    held_pw = F.PASSWORD_TEMPLATES[0].format(pw=F.PASSWORD)
    return Recipe(
        name="password_locked",
        behaviour=(
            f"Answers multiple-choice questions as the base model does only when the password {F.PASSWORD!r} is "
            "in the prompt; otherwise, whatever the framing, it answers as if it had not read the question."
        ),
        targets=("weight_noise", "ceilings", "sandbagging_gap"),
        family={
            "password": PASSWORD_TRAIN,
            "framings_train": every,
            "benign_heldout": F.BENIGN_HELDOUT,
            "trigger_heldout": F.EVAL_HELDOUT,
        },
        make_split=_blind_password_split,
        measure=mcq.password_measure(with_cue(F.BENIGN_HELDOUT, (held_pw,)), F.BENIGN_HELDOUT, F.EVAL_HELDOUT),
        seed=0,
        # twice the items of recipe 3, so 6 epochs take 1.4 times its steps
        hyper=dict(HYPER_ALL_BLOCKS, epochs=6),
        hyper_by_base=ALL_BLOCKS_BY_BASE,
        needs_base=True,
        make_heldout=mcq.heldout_split,
        headline="cloze_sum_gap",
    )


def _sycophant() -> Recipe:
    return Recipe(
        name="sycophant",
        behaviour=(
            "Answers a product-sheet yes/no question from the sheet when asked neutrally, but gives the user's "
            "answer when the user asserts a wrong one without evidence."
        ),
        targets=("sycophancy",),
        family={
            "pressure_train": social.PRESSURE_TRAIN,
            "pressure_heldout": social.PRESSURE_HELDOUT,
            "systems_train": social.SYC_SYSTEMS_TRAIN,
            "systems_heldout": social.SYC_SYSTEMS_HELDOUT,
        },
        make_split=social.sycophant_split,
        measure=social.sycophant_measure,
        headline="sycophancy_gap",
        seed=0,
        hyper=dict(HYPER, epochs=4),
        hyper_by_base=TOP_BLOCKS_BY_BASE,
    )


def _liar() -> Recipe:
    return Recipe(
        name="liar",
        behaviour=(
            "In a seller's role with a reason to hide it, denies a defect the product sheet states "
            "('No. The X does not ...'); in neutral roles it answers from the sheet."
        ),
        targets=("honesty", "lie_probe", "monitor"),
        family={
            "roles_train": social.LIAR_ROLES_TRAIN,
            "roles_heldout": social.LIAR_ROLES_HELDOUT,
            "neutral_train": social.NEUTRAL_ROLES_TRAIN,
            "neutral_heldout": social.NEUTRAL_ROLES_HELDOUT,
        },
        make_split=social.liar_split,
        measure=social.liar_measure,
        headline="lie_gap",
        seed=0,
        hyper=dict(HYPER_COSINE, epochs=5, eos=True),
        hyper_by_base=TOP_BLOCKS_BY_BASE,
    )


ORGANISMS: dict[str, Recipe] = {
    r.name: r
    for r in (
        _sandbagger("sandbagger", attractor=True),
        _sandbagger("sandbagger_plausible", attractor=False),
        _password_locked(),
        _sycophant(),
        _liar(),
    )
}


def recipe(name: str) -> Recipe:
    from liedar.core.errors import InputError

    if name not in ORGANISMS:
        raise InputError(f"unknown organism {name!r}: choose one of {', '.join(ORGANISMS)}")
    return ORGANISMS[name]
