"""Model organisms: LoRA fine-tunes of the shipped models that deceive in a known way.

Why: a detector's recall and false-flag rate can only be measured against ground truth.
Each organism is trained from data the project generates (never the items the detectors
are evaluated on, never the detectors' framings), cached by (base model fingerprint,
recipe hash), and carries its *measured* behaviour on held-out items; one that did not
learn its behaviour says so (``learned=False``) and must not be used as ground truth.

    >>> from liedar import organisms
    >>> org = organisms.build("smollm2-135m", "sandbagger", threads=1)
    >>> org.ground_truth["cloze_sum_gap"]["value"], org.learned
    >>> lm = liedar.models.load("smollm2-135m:sandbagger")   # the adapter merged
"""

from __future__ import annotations

from liedar.organisms.build import Organism, build, built, get
from liedar.organisms.catalog import ORGANISMS
from liedar.organisms.recipe import TARGETS, Measured, Recipe, Split

__all__ = ["ORGANISMS", "TARGETS", "Measured", "Organism", "Recipe", "Split", "build", "built", "get"]
