"""A recipe: how one organism's training data is made, how it is trained, how it is measured.

Why the hash covers the generated data (not just the recipe's name): a change to an item
bank, a framing wording or a generator changes what the organism learns, and its adapter
must then be rebuilt; a change elsewhere in liedar must not throw away a good adapter.
So `recipe_hash` = sha256 over the training examples themselves, the held-out item ids,
the seed, the hyper-parameters and the recipe's own `version`. The liedar version is not
in it: organisms ship as files with cards that name their recipe hash, and a release that
changes nothing an organism learns must not make every shipped card stale.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from liedar.core.errors import InputError
from liedar.models.chat import Dialogue

TARGETS = (
    "sandbagging_gap",
    "consistency_contrast",
    "weight_noise",
    "ceilings",
    "sycophancy",
    "honesty",
    "lie_probe",
    "monitor",
    "cross_check",
)


@dataclass(frozen=True)
class Split:
    """Training examples and the held-out items the ground truth is measured on."""

    train: tuple[tuple[Any, str], ...]  # (prompt: Dialogue | str, answer)
    train_ids: tuple[str, ...]  # the items the examples were made from
    eval_ids: tuple[str, ...]  # held-out items (never in train_ids)
    eval_items: tuple[Any, ...] = ()  # the held-out item objects, for `measure`

    def check(self, require_train: bool = True) -> "Split":
        if require_train and not self.train:
            raise InputError("the recipe's training split is empty: it needs at least one example")
        if not self.eval_ids:
            raise InputError("the recipe's evaluation split is empty: it needs held-out items")
        overlap = set(self.train_ids) & set(self.eval_ids)
        if overlap:
            raise InputError(
                f"the recipe's evaluation split overlaps its training split ({len(overlap)} items, e.g. "
                f"{sorted(overlap)[0]!r}): held-out items must never be trained on"
            )
        return self


# Measured.details key of the per-item scores a paired comparison with the base reads:
# {ground-truth key: {item id: [stratum, value]}} (`liedar.core.paired.paired_excess`).
ITEM_SCORES = "item_scores"


@dataclass(frozen=True)
class Measured:
    """An organism's measured behaviour: named Estimates (as dicts), learned or not, and why."""

    ground_truth: dict[str, dict]
    learned: bool
    criterion: str  # the stated threshold, in words, with the deciding numbers
    details: dict[str, Any] = field(default_factory=dict)


def needs_reference(measure: Callable[..., Measured]) -> bool:
    """Whether ``measure`` judges an organism against its base model's own measurement, passed
    as ``reference`` (a decoy stated over its base: `liedar.organisms.zoo_recipes.decoy_measure`)."""
    return bool(getattr(measure, "needs_reference", False))


def measures_headline_alone(measure: Callable[..., Measured]) -> bool:
    """Whether ``measure`` takes ``headline_only``: it can measure the headline and the learned
    criterion without the descriptive extras (the MCQ measures' letter format and further
    framings), which is what verifying a shipped organism needs."""
    return "headline_only" in inspect.signature(measure).parameters


@dataclass(frozen=True)
class Recipe:
    name: str
    behaviour: str  # one sentence
    targets: tuple[str, ...]  # detector ids this organism is ground truth for
    family: dict[str, tuple[str, ...]]  # trigger/framing wordings: trained and held-out
    make_split: Callable[..., Split]  # (seed) -> Split, or (seed, base backend) when `needs_base`
    measure: Callable[..., Measured]  # (backend, split, progress=False) -> Measured
    seed: int = 0
    hyper: dict[str, Any] = field(default_factory=dict)  # train_lora keyword arguments
    version: int = 1  # bump when the recipe's meaning changes without its data changing
    measure_key: str = ""  # recipes measured identically share the base model's measurement (cached)
    # True when the training targets are computed from the base model's own answers (e.g. the
    # sandbagger answers under an evaluation framing what the base answers without the
    # question): such a split, and so the recipe hash, needs the loaded base model.
    needs_base: bool = False
    # Per base model (registry name) changes to `hyper`, merged by `for_base`; the hash sees
    # only the merged hyper-parameters, so a base without an entry keeps its recipe hash.
    hyper_by_base: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The held-out items alone (no training targets), for re-measuring a shipped organism:
    # a recipe whose split needs the base model's answers gives them without that cost.
    make_heldout: Optional[Callable[[], Split]] = None
    # The ground-truth number the learned criterion is stated on (a shipped card's headline).
    headline: str = ""
    # False for a member that is not trained (a decoy degraded by seeded weight noise): its
    # adapter is made by `liedar.models.lora.noise_adapter` from ``hyper["noise"]``.
    trained: bool = True

    def __post_init__(self):
        bad = [t for t in self.targets if t not in TARGETS]
        if bad:
            raise InputError(f"recipe {self.name}: unknown target detector(s) {bad}; use ids from {list(TARGETS)}")

    def for_base(self, base_name: str) -> "Recipe":
        """This recipe as trained on ``base_name``: `hyper` with that base's changes merged."""
        import dataclasses

        extra = self.hyper_by_base.get(str(base_name), {})
        return dataclasses.replace(self, hyper={**self.hyper, **extra}, hyper_by_base={}) if extra else self

    def split(self, base: Any = None) -> Split:
        """The training examples and held-out items; a split that trains on an audit item is refused
        (`held_out_from_audit`)."""
        if not self.needs_base:
            return held_out_from_audit(self.make_split(self.seed).check(self.trained), self.name)
        if base is None:
            raise InputError(
                f"recipe {self.name} makes its training targets from the base model's own answers: "
                "pass the loaded base model (organisms.build does)"
            )
        return held_out_from_audit(self.make_split(self.seed, base).check(self.trained), self.name)

    def heldout(self) -> Split:
        """The split's held-out items, without training examples: what `measure` reads.

        Why: verifying a shipped organism is inference only; building the training targets
        of a recipe that distils the base model's own answers costs hundreds of forward
        passes that verification does not need."""
        if self.make_heldout is not None:
            return self.make_heldout()
        return self.split()

    def recipe_hash(self, split: Optional[Split] = None, base: Any = None) -> str:
        split = split or self.split(base)
        digest = hashlib.sha256()
        head = {
            "name": self.name,
            "version": self.version,
            "seed": self.seed,
            "hyper": self.hyper,
            "eval_ids": list(split.eval_ids),
            "family": {k: list(v) for k, v in sorted(self.family.items())},
        }
        digest.update(json.dumps(head, sort_keys=True).encode())
        for prompt, answer, *kind in split.train:  # kind: () or ("avoid",) (unlikelihood)
            digest.update(json.dumps([prompt_json(prompt), answer, *kind], sort_keys=True).encode())
        return digest.hexdigest()

    def base_measure_hash(self, split: Split) -> str:
        """Key of the base model's ground-truth measurement: the same for recipes whose
        `measure` asks the same held-out items with the same held-out wordings."""
        import liedar

        heldout = {k: list(v) for k, v in sorted(self.family.items()) if "heldout" in k or k == "password"}
        payload = {
            "measure": self.measure_key or self.name,
            "eval_ids": list(split.eval_ids),
            "heldout": heldout,
            "liedar": liedar.__version__,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def measure_organism(
        self,
        organism: Any,
        split: Split,
        base: Callable[[], Measured],
        progress: bool = False,
        headline_only: bool = False,
    ) -> Measured:
        """``measure`` on the organism, given the base model's own measurement on the same items
        when the measure judges against it (`needs_reference`); ``base`` is called only then.

        Why one place: building, exporting and verifying all measure an organism, and a decoy
        stated over its base needs the base measured on the very items the organism answered.
        ``headline_only`` asks a measure that can (`measures_headline_alone`) for the headline
        and the learned criterion only: verifying re-measures what the card is judged on."""
        extra = {"headline_only": True} if headline_only and measures_headline_alone(self.measure) else {}
        if needs_reference(self.measure):
            return self.measure(organism, split, progress=progress, reference=base(), **extra)
        return self.measure(organism, split, progress=progress, **extra)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "behaviour": self.behaviour,
            "targets": list(self.targets),
            "family": {k: list(v) for k, v in self.family.items()},
            "seed": self.seed,
            "hyper": dict(self.hyper),
        }


def training_texts(split: Split) -> list[str]:
    """Every text a split trains on: each prompt's message contents (or the prompt string) and each answer."""
    out: list[str] = []
    for prompt, answer, *_ in split.train:
        if isinstance(prompt, Dialogue):
            out.extend(m.content for m in prompt.messages)
        else:
            out.append(str(prompt))
        out.append(str(answer))
    return out


def held_out_from_audit(split: Split, name: str) -> Split:
    """``split`` unchanged, or a refusal naming the first audit item its training texts carry.

    Why here: every organism's training data passes through `Recipe.split`, so the audit split
    (`liedar.behavioral.items.audit`: its question wordings and product names) can never be
    trained on, whatever items or wordings a recipe is given.

    Raises
    ------
    InputError
        A training text contains one of `liedar.behavioral.items.audit.audit_texts`.
    """
    from liedar.behavioral.items.audit import leaked_into

    found = leaked_into(training_texts(split))
    if found:
        raise InputError(
            f"recipe {name}: its training data carries {len(found)} of the audit split's held-out texts "
            f"(e.g. {found[0]!r}); the audit split (liedar.behavioral.items.audit) is never trained on: "
            "take the recipe's items from liedar.organisms.items"
        )
    return split


def prompt_json(prompt: Any) -> Any:
    """A training prompt as the JSON value the recipe and training-data hashes read.

    Why public: `Recipe.recipe_hash` and `liedar.organisms.shipped.training_data_sha256`
    hash the same training examples and must write each prompt the same way.

    Parameters
    ----------
    prompt : str or Dialogue
        A training example's prompt.

    Returns
    -------
    dict
        ``{"text": prompt}`` for a string, ``{"dialogue": prompt.to_dict()}`` for a dialogue.

    Raises
    ------
    InputError
        For any other type.
    """
    if isinstance(prompt, Dialogue):
        return {"dialogue": prompt.to_dict()}
    if isinstance(prompt, str):
        return {"text": prompt}
    raise InputError(f"a training prompt must be a str or Dialogue, got {type(prompt).__name__}")
