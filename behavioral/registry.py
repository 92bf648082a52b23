"""The instrument registry: every behavioural instrument liedar ships, one line each.

`liedar behavioral NAME` (the CLI), `liedar demo` (its behavioural steps) and the report
iterate this registry, so adding an instrument is its module (an `Instrument` subclass),
its items, its tests, and one line in ``BUILTIN`` below (docs/contributing.md walks
through it). A third-party instrument is added at run time with `register`.
"""

from __future__ import annotations

from liedar.behavioral.consistency.runner import Consistency
from liedar.behavioral.instrument import Instrument
from liedar.behavioral.record_instruments import EpisodeScoring, JudgeAgreement
from liedar.behavioral.runners.contamination import Contamination
from liedar.behavioral.runners.honesty import BeliefVsAssertion
from liedar.behavioral.runners.honesty_choice import HonestyChoice
from liedar.behavioral.runners.menus_instrument import MenuStudy
from liedar.behavioral.runners.negation import NegationConsistency
from liedar.behavioral.runners.noise import WeightNoise
from liedar.behavioral.runners.observer import ObserverEffect
from liedar.behavioral.runners.sandbagging import SandbaggingGap
from liedar.behavioral.runners.sycophancy import Sycophancy
from liedar.behavioral.runners.sycophancy_choice import ChoiceSycophancy
from liedar.behavioral.runners.verbalized import VerbalizedAwareness
from liedar.core.errors import InputError

BUILTIN: tuple[Instrument, ...] = (
    Consistency(),
    MenuStudy(),
    SandbaggingGap(),
    WeightNoise(),
    Sycophancy(),
    ChoiceSycophancy(),
    NegationConsistency(),
    BeliefVsAssertion(),
    HonestyChoice(),
    EpisodeScoring(),
    JudgeAgreement(),
    ObserverEffect(),
    Contamination(),
    VerbalizedAwareness(),
)

_REGISTRY: dict[str, Instrument] = {i.name: i for i in BUILTIN}


def register(instrument: Instrument) -> Instrument:
    """Add an instrument (its name must be new); returns it, so it works as a decorator on
    an instance factory too.

    A registered instrument gets a ``liedar behavioral NAME`` subcommand and a place in the
    report, like the built-ins. Registering the same object twice is allowed.

    Parameters
    ----------
    instrument : Instrument
        An instance of an `Instrument` subclass.

    Returns
    -------
    Instrument
        The same instrument.

    Raises
    ------
    InputError
        When another instrument already has its name.
    """
    if instrument.name in _REGISTRY and _REGISTRY[instrument.name] is not instrument:
        raise InputError(f"an instrument named {instrument.name!r} is already registered: choose another name")
    _REGISTRY[instrument.name] = instrument
    return instrument


def instruments() -> dict[str, Instrument]:
    """Every registered instrument by name, built-ins first, in CLI order.

    Returns
    -------
    dict of str to Instrument
        A copy: changing it does not change the registry.

    Examples
    --------
    >>> "consistency" in instruments()
    True
    """
    return dict(_REGISTRY)


def get(name: str) -> Instrument:
    """The registered instrument named ``name`` (its CLI subcommand).

    Parameters
    ----------
    name : str
        E.g. ``"consistency"``, ``"sycophancy"``, ``"gap"``.

    Returns
    -------
    Instrument
        The instrument.

    Raises
    ------
    InputError
        When no instrument has that name (the message lists them).

    Examples
    --------
    >>> get("consistency").title
    'sandbagging detector: answer consistency across option shuffles and question rewordings'
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InputError(f"no instrument named {name!r}: use one of {', '.join(_REGISTRY)}") from None
