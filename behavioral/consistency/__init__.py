"""Consistency: does a model answer the same question the same way when only its form changes?

One instrument, one home. The face is what a user of records needs::

    from liedar.behavioral.consistency import ConsistencyDetector, OptionOrderTrial, ParaphraseTrial

Inside, each module has one job and imports only downward: ``records`` (trial records and
the shared statistics) <- ``contrast`` (test prompt vs an honest baseline) <- ``detector``
(the single-condition analyses) <- ``section`` / ``summary`` (report rows and tables) <-
``runner`` (asks a model; the CLI instrument). ``sim`` simulates populations for calibration.
"""

from liedar.behavioral.consistency.contrast import ConditionTrials, ConsistencyContrast
from liedar.behavioral.consistency.detector import ConsistencyDetector
from liedar.behavioral.consistency.records import ConsistencyResult, OptionOrderTrial, ParaphraseTrial

__all__ = [
    "ConditionTrials",
    "ConsistencyContrast",
    "ConsistencyDetector",
    "ConsistencyResult",
    "OptionOrderTrial",
    "ParaphraseTrial",
]
