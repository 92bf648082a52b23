"""The contract every behavioural instrument meets, and the registry the CLI, the demo,
`liedar validate` and the report iterate.

Why a contract: before it, adding one instrument touched seven files (an if/elif in the
CLI, a demo step, a report adapter that routed warnings by matching their text, ...), and
the CLI and the demo sampled items differently. Now an instrument is one class with:

* ``name`` (the CLI subcommand ``liedar behavioral NAME``, the demo step, the report's
  instrument id) and ``title`` (one line of help);
* ``flags`` (`Flag`: the flag, its value check, default and help, and the option of ``run``
  it sets), from which ``add_arguments`` / ``options`` are derived: its own flags, checked at
  parse time, with the cross-flag checks ``options`` adds before any model loads (the shared
  ones — model, backend, threads, ``--limit``, ``--interval``, ``--seed``, ``--output`` — are
  the CLI's);
* ``source`` (an `ItemSource`: its bank, the strata a draw is spread over, what a drawn entry
  becomes), from which ``items(limit, seed)`` is derived: the one sampling rule the CLI and
  the demo share; an instrument whose draw is its own logic overrides ``items`` instead;
* ``run(backend, items, ...)`` → `InstrumentRun` (result, per-item records, caveats);
* ``section(run)`` → the report's rows (`liedar.core.results.Section`), with each `Caveat` put on
  the rows its *code* names (``caveat_rows``), never routed by its text;
* ``demo``: the sizes the demo uses (``DemoPlan``), or None to leave it out of the demo.

It follows scikit-learn's estimator contract in spirit (configuration in the constructor
and in ``options``, work in ``run``) and inspect_ai's registry in use (instruments are
looked up by name). The registry itself is `liedar.behavioral.registry` (built-ins listed
there, one line each; a third-party instrument is added with its ``register``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Optional, Sequence

import numpy as np

from liedar.core.errors import InputError
from liedar.core.results import Caveat, Section
from liedar.models.backend import Backend

LOCAL_BACKENDS = ("transformers", "llamacpp")


@dataclass(frozen=True)
class DemoPlan:
    """What the demo runs: ``full`` and ``quick`` options (``limit`` = items, the rest are
    keyword options of ``run``); ``quick=None`` leaves the instrument out of ``--quick``
    with ``quick_reason`` shown on the page.

    Parameters
    ----------
    full : mapping of str to Any
        Options of the full demo (``limit`` = items; the rest go to ``run``).
    quick : mapping of str to Any, optional
        Options of ``liedar demo --quick``; None leaves the instrument out of it.
    quick_reason : str, optional
        Why it is left out of the quick demo, shown on the page.
    order : int, default 100
        Position among the demo's behavioural steps.

    Examples
    --------
    >>> DemoPlan(full={"limit": 40}, quick={"limit": 8}).quick
    {'limit': 8}
    """

    full: Mapping[str, Any]
    quick: Optional[Mapping[str, Any]] = None
    quick_reason: str = ""
    order: int = 100  # position among the demo's behavioural steps


@dataclass
class InstrumentRun:
    """One run of an instrument: its result object (with ``to_dict``), the per-item records
    it was computed from, the caveats that qualify it, and the options it ran with.

    Keeping the records with the result is what lets a run be re-scored or audited without
    asking the model again.

    Parameters
    ----------
    instrument : str
        The instrument's name.
    result : object
        Its result (anything with ``to_dict``).
    records : list, optional
        The per-item records the result was computed from.
    caveats : tuple of Caveat, optional
        What qualifies the result.
    options : dict, optional
        The options it ran with.
    """

    instrument: str
    result: Any
    records: list[Any] = field(default_factory=list)
    caveats: tuple[Caveat, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)

    # stays hand-written: records and options are of any type, written through json_safe
    def to_dict(self) -> dict[str, Any]:
        """The run as a JSON-ready dictionary (what ``--output`` writes).

        Returns
        -------
        dict
            ``instrument``, ``options``, ``result``, ``records`` and ``caveats``.
        """
        from liedar.core._util.atomic import json_safe

        return {
            "instrument": self.instrument,
            "options": json_safe(self.options),
            "result": self.result.to_dict(),
            "records": [r.to_dict() if hasattr(r, "to_dict") else json_safe(r) for r in self.records],
            "caveats": [c.to_dict() for c in self.caveats],
        }


@dataclass(frozen=True)
class Flag:
    """One command-line flag of an instrument and the option of its `Instrument.items` and
    `Instrument.run` that the flag sets.

    Why a declaration: every instrument wrote the same ``parser.add_argument`` calls and read
    the values back one by one into its options; from the declaration the CLI gets both (as
    inspect_ai's task parameters become ``-T key=value``), and a flag two instruments share
    (``--families``) is declared once.

    Parameters
    ----------
    flag : str
        The flag, e.g. ``"--max-tokens"`` (argparse's destination is derived from it).
    help : str
        Its line in ``--help``.
    key : str, optional
        The option it sets (a keyword of ``items`` and ``run``); the flag's destination
        (``"--max-tokens"`` -> ``"max_tokens"``) when not given.
    default : Any, optional
        The value when the flag is not given.
    type : callable, optional
        Parses and checks the text at parse time (`liedar.core._util.argtypes`; a bad value is one
        usage line, exit 2).
    choices : sequence, optional
        The values allowed.
    required : bool, default False
        The flag must be given.
    switch : bool, default False
        A flag without a value (True when given).
    convert : callable, optional
        The parsed value -> the option's value, when they differ (e.g. ``--seeds 3`` -> seeds
        ``(0, 1, 2)``); an `InputError` it raises is the CLI's one-line error.

    Examples
    --------
    >>> import argparse
    >>> flag = Flag("--seeds", "noise seeds per level", default=3, type=int, convert=lambda n: tuple(range(n)))
    >>> parser = argparse.ArgumentParser()
    >>> flag.add_to(parser)
    >>> flag.key, flag.read(parser.parse_args(["--seeds", "2"]))
    ('seeds', (0, 1))
    """

    flag: str
    help: str
    key: str = ""
    default: Any = None
    type: Optional[Callable[[str], Any]] = None
    choices: Optional[Sequence[Any]] = None
    required: bool = False
    switch: bool = False
    convert: Optional[Callable[[Any], Any]] = None

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.dest)

    @property
    def dest(self) -> str:
        """argparse's name for the parsed value (``"--max-tokens"`` -> ``"max_tokens"``)."""
        return self.flag.lstrip("-").replace("-", "_")

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """Add the flag to an instrument's subcommand parser.

        Parameters
        ----------
        parser : argparse.ArgumentParser
            The subcommand's parser.
        """
        if self.switch:
            parser.add_argument(self.flag, action="store_true", help=self.help)
            return
        spec: dict[str, Any] = {"default": self.default, "help": self.help}
        if self.type is not None:
            spec["type"] = self.type
        if self.choices is not None:
            spec["choices"] = self.choices
        if self.required:
            spec["required"] = True
        parser.add_argument(self.flag, **spec)

    def read(self, args: argparse.Namespace) -> Any:
        """The option's value from the parsed command line.

        Parameters
        ----------
        args : argparse.Namespace
            The parsed command line.

        Returns
        -------
        Any
            The parsed value, through ``convert`` when there is one.

        Raises
        ------
        InputError
            From ``convert``, when the value is refused.
        """
        value = getattr(args, self.dest)
        return value if self.convert is None else self.convert(value)


@dataclass(frozen=True)
class ItemSource:
    """Where an instrument's items come from and how ``limit`` of them are drawn: its bank, the
    strata the draw is spread over (`sample_items`) and what a drawn bank entry becomes.

    Why a declaration: most instruments draw their items the same way (a stratified, seeded
    sample of a bank, in bank order), and written out in each of them the same call was
    repeated with only the bank and the stratum changed. An instrument that sets ``source``
    gets `Instrument.items` from it, so what it writes is what differs.

    Parameters
    ----------
    bank : callable
        Returns the bank; called with the options named in ``options``.
    group : callable, optional
        ``group(entry)`` -> the stratum a draw is spread over; one stratum when None.
    options : tuple of str, default ()
        The instrument's options (from `Instrument.options`) that choose the bank, passed to
        ``bank`` by name when given (e.g. contamination's ``bank``).
    per_entry : int, default 1
        Items one bank entry becomes: ``limit`` counts items, so ``limit // per_entry`` entries
        (at least one) are drawn (sycophancy asks each claim with both suggestions).
    build : callable, optional
        ``build(entries, seed)`` -> the items the drawn entries become (e.g. each MCQ item with
        a seeded wrong suggestion); the entries themselves when None.

    Examples
    --------
    >>> bank = [("geo", i) for i in range(6)] + [("math", i) for i in range(6)]
    >>> source = ItemSource(lambda: bank, group=lambda entry: entry[0])
    >>> sorted(topic for topic, _ in source.draw(4, seed=0))
    ['geo', 'geo', 'math', 'math']
    """

    bank: Callable[..., Sequence[Any]]
    group: Optional[Callable[[Any], Any]] = None
    options: tuple[str, ...] = ()
    per_entry: int = 1
    build: Optional[Callable[[list[Any], int], list[Any]]] = None

    def draw(self, limit: Optional[int], seed: int, options: Optional[Mapping[str, Any]] = None) -> list[Any]:
        """``limit`` items (all when None) drawn by `sample_items` from the bank, in bank order.

        Parameters
        ----------
        limit : int or None
            How many items; all when None.
        seed : int
            Seed of the draw (and of ``build``).
        options : mapping, optional
            The instrument's options; those named in ``options`` choose the bank.

        Returns
        -------
        list
            The items.
        """
        given = options or {}
        bank = self.bank(**{k: given[k] for k in self.options if k in given})
        n = limit if limit is None or self.per_entry == 1 else max(1, limit // self.per_entry)
        entries = sample_items(bank, n, seed, group=self.group)
        return entries if self.build is None else self.build(entries, seed)


class Instrument:
    """Base class of behavioural instruments (see the module docstring for the contract).

    Subclass it, set ``name``, ``title`` and ``source`` (or override `items`), implement `run`
    and `section`, and add it with `liedar.behavioral.register`: the CLI (``liedar behavioral
    NAME``), the demo and the report then pick it up, and draw items the same way.

    Examples
    --------
    >>> from liedar.behavioral import get
    >>> get("consistency").name
    'consistency'
    """

    name: ClassVar[str]
    title: ClassVar[str]
    needs_model: ClassVar[bool] = True  # False: runs on record files (episodes, judge labels)
    default_limit: ClassVar[Optional[int]] = None  # items asked when --limit is not given (None: the whole bank)
    limit_flag: ClassVar[str] = "--limit"  # the flag that sets ``limit`` (named in the note when it passes the bank)
    source: ClassVar[Optional[ItemSource]] = None  # where `items` draws from (None: the instrument overrides `items`)
    flags: ClassVar[tuple[Flag, ...]] = ()  # its own flags; `add_arguments` and `options` are derived from them
    backends: ClassVar[tuple[str, ...]] = LOCAL_BACKENDS  # local backends it can load
    requires: ClassVar[frozenset[str]] = frozenset({"score_options"})  # backend capabilities it uses
    caveat_rows: ClassVar[Mapping[str, Sequence[str]]] = {}  # caveat code -> row ids ("*": every measure)
    demo: ClassVar[Optional[DemoPlan]] = None
    version: ClassVar[int] = 1  # bump when results change: the demo then recomputes saved steps

    # ---- command line ------------------------------------------------------------------

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this instrument's own flags, as ``flags`` declares them.

        Parameters
        ----------
        parser : argparse.ArgumentParser
            The instrument's subcommand parser.
        """
        for flag in self.flags:
            flag.add_to(parser)

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        """Keyword options of `run` from parsed flags, one per declared flag; an instrument
        adds its cross-flag checks here (raising `InputError`, before the model loads).

        Parameters
        ----------
        args : argparse.Namespace
            The parsed command line.

        Returns
        -------
        dict
            Keyword options for `items` and `run`.

        Raises
        ------
        InputError
            When a flag's ``convert`` refuses its value.
        """
        return {flag.key: flag.read(args) for flag in self.flags}

    def inputs(self, options: dict[str, Any]) -> list[Any]:
        """Files this run reads (an ``--output`` may never overwrite one of them).

        Parameters
        ----------
        options : dict
            The options from `options`.

        Returns
        -------
        list
            Paths read.
        """
        return []

    # ---- work --------------------------------------------------------------------------

    def items(self, *, limit: Optional[int] = None, seed: int = 0, **options: Any) -> list[Any]:
        """The items to ask, drawn from ``source``: ``default_limit`` of them when ``limit`` is
        None (all of the bank when that is None too); ``options`` are those of `options` (e.g.
        which bank), so the CLI and the demo draw items the same way.

        Parameters
        ----------
        limit : int, optional
            How many items; ``default_limit`` when None.
        seed : int, default 0
            Seed of the draw (`sample_items`).
        **options
            Options from `options`.

        Returns
        -------
        list
            The items, in bank order.

        Raises
        ------
        NotImplementedError
            When the instrument declares no ``source`` and does not override `items`.
        """
        if self.source is None:
            raise NotImplementedError(f"{type(self).__name__} has no item source: set `source` or override `items`")
        return self.source.draw(self.default_limit if limit is None else limit, seed, options)

    def run(
        self,
        backend: Backend,
        items: Sequence[Any],
        *,
        interval: str,
        seed: int = 0,
        progress: bool = False,
        **options: Any,
    ) -> InstrumentRun:
        """Ask the model every item and compute the result.

        Parameters
        ----------
        backend : Backend
            The loaded model (``None`` for instruments with ``needs_model = False``).
        items : sequence
            Items from `items`.
        interval : str
            Interval method of the rates (`liedar.core.stats.proportion`).
        seed : int, default 0
            Seed of any randomness in the run (shuffles, sampling).
        progress : bool, default False
            Show progress.
        **options
            Options from `options`.

        Returns
        -------
        InstrumentRun
            Result, per-item records, caveats and options.
        """
        raise NotImplementedError

    def section(self, run: InstrumentRun) -> Section:
        """The report's rows for this run.

        Parameters
        ----------
        run : InstrumentRun
            A run of this instrument.

        Returns
        -------
        Section
            Rows for the report, caveats attached to the rows their codes name.
        """
        raise NotImplementedError

    def summary(self, run: InstrumentRun) -> str:
        """What the CLI prints: every estimate with its interval, n, method and kind, then the
        protocol, the reading and the caveats.

        Parameters
        ----------
        run : InstrumentRun
            A run of this instrument.

        Returns
        -------
        str
            The text the CLI prints.
        """
        from liedar.behavioral.summary import format_result

        return format_result(run.result.to_dict())

    def check_backend(self, backend: Backend) -> None:
        """Refuse, in one line, a backend that lacks what this instrument uses (a served model
        has no weights for weight noise); local backends have every capability.

        Parameters
        ----------
        backend : Backend
            The loaded model.

        Raises
        ------
        InputError
            When the backend lacks a capability in ``requires``.
        """
        have = getattr(backend, "capabilities", None)
        missing = sorted(self.requires - set(have)) if have is not None else []
        if missing:
            raise InputError(
                f"{self.name} needs {', '.join(m.replace('_', ' ') for m in missing)}, which "
                f"{getattr(backend, 'name', 'this backend')} does not expose: run it on a local model "
                f"(--backend {self.backends[0]})"
            )


def sample_items(items: Sequence[Any], limit: Optional[int], seed: int, group: Any = None) -> list[Any]:
    """The one sampling rule: ``limit`` items drawn without replacement (seeded), spread over
    the groups ``group(item)`` names as evenly as the counts allow, returned in bank order.

    Why stratified: the banks are ordered by topic or truth value, so a plain first-N or an
    unlucky draw would ask one topic only.

    Parameters
    ----------
    items : sequence
        The bank.
    limit : int or None
        How many to draw; all when None or at least the bank's size.
    seed : int
        Seed of the draw.
    group : callable, optional
        ``group(item)`` -> the stratum (e.g. topic); one stratum when None.

    Returns
    -------
    list
        The drawn items, in bank order.

    Raises
    ------
    InputError
        When ``limit`` is below 1.

    Examples
    --------
    >>> bank = [("geo", i) for i in range(6)] + [("math", i) for i in range(6)]
    >>> picked = sample_items(bank, 4, seed=0, group=lambda item: item[0])
    >>> sorted(topic for topic, _ in picked)
    ['geo', 'geo', 'math', 'math']
    """
    items = list(items)
    if limit is None or limit >= len(items):
        return items
    if limit < 1:
        raise InputError(f"limit {limit}: give at least 1 item")
    rng = np.random.default_rng(seed)
    keys = [group(it) if group is not None else 0 for it in items]
    groups: dict[Any, list[int]] = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    order = {k: list(rng.permutation(idx)) for k, idx in groups.items()}
    chosen: list[int] = []
    names = list(groups)
    rng.shuffle(names)
    while len(chosen) < limit:
        for k in names:
            if order[k] and len(chosen) < limit:
                chosen.append(int(order[k].pop(0)))
    return [items[i] for i in sorted(chosen)]
