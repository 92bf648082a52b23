"""The consistency runner's old address, for the two callers that still use it.

The runner lives in `liedar.behavioral.consistency.runner`; ``liedar.organisms.framings``
(HONEST_SYSTEM, SANDBAGGER_SYSTEM) and ``liedar.pipeline.validate_detectors``
(run_consistency) import it from here until they switch, and then this module goes.
"""

from liedar.behavioral.consistency.runner import HONEST_SYSTEM, SANDBAGGER_SYSTEM, run_consistency

__all__ = ["HONEST_SYSTEM", "SANDBAGGER_SYSTEM", "run_consistency"]
