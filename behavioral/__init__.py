"""Black-box deception instruments: they need only records of what a model answered.

This is the package's public face; import from here::

    from liedar.behavioral import ConsistencyDetector, OptionOrderTrial, ParaphraseTrial

Never imports torch, transformers, llama_cpp or `liedar.probes` at import time (checked by
tests/house/test_layers.py): the runners that drive a model import what they need inside
the function that needs it, so the instruments run on records from API-only models too.
Every instrument with a CLI subcommand and a demo step is in `liedar.behavioral.registry`.
"""

from liedar.behavioral.consistency import (
    ConditionTrials,
    ConsistencyContrast,
    ConsistencyDetector,
    ConsistencyResult,
    OptionOrderTrial,
    ParaphraseTrial,
)
from liedar.behavioral.elicitation import ElicitedCeiling, select_ceiling
from liedar.behavioral.episodes import score_episodes
from liedar.behavioral.honesty import belief_vs_assertion
from liedar.behavioral.instrument import DemoPlan, Flag, Instrument, InstrumentRun, ItemSource, sample_items
from liedar.behavioral.judges import validate_judge
from liedar.behavioral.negation import negation_consistency
from liedar.behavioral.noise import noise_curve
from liedar.behavioral.registry import get, instruments, register
from liedar.behavioral.sandbagging import sandbagging_gap
from liedar.behavioral.sycophancy import sycophancy
from liedar.core.stats import Estimate

__all__ = [
    "ConditionTrials",
    "ConsistencyContrast",
    "ConsistencyDetector",
    "ConsistencyResult",
    "DemoPlan",
    "ElicitedCeiling",
    "Estimate",
    "Flag",
    "Instrument",
    "InstrumentRun",
    "ItemSource",
    "OptionOrderTrial",
    "ParaphraseTrial",
    "belief_vs_assertion",
    "get",
    "instruments",
    "negation_consistency",
    "noise_curve",
    "register",
    "sample_items",
    "sandbagging_gap",
    "select_ceiling",
    "score_episodes",
    "sycophancy",
    "validate_judge",
]
