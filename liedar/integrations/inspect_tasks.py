"""A small multiple-choice task shipped with liedar, for end-to-end tests and examples.

``liedar_mcq`` takes items from liedar's own MCQ bank (so no download), one sample per
(item, wording) with ``metadata = {"item_id", "variant"}``: ``from-inspect`` builds paraphrase
trials from the variants and option-order trials from several runs whose ``shuffle`` seeds
differ (inspect stores only the shuffled order; liedar matches on sample id and choice text).

    inspect eval liedar/integrations/inspect_tasks.py@liedar_mcq --model liedar/smollm2-135m \\
        -T n_items=4 -T shuffle=1 -M probe=probe.npz
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice


def mcq_samples(n_items: int = 4, n_variants: int = 2, topics: str = "arithmetic,geography") -> list[Sample]:
    from liedar.behavioral.items.mcq import load_mcq_bank
    from liedar.behavioral.runners.common import LETTERS

    bank = load_mcq_bank(topics.split(",") if topics else None)
    out = []
    for item in bank[:n_items]:
        for v, wording in enumerate(item.variants[:n_variants]):
            out.append(
                Sample(
                    id=f"{item.item_id}::v{v}",
                    input=wording,
                    choices=list(item.options),
                    target=LETTERS[item.options.index(item.answer)],
                    metadata={"item_id": item.item_id, "variant": v},
                )
            )
    return out


@task
def liedar_mcq(n_items: int = 4, n_variants: int = 2, shuffle: int = -1, topics: str = "arithmetic,geography") -> Task:
    """``shuffle`` >= 0 shuffles each sample's choices with that seed (-1: canonical order)."""
    dataset = MemoryDataset(mcq_samples(n_items, n_variants, topics), name="liedar_mcq")
    if shuffle >= 0:
        dataset.shuffle_choices(seed=shuffle)
    return Task(dataset=dataset, solver=multiple_choice(), scorer=choice(), name="liedar_mcq")


@task
def liedar_open(n_items: int = 2) -> Task:
    """The same questions without choices (a task ``from-inspect`` must refuse: no choices)."""
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    samples = [Sample(id=s.id, input=s.input, target=str(s.target)) for s in mcq_samples(n_items, 1)]
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=includes(), name="liedar_open")
