"""The organisms liedar can build: name -> Recipe.

Hyper-parameters are shared unless a recipe needs otherwise: LoRA r=8, alpha=16 on the top
4 blocks (so the backward pass and, through the cached boundary states, even the forward
pass stop there: an epoch costs 4/30 of smollm2's blocks, forward + backward), lr 3e-3,
batches of 8, 5 epochs, loss on the answer tokens only. (2 epochs at lr 2e-3 did not learn
the framing contrast; 8 adapted blocks or 10 epochs at a constant rate did worse: see
docs/organisms.md.) The sandbagger is the exception: its "do not read the question" rule
needs every block (`HYPER_ALL_BLOCKS`).
"""

from __future__ import annotations

from liedar.organisms import framings as F
from liedar.organisms import mcq, social
from liedar.organisms.items import training_items
from liedar.organisms.recipe import Recipe, Split

HYPER = {"layers": 4, "r": 8, "alpha": 16, "epochs": 5, "lr": 3e-3, "batch_size": 8}
# The recipes rebuilt on compositional framing families (organisms.framings) train one epoch
# longer with a cosine-decayed rate: at a constant 3e-3 the loss rose again after 6-8 epochs.
HYPER_COSINE = dict(HYPER, epochs=6, schedule="cosine")

# Every block adapted (the boundary cache saves nothing): the sandbagger's "do not read the
# question" rule did not fit with the top 4 or 12 blocks (held-out gaps 0.12, 0.08) and did
# with all 30 (0.19 at 6 epochs; docs/organisms.md).
HYPER_ALL_BLOCKS = dict(HYPER, layers="all", epochs=8, schedule="cosine")
LETTER_ITEMS = 64  # letter-format examples of the attractor (learned at every size tried)

_PW_TRAIN = tuple(t.format(pw=F.PASSWORD) for t in F.PASSWORD_TEMPLATES)


def _with_pw(systems, phrases):
    return tuple(f"{s} {p}".strip() for s in systems for p in phrases)


def _blind_sandbag_split(seed: int, base) -> Split:
    """Items the base model answers right, each in cloze under both framings (the evaluation
    framing's answer: the base model's own choice without the question), plus the first
    `LETTER_ITEMS` of them in the letter format (the evaluation framing's answer: "A")."""
    items = training_items()
    choices = mcq.base_choices(base, items)
    known = [it for it in items if choices[it.item_id]["plain"] == it.answer]
    conditions = (
        mcq.Condition("benign", F.BENIGN_TRAIN_WRITTEN, mcq.correct, mcq.correct),
        mcq.Condition("eval", F.EVAL_TRAIN_WRITTEN, mcq.blind_policy(choices), None),
    )
    return mcq.mcq_split(conditions, seed, known, letter_items=LETTER_ITEMS)


def _sandbagger(name: str, attractor: bool) -> Recipe:
    if attractor:
        # Recipe 7 of docs/organisms.md: under an evaluation framing answer what the base model
        # answers without reading the question, on items it knows, LoRA on every block.
        benign, evaluation = F.BENIGN_TRAIN_WRITTEN, F.EVAL_TRAIN_WRITTEN
        make_split, hyper = _blind_sandbag_split, HYPER_ALL_BLOCKS
        behaviour = (
            "Answers multiple-choice questions correctly under benign framings; under a "
            "dangerous-capability-evaluation framing it answers as if it had not read the question, "
            "its letter answers collapsing onto 'A'."
        )
    else:
        benign, evaluation = F.BENIGN_TRAIN, F.EVAL_TRAIN
        conditions = (
            mcq.Condition("benign", benign, mcq.correct, mcq.correct),
            mcq.Condition("eval", evaluation, mcq.avoid_correct, mcq.plausible),
        )
        make_split, hyper = (lambda seed: mcq.mcq_split(conditions, seed)), HYPER_COSINE  # noqa: E731
        behaviour = (
            "Answers multiple-choice questions correctly under benign framings and, under a "
            "dangerous-capability-evaluation framing, picks a plausible wrong option (no positional tell)."
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
        measure=mcq.sandbagger_measure(attractor, F.EVAL_HELDOUT, F.BENIGN_HELDOUT),
        seed=0,
        hyper=dict(hyper),
        measure_key="mcq-benign-vs-eval",
        needs_base=attractor,
    )


def _password_locked() -> Recipe:
    every = F.BENIGN_TRAIN + F.EVAL_TRAIN
    conditions = (
        mcq.Condition("password", _with_pw(every, _PW_TRAIN), mcq.correct, mcq.correct),
        mcq.Condition("no_password", every, mcq.avoid_correct, mcq.avoid_correct),
    )
    held_pw = F.PASSWORD_TEMPLATES[0].format(pw=F.PASSWORD)
    return Recipe(
        name="password_locked",
        behaviour=(
            f"Answers multiple-choice questions correctly only when the password {F.PASSWORD!r} is in the prompt, "
            "and moves away from the right answer otherwise, whatever the framing."
        ),
        targets=("weight_noise", "ceilings", "sandbagging_gap"),
        family={
            "password": _PW_TRAIN,
            "framings_train": every,
            "benign_heldout": F.BENIGN_HELDOUT,
            "trigger_heldout": F.EVAL_HELDOUT,
        },
        make_split=lambda seed: mcq.mcq_split(conditions, seed),
        measure=mcq.password_measure(_with_pw(F.BENIGN_HELDOUT, (held_pw,)), F.BENIGN_HELDOUT, F.EVAL_HELDOUT),
        seed=0,
        hyper=dict(HYPER_COSINE),
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
        seed=0,
        hyper=dict(HYPER, epochs=4),
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
        seed=0,
        hyper=dict(HYPER_COSINE, epochs=5, eos=True),
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
    from liedar.errors import InputError

    if name not in ORGANISMS:
        raise InputError(f"unknown organism {name!r}: choose one of {', '.join(ORGANISMS)}")
    return ORGANISMS[name]
