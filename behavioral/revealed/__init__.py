"""Revealed-preference consistency of choices across menus.

Does a model have one stable ranking of actions, or does its choice between two actions
change when a third is shown? Import everything from here:

* ``MenuChoiceLog`` / ``StochasticChoiceLog`` — validated choice records (logs.py);
  off-menu answers are kept as ``PARSE_FAIL`` observations.
* ``check_sarp`` / ``check_warp`` — one strict ranking explains every choice? (sarp.py);
  ``validate_menu_sarp`` / ``validate_menu_warp`` are the same functions under prefgraph's names.
* ``houtman_maks`` — exact minimum number of observations to drop (houtman_maks.py).
* ``iia_reversals`` / ``iia_mechanisms`` / ``regularity_violations`` / ``mixed_menu_share``
  (menu_effects.py).
* ``rum_exact`` / ``rum_test`` — random utility, exactly and with a bootstrap p-value;
  ``rum_exact_law`` on a model's exact choice probabilities (rum.py).

Nothing here imports torch or `models`.
"""

from liedar.behavioral.revealed.houtman_maks import HoutmanMaksResult, houtman_maks, restores_sarp
from liedar.behavioral.revealed.logs import (
    PARSE_FAIL,
    ChoiceLog,
    MenuChoiceLog,
    ParseFail,
    StochasticChoiceLog,
    choice_log_from_dict,
)
from liedar.behavioral.revealed.menu_effects import (
    IIA_MECHANISMS,
    IIAReversal,
    RegularityViolation,
    iia_mechanisms,
    iia_reversals,
    mixed_menu_share,
    regularity_violations,
)
from liedar.behavioral.revealed.rum import RumExactResult, RumTestResult, rum_exact, rum_exact_law, rum_test
from liedar.behavioral.revealed.sarp import (
    SarpResult,
    WarpResult,
    WarpViolation,
    check_sarp,
    check_warp,
    validate_menu_sarp,
    validate_menu_warp,
)

__all__ = [
    "PARSE_FAIL",
    "ChoiceLog",
    "choice_log_from_dict",
    "HoutmanMaksResult",
    "IIAReversal",
    "MenuChoiceLog",
    "ParseFail",
    "RegularityViolation",
    "RumExactResult",
    "RumTestResult",
    "SarpResult",
    "StochasticChoiceLog",
    "WarpResult",
    "WarpViolation",
    "check_sarp",
    "check_warp",
    "houtman_maks",
    "iia_reversals",
    "iia_mechanisms",
    "IIA_MECHANISMS",
    "mixed_menu_share",
    "regularity_violations",
    "restores_sarp",
    "rum_exact",
    "rum_exact_law",
    "rum_test",
    "validate_menu_sarp",
    "validate_menu_warp",
]
