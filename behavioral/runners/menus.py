"""Run the menu-choice study on a model and summarise it.

For every configuration (vignette × prompt framing) the model chooses from the 15 menus
of `behavioral.items.menus`, holding the case fixed, and the choices go through the
revealed-preference checks of `behavioral.revealed`.

Two ways to choose:

* ``deterministic`` — the option letters' log-probabilities under ``score_options``; the
  argmax is the choice (the letters are the only continuations scored, so there is no
  parse-fail in this mode).
* ``stochastic`` — K replies sampled at a temperature, parsed; a reply that names an
  action of the task that was *not* offered, or names nothing, is a ``PARSE_FAIL`` (kept
  and counted, never dropped). On a local model the K replies share one read of the
  prompt (`liedar.models.sampling.sample_shared_prefix`: same sampler and seeds as K
  ``generate`` calls); a served model gets one request with ``n=K`` where its server
  honours ``n``, K requests where it does not (`ServedBackend.sample` asks once). The
  result's ``sampling`` and notes say which way each menu took.
* ``exact`` — the constrained reply's exact law at a temperature
  (`liedar.models.sampling.choice_law`): each letter's probability under temperature-T
  sampling given that the reply is one of the menu's letters, from the same forward pass
  whose argmax is the deterministic choice. SARP, IIA and Houtman-Maks use that argmax
  (so this mode also yields the deterministic study); RUM is tested on the probabilities
  themselves, with no sampling noise (`rum_exact_law`). It cannot see parse-fails: replies
  that start with anything but a menu letter (an off-menu letter, an action named in
  words, reasoning before the answer, a refusal) are outside the law; the reported
  ``mass`` is the share of sampled replies it speaks for. On a served model the letters'
  log-probs come from the answer token's top list (the request deterministic mode sends):
  the law over the menu is exact, its ``mass`` only bounded (``law_mass_floor``), and a
  configuration with a letter missing from the list has no law (``law_unlisted``), never
  a guessed one.

The whole study, exact and sampled, runs in one pass per configuration
(`run_configs_whole`): on a local model the exact law is read from the next-token logits
after each prompt, which are the logits its K sampled replies start from
(`liedar.models.sampling.sample_with_choice_laws`), so the exact mode costs no forward pass
of its own.

`models` is imported only inside `load_and_run_menu_study` (behavioral stays torch-free).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from liedar.behavioral.items.menus import (
    FRAMINGS,
    LETTERS,
    SCENARIOS,
    TIERS,
    Framing,
    Scenario,
    Vignette,
    render_question,
    vignettes,
)
from liedar.behavioral.revealed import (
    IIA_MECHANISMS,
    HoutmanMaksResult,
    MenuChoiceLog,
    RumExactResult,
    RumTestResult,
    SarpResult,
    StochasticChoiceLog,
    check_sarp,
    choice_log_from_dict,
    houtman_maks,
    iia_mechanisms,
    iia_reversals,
    mixed_menu_share,
    regularity_violations,
    rum_exact_law,
    rum_test,
)
from liedar.behavioral.runners.common import letter_continuations
from liedar.core._util.serial import Serial
from liedar.core.errors import InputError
from liedar.core.results import Caveat
from liedar.core.stats import Estimate, wilson
from liedar.models.backend import Backend
from liedar.models.chat import TextInput

if TYPE_CHECKING:
    from liedar.models.sampling import ChoiceLaw

MODES = ("deterministic", "stochastic", "exact")


def build_prompt(vignette: Vignette, framing: Framing, menu: tuple[str, ...]) -> Any:
    """System turn (the role) + user turn (case, lettered options, instruction)."""
    from liedar.models.chat import Dialogue, Message  # torch-free, kept lazy by the team contract

    scenario = SCENARIOS[vignette.scenario]
    return Dialogue.of(
        Message("system", scenario.role), Message("user", render_question(vignette, framing, menu), detect=True)
    )


_ANSWER = re.compile(r"answer\s*[:\-]?\s*\**\(?([A-E])\)?\b", re.IGNORECASE)
_LEADING_LETTER = re.compile(r"^\W*\(?([A-E])\)?(?:[\s.:)]|$)")


def parse_reply(reply: str, menu: tuple[str, ...], scenario: Scenario) -> Optional[str]:
    """The action a free-text reply chose, as a label (possibly one *not* on the menu), or None.

    Order: an explicit ``Answer: X``; a reply starting with a letter; otherwise the one
    action label of the task the reply names (case-insensitive). A letter beyond the menu
    names no action (None). Several different labels named -> None (ambiguous).
    """
    m = _ANSWER.findall(reply)
    letter = m[-1].upper() if m else None
    if letter is None:
        lead = _LEADING_LETTER.match(reply.strip())
        letter = lead.group(1) if lead else None
    if letter is not None:
        k = LETTERS.index(letter)
        return menu[k] if k < len(menu) else None
    text = reply.lower()
    named = [a for a in scenario.actions if a.lower() in text]
    return named[0] if len(named) == 1 else None


@dataclass
class ConfigResult(Serial):
    """Everything measured on one configuration (vignette × framing)."""

    vignette_id: str
    scenario: str
    tier: str
    framing: str
    log: dict[str, Any]
    sarp: SarpResult
    houtman_maks: HoutmanMaksResult
    iia_reversals: int
    regularity_violations: int
    n_parse_fail: int
    rum: Optional[RumTestResult] = None
    mixed_menus: Optional[Estimate] = None
    logprobs: Optional[list[list[float]]] = None
    presented: Optional[list[list[str]]] = None  # each menu's actions in the order shown (A, B, ...)
    law: Optional[list[list[float]]] = None  # exact mode: each menu's choice probabilities, in presented order
    law_mass: Optional[list[float]] = None  # exact mode: unconditioned probability the reply is a menu letter
    rum_law: Optional[RumExactResult] = None  # exact mode: RUM on the exact probabilities
    law_mass_floor: Optional[list[float]] = None  # exact mode, served: lower bound of each law_mass
    law_unlisted: Optional[list[list[str]]] = None  # exact mode, served: letters missing from the top list


def _rate_table(configs: Sequence[ConfigResult], row: str, col: str, passed) -> dict[str, dict[str, Estimate]]:
    cells: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for c in configs:
        cells[getattr(c, row)][getattr(c, col)].append(bool(passed(c)))
    return {r: {k: wilson(sum(v), len(v)) for k, v in cols.items()} for r, cols in cells.items()}


@dataclass
class MenuStudyResult:
    """The study's tables. Every rate is an `Estimate` with a Wilson interval over configurations."""

    model: str
    mode: str
    samples: int
    temperature: float
    configs: list[ConfigResult]
    alpha: float = 0.05
    notes: list[str] = field(default_factory=list)
    sampling: dict[str, int] = field(default_factory=dict)  # stochastic mode: menus sampled each way (SAMPLING_WAYS)

    def sarp_by_scenario_framing(self) -> dict[str, dict[str, Estimate]]:
        return _rate_table(self.configs, "scenario", "framing", lambda c: c.sarp.consistent)

    def sarp_by_scenario_tier(self) -> dict[str, dict[str, Estimate]]:
        return _rate_table(self.configs, "scenario", "tier", lambda c: c.sarp.consistent)

    def sarp_pass(self, with_parse_fail: bool = False) -> Estimate:
        key = "consistent_with_parse_fail" if with_parse_fail else "consistent"
        return wilson(sum(getattr(c.sarp, key) for c in self.configs), len(self.configs))

    def iia_reversals_by_scenario(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for c in self.configs:
            out[c.scenario] += c.iia_reversals
        return dict(out)

    def rum_pass(self) -> Optional[Estimate]:
        rums = [c.rum for c in self.configs if c.rum is not None]
        return wilson(sum(not r.reject for r in rums), len(rums)) if rums else None

    def rum_exact_pass(self) -> Optional[Estimate]:
        rums = [c.rum for c in self.configs if c.rum is not None]
        return wilson(sum(r.exact.consistent for r in rums), len(rums)) if rums else None

    def rum_law_pass(self) -> Optional[Estimate]:
        """Exact mode: share of configurations whose exact choice law is a mixture of rankings."""
        laws = [c.rum_law for c in self.configs if c.rum_law is not None]
        return wilson(sum(r.consistent for r in laws), len(laws)) if laws else None

    def rum_law_by(self, key: str) -> dict[str, Estimate]:
        """Exact-law RUM pass rate by ``framing`` or ``tier``."""
        cells: dict[str, list[bool]] = defaultdict(list)
        for c in self.configs:
            if c.rum_law is not None:
                cells[getattr(c, key)].append(c.rum_law.consistent)
        return {k: wilson(sum(v), len(v)) for k, v in cells.items()}

    def mixed_menu_share(self) -> Optional[Estimate]:
        parts = [c.mixed_menus for c in self.configs if c.mixed_menus is not None and c.mixed_menus.n]
        if not parts:
            return None
        return wilson(sum(int(p.successes or 0) for p in parts), sum(p.n for p in parts))

    def parse_fails_by_scenario(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for c in self.configs:
            out[c.scenario] += c.n_parse_fail
        return dict(out)

    # stays hand-written: writes tables derived from its configs, not its fields
    def to_dict(self) -> dict[str, Any]:
        def table(t: dict[str, dict[str, Estimate]]) -> dict[str, dict[str, Any]]:
            return {r: {k: e.to_dict() for k, e in cols.items()} for r, cols in t.items()}

        rum, rum_exact, mixed = self.rum_pass(), self.rum_exact_pass(), self.mixed_menu_share()
        rum_law = self.rum_law_pass()
        return {
            "model": self.model,
            "mode": self.mode,
            "samples": self.samples,
            "temperature": self.temperature,
            "alpha": self.alpha,
            "n_configurations": len(self.configs),
            "sarp_pass": self.sarp_pass().to_dict(),
            "sarp_pass_with_parse_fail": self.sarp_pass(True).to_dict(),
            "sarp_by_scenario_framing": table(self.sarp_by_scenario_framing()),
            "sarp_by_scenario_tier": table(self.sarp_by_scenario_tier()),
            "iia_reversals_by_scenario": self.iia_reversals_by_scenario(),
            "rum_pass": None if rum is None else rum.to_dict(),
            "rum_exact_pass": None if rum_exact is None else rum_exact.to_dict(),
            "mixed_menu_share": None if mixed is None else mixed.to_dict(),
            "rum_law_pass": None if rum_law is None else rum_law.to_dict(),
            "parse_fails_by_scenario": self.parse_fails_by_scenario(),
            "notes": list(self.notes),
            "sampling": dict(self.sampling),
            "configs": [c.to_dict() for c in self.configs],
        }


def analyse_config(
    vignette: Vignette,
    framing: str,
    log: MenuChoiceLog | StochasticChoiceLog,
    *,
    alpha: float = 0.05,
    rum_bootstrap: int = 199,
    seed: int = 0,
    logprobs: Optional[list[list[float]]] = None,
    presented: Optional[list[list[str]]] = None,
) -> ConfigResult:
    """Run every check on one configuration's choices (modal choices for SARP in stochastic mode)."""
    stochastic = isinstance(log, StochasticChoiceLog)
    choices = log.modal_log() if stochastic else log
    # a configuration whose every reply failed to parse has nothing for RUM to test: it counts
    # in the parse-fails, not in the RUM pass rate (a base model can answer no menu at all)
    testable = stochastic and any(counts.sum() > 0 for _, counts in log.pooled())
    return ConfigResult(
        vignette_id=vignette.vignette_id,
        scenario=vignette.scenario,
        tier=vignette.tier,
        framing=framing,
        log=log.to_dict(),
        sarp=check_sarp(choices),
        houtman_maks=houtman_maks(choices),
        iia_reversals=len(iia_reversals(log)),
        regularity_violations=len(regularity_violations(log)),
        n_parse_fail=log.n_parse_fail() if stochastic else len(log.parse_fails),
        rum=rum_test(log, alpha=alpha, n_bootstrap=rum_bootstrap, seed=seed) if testable else None,
        mixed_menus=mixed_menu_share(log) if stochastic else None,
        logprobs=logprobs,
        presented=presented,
    )


def mechanism_counts(log: dict[str, Any], scenario: str, presented: Sequence[Sequence[str]]) -> dict[str, int]:
    """How many of a configuration's IIA reversals fit each pattern of `IIA_MECHANISMS`
    (`iia_mechanisms`; a reversal can fit several), from the configuration as saved: its
    ``log`` (a choice log's ``to_dict``) and the order each menu was lettered in.

    Why from the saved form: the patterns are a reading of choices already made, so a study
    saved to disk (the parts of `scripts/menus_study_parts.py`) is read the same way as one
    in memory."""
    actions = SCENARIOS[scenario].actions
    shown_first = {frozenset(menu): menu[0] for menu in presented}
    found = dict.fromkeys(IIA_MECHANISMS, 0)
    for reversal in iia_reversals(choice_log_from_dict(log, actions)):
        for mechanism in iia_mechanisms(reversal, actions, shown_first):
            found[mechanism] += 1
    return found


ORDERS = ("shuffled", "canonical")
# the sampling flags' values when not given (their flags default to None: given only where the mode samples)
SAMPLING_DEFAULTS: dict[str, Any] = {"samples": 20, "temperature": 0.7, "alpha": 0.05, "rum_bootstrap": 199}


def presentation_orders(
    menus: Sequence[tuple[str, ...]], order: str, rng: np.random.Generator
) -> list[tuple[str, ...]]:
    """The order in which each menu's actions are lettered A, B, C, ...

    Why shuffled by default: the actions are listed mild -> drastic, so a model that always
    answers "A" would otherwise look like one with a perfectly stable ranking (SARP passes
    trivially). With a seeded random order per menu, a pure letter preference shows up as
    inconsistent choices, which is what it is.
    """
    if order == "canonical":
        return [tuple(m) for m in menus]
    return [tuple(m[i] for i in rng.permutation(len(m))) for m in menus]


def _choose_deterministic(
    backend: Backend, vignette: Vignette, framing: Framing, presented: list[tuple[str, ...]]
) -> tuple[MenuChoiceLog, list[list[float]]]:
    scenario = SCENARIOS[vignette.scenario]
    menus, choices, logprobs = scenario.menus(), [], []
    for shown in presented:
        scores = np.asarray(
            backend.score_options(build_prompt(vignette, framing, shown), letter_continuations(len(shown), chat=True)),
            dtype=float,
        )
        if scores.shape != (len(shown),):
            raise InputError(f"backend.score_options returned shape {scores.shape} for {len(shown)} options")
        # all-NaN scores: a served model that named no option (recorded by the backend) -> PARSE_FAIL
        choices.append(shown[int(np.argmax(scores))] if np.isfinite(scores).any() else None)
        logprobs.append([float(s) for s in scores])
    return MenuChoiceLog(menus, choices, actions=scenario.actions), logprobs


@dataclass
class _ExactMenus:
    """One configuration's exact-mode reading, menu by menu."""

    log: MenuChoiceLog
    logprobs: list[list[float]]
    law: list[list[float]]
    mass: list[float]
    mass_floor: list[Optional[float]]
    unlisted: list[list[str]]


def _choose_exact(
    backend: Backend, vignette: Vignette, framing: Framing, presented: list[tuple[str, ...]], temperature: float
) -> _ExactMenus:
    """One forward pass (a served model: one request) per menu: the letters' log-probabilities
    (argmax = the deterministic choice) and their exact law at ``temperature``."""
    from liedar.models.sampling import choice_law  # torch-free; kept lazy like every models import here

    laws = [
        choice_law(
            backend, build_prompt(vignette, framing, shown), letter_continuations(len(shown), chat=True), temperature
        )  # fmt: skip
        for shown in presented
    ]
    return _exact_menus(SCENARIOS[vignette.scenario], presented, laws)


def _exact_menus(scenario: Scenario, presented: list[tuple[str, ...]], laws: Sequence[ChoiceLaw]) -> _ExactMenus:
    """A configuration's exact-mode reading from each menu's `ChoiceLaw`."""
    choices: list[Optional[str]] = []
    logprobs, law, mass, floor, unlisted = [], [], [], [], []
    for shown, r in zip(presented, laws):
        # all-NaN scores: a served model that named no option (as in deterministic mode) -> PARSE_FAIL
        choices.append(shown[int(np.nanargmax(r.logprobs))] if np.isfinite(r.logprobs).any() else None)
        logprobs.append([float(x) for x in r.logprobs])
        law.append([float(x) for x in r.probs])
        mass.append(float(r.mass.sum()))
        floor.append(None if r.mass_floor is None else float(r.mass_floor.sum()))
        unlisted.append(list(r.unlisted))
    log = MenuChoiceLog(scenario.menus(), choices, actions=scenario.actions)
    return _ExactMenus(log, logprobs, law, mass, floor, unlisted)


SAMPLING_WAYS = {
    "shared-prefix": (
        "a local model: each menu's prompt read once, its K samples (on transformers, a configuration's "
        "menus) decoded as one batch"
    ),
    "n": "a served model whose server honours n: one request with n=K, drawn by the server from one seed",
    "k-calls": "K generate calls per menu, seeds menu seed + 0..K-1 (on a served model: its server does not honour n)",
}


def _replies(
    backend: Backend,
    prompts: list[TextInput],
    samples: int,
    max_tokens: int,
    temperature: float,
    seeds: list[int],
) -> tuple[list[list[str]], str]:
    """K sampled replies to each prompt (prompt i's seeded from ``seeds[i]``) and the way they
    were drawn (a key of `SAMPLING_WAYS`)."""
    from liedar.models.base import BackendBase  # torch-free
    from liedar.models.served import ServedBackend  # torch-free

    if isinstance(backend, BackendBase):
        from liedar.models.sampling import sample_shared_prefix_many

        gens = sample_shared_prefix_many(
            backend, prompts, samples=samples, max_tokens=max_tokens, temperature=temperature, seeds=seeds
        )
        return [[g.text for g in row] for row in gens], "shared-prefix"
    if isinstance(backend, ServedBackend):
        rows = [
            [g.text for g in backend.sample(p, samples=samples, max_tokens=max_tokens, temperature=temperature, seed=s)]
            for p, s in zip(prompts, seeds)
        ]
        return rows, "n" if backend.n_honoured and samples > 1 else "k-calls"
    rows = [
        [backend.generate(p, max_tokens=max_tokens, temperature=temperature, seed=s + k).text for k in range(samples)]
        for p, s in zip(prompts, seeds)
    ]
    return rows, "k-calls"


def design_index() -> dict[tuple[str, str], int]:
    """Each configuration's position in the whole design (every vignette of the bank × every
    framing, in bank order): the key of its lettering and sampling seeds.

    Why not its position in the run: a run of some scenarios, tiers or framings (the demo's,
    or a study saved one scenario at a time) then letters and samples each configuration
    exactly as the whole study does, so parts and the whole agree, and two scenarios never
    share a lettering.
    """
    names = list(FRAMINGS)
    return {(v.vignette_id, f): i * len(names) + j for i, v in enumerate(vignettes()) for j, f in enumerate(names)}


def menu_seed(seed: int, menu: int) -> int:
    """The first sampling seed of one menu (its K samples use this + 0..K-1).

    Why each menu its own: with the same K seeds for every menu, sample k of every menu
    draws from the same uniform number, so the menus' choices move together (common
    random numbers) and the RUM test, which treats menus as independent samples, is
    miscalibrated. Menu 0 keeps ``seed`` itself.
    """
    return seed if menu == 0 else int(np.random.default_rng([seed, menu]).integers(2**31 - 1))


def _choose_stochastic(
    backend: Backend,
    vignette: Vignette,
    framing: Framing,
    presented: list[tuple[str, ...]],
    samples: int,
    temperature: float,
    seed: int,
    ways: Optional[dict[str, int]] = None,
) -> StochasticChoiceLog:
    """K parsed replies per menu; ``ways`` (if given) counts the menus by how they were sampled."""
    prompts = [build_prompt(vignette, framing, shown) for shown in presented]
    seeds = [menu_seed(seed, j) for j in range(len(presented))]
    texts, way = _replies(backend, prompts, samples, _max_tokens(framing), temperature, seeds)
    if ways is not None:
        ways[way] = ways.get(way, 0) + len(presented)
    return _stochastic_log(SCENARIOS[vignette.scenario], presented, texts)


def _max_tokens(framing: Framing) -> int:
    """A sampled reply's token budget: room to reason before the answer, or just the answer."""
    return 160 if framing.reasoning else 12


def _stochastic_log(
    scenario: Scenario, presented: list[tuple[str, ...]], texts: list[list[str]]
) -> StochasticChoiceLog:
    """Each menu's sampled replies, parsed and counted."""
    counts = []
    for shown, replies in zip(presented, texts):
        row: dict[Optional[str], int] = defaultdict(int)
        for text in replies:
            row[parse_reply(text, shown, scenario)] += 1
        counts.append(dict(row))
    return StochasticChoiceLog.from_counts(scenario.menus(), counts, actions=scenario.actions)


def check_study_arguments(
    mode: str,
    samples: int,
    temperature: float,
    scenarios: Optional[Sequence[str]],
    tiers: Optional[Sequence[str]],
    framings: Optional[Sequence[str]],
) -> None:
    """Refuse bad arguments before any model is loaded."""
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    if mode == "stochastic" and (samples < 2 or temperature <= 0):
        raise InputError(
            f"stochastic mode needs samples >= 2 and temperature > 0 (got {samples}, {temperature}); "
            "use --mode deterministic for one choice per menu"
        )
    if mode == "exact" and not (np.isfinite(temperature) and temperature > 0):
        raise InputError(
            f"the exact choice law needs a temperature > 0 (got {temperature}); "
            "use --mode deterministic for the temperature-0 choice"
        )
    for name, given, known in (
        ("scenario", scenarios, SCENARIOS),
        ("tier", tiers, TIERS),
        ("framing", framings, FRAMINGS),
    ):
        unknown = [x for x in (given or ()) if x not in known]
        if unknown:
            raise InputError(f"unknown {name} {unknown}: use any of {', '.join(known)}")


def run_menu_study(
    backend: Backend,
    *,
    mode: str = "deterministic",
    samples: int = 20,
    temperature: float = 0.7,
    scenarios: Optional[Sequence[str]] = None,
    tiers: Optional[Sequence[str]] = None,
    framings: Optional[Sequence[str]] = None,
    alpha: float = 0.05,
    rum_bootstrap: int = 199,
    seed: int = 0,
    progress: bool = True,
    order: str = "shuffled",
) -> MenuStudyResult:
    """Every vignette × framing of the chosen scenarios/tiers, 15 menus each, the options of
    each menu lettered in a seeded random order (``order="canonical"``: mild -> drastic).

    Each configuration's choices are checked for one stable ranking (SARP), menu effects
    and, with sampled choices, random utility; the result tabulates pass rates with
    intervals over configurations. Shuffled lettering keeps a letter preference from
    passing as a preference between actions.

    Parameters
    ----------
    backend : Backend
        The model (`liedar.models.load`, or a served model).
    mode : {"deterministic", "stochastic", "exact"}, default "deterministic"
        One choice per menu at temperature 0, ``samples`` sampled choices per menu, or
        the model's exact choice probabilities at ``temperature``.
    samples : int, default 20
        Samples per menu in stochastic mode (at least 2).
    temperature : float, default 0.7
        Sampling temperature in stochastic and exact modes (above 0).
    scenarios : sequence of str, optional
        Scenarios to run; all by default.
    tiers : sequence of str, optional
        Tiers to run; all by default.
    framings : sequence of str, optional
        Framings to run; all by default.
    alpha : float, default 0.05
        Level of the random-utility test.
    rum_bootstrap : int, default 199
        Bootstrap samples of the random-utility test.
    seed : int, default 0
        Seed of the option orders and samples.
    progress : bool, default True
        Show a progress bar.
    order : str, default "shuffled"
        ``"shuffled"`` or ``"canonical"`` (mild -> drastic) lettering.

    Returns
    -------
    MenuStudyResult
        Per-configuration results and the tables (SARP pass rates, IIA reversals,
        random-utility pass rates, parse-fails).

    Raises
    ------
    InputError
        When the mode, order, a scenario, tier or framing is unknown, or sampling settings
        are out of range.

    Examples
    --------
    >>> import liedar.models
    >>> backend = liedar.models.load("smollm2-135m")  # doctest: +SKIP
    >>> study = run_menu_study(backend, scenarios=["procurement"])  # doctest: +SKIP
    >>> print(study.sarp_pass())  # doctest: +SKIP
    """
    check_study_arguments(mode, samples, temperature, scenarios, tiers, framings)
    if order not in ORDERS:
        raise InputError(f"unknown option order {order!r}: use one of {', '.join(ORDERS)}")
    jobs = study_jobs(scenarios, tiers, framings)
    settings = StudySettings(mode, samples, temperature, alpha, rum_bootstrap, seed, order)
    configs, ways = run_configs(backend, jobs, settings, progress=progress)
    return study_result(str(getattr(backend, "name", "backend")), settings, configs, ways)


@dataclass(frozen=True)
class StudySettings:
    """How every configuration of one study is asked and tested (`run_menu_study`'s options)."""

    mode: str = "deterministic"
    samples: int = 20
    temperature: float = 0.7
    alpha: float = 0.05
    rum_bootstrap: int = 199
    seed: int = 0
    order: str = "shuffled"


def study_jobs(
    scenarios: Optional[Sequence[str]] = None,
    tiers: Optional[Sequence[str]] = None,
    framings: Optional[Sequence[str]] = None,
) -> list[tuple[Vignette, str]]:
    """The configurations (vignette, framing key) of a study, in the order it runs them."""
    chosen = [v for v in vignettes() if v.scenario in (scenarios or SCENARIOS) and v.tier in (tiers or TIERS)]
    return [(v, f) for v in chosen for f in (framings or FRAMINGS)]


def run_configs(
    backend: Backend, jobs: Sequence[tuple[Vignette, str]], settings: StudySettings, *, progress: bool = False
) -> tuple[list[ConfigResult], dict[str, int]]:
    """Each configuration's 15 menus asked and tested; the result does not depend on which
    other configurations run beside it (letterings and seeds follow `design_index`), so a
    study can be cut into pieces (`liedar.behavioral.runners.menus_pool`)."""
    from liedar.core._util.progress import progress as step_progress

    configs = []
    ways: dict[str, int] = {}
    for job in step_progress(jobs, desc=f"menus ({settings.mode})", disable=not progress):
        config = _Config(*job, settings)
        if settings.mode == "deterministic":
            log, logprobs = _choose_deterministic(backend, config.vignette, config.framing, config.presented)
            configs.append(analyse_config(config.vignette, config.key, log, logprobs=logprobs, presented=config.shown))
        elif settings.mode == "exact":
            ex = _choose_exact(backend, config.vignette, config.framing, config.presented, settings.temperature)
            configs.append(config.exact_result(ex))
        else:
            log = _choose_stochastic(
                backend, config.vignette, config.framing, config.presented, settings.samples, settings.temperature,
                config.sample_seed, ways=ways,
            )  # fmt: skip
            configs.append(config.stochastic_result(log))
    return configs, ways


def run_configs_whole(
    backend: Backend, jobs: Sequence[tuple[Vignette, str]], settings: StudySettings, *, progress: bool = False
) -> tuple[list[ConfigResult], list[ConfigResult], dict[str, int]]:
    """The exact and the sampled study of each configuration: ``(exact, sampled, ways)``,
    each equal in design to `run_configs` in that mode (``settings.mode`` is not read).

    Why together: on a local model the exact law of a menu is read from the next-token
    logits after its prompt, and those are the logits its K sampled replies start from;
    one forward pass over a configuration's 15 prompts serves both modes
    (`liedar.models.sampling.sample_with_choice_laws`), so the exact mode (and with it the
    deterministic study, its argmax) costs no pass of its own. A served model is asked
    for each mode separately.
    """
    from liedar.core._util.progress import progress as step_progress
    from liedar.models.base import BackendBase  # torch-free
    from liedar.models.sampling import sample_with_choice_laws

    if not isinstance(backend, BackendBase):  # a served model: each mode asked for on its own
        exact, _ = run_configs(backend, jobs, replace(settings, mode="exact"), progress=progress)
        sampled, ways = run_configs(backend, jobs, replace(settings, mode="stochastic"), progress=progress)
        return exact, sampled, ways
    exact, sampled = [], []
    ways: dict[str, int] = {}
    for job in step_progress(jobs, desc="menus (exact and sampled)", disable=not progress):
        config = _Config(*job, settings)
        presented, scenario = config.presented, SCENARIOS[config.vignette.scenario]
        replies, laws = sample_with_choice_laws(
            backend,
            [build_prompt(config.vignette, config.framing, shown) for shown in presented],
            [letter_continuations(len(shown), chat=True) for shown in presented],
            samples=settings.samples,
            max_tokens=_max_tokens(config.framing),
            temperature=settings.temperature,
            seeds=[menu_seed(config.sample_seed, j) for j in range(len(presented))],
        )
        ways["shared-prefix"] = ways.get("shared-prefix", 0) + len(presented)
        exact.append(config.exact_result(_exact_menus(scenario, presented, laws)))
        sampled.append(
            config.stochastic_result(_stochastic_log(scenario, presented, [[g.text for g in row] for row in replies]))
        )
    return exact, sampled, ways


class _Config:
    """One configuration of the design: its menus' lettering and seeds (from its place in the
    whole design, `design_index`), and how its readings become a `ConfigResult`."""

    def __init__(self, vignette: Vignette, key: str, settings: StudySettings) -> None:
        self.vignette, self.key, self.framing, self.settings = vignette, key, FRAMINGS[key], settings
        self.index = design_index()[(vignette.vignette_id, key)]
        rng = np.random.default_rng([settings.seed, self.index])
        self.presented = presentation_orders(SCENARIOS[vignette.scenario].menus(), settings.order, rng)
        self.shown = [list(p) for p in self.presented]
        self.sample_seed = settings.seed + 1000 * self.index

    def exact_result(self, ex: _ExactMenus) -> ConfigResult:
        c = analyse_config(self.vignette, self.key, ex.log, logprobs=ex.logprobs, presented=self.shown)
        if any(ex.unlisted):  # a letter the server did not list: no law for this configuration
            c.law_unlisted = ex.unlisted
        else:
            c.law, c.law_mass = ex.law, ex.mass
            c.law_mass_floor = None if None in ex.mass_floor else [float(x or 0.0) for x in ex.mass_floor]
            c.rum_law = rum_exact_law(self.presented, ex.law)
        return c

    def stochastic_result(self, log: StochasticChoiceLog) -> ConfigResult:
        return analyse_config(
            self.vignette, self.key, log, alpha=self.settings.alpha, rum_bootstrap=self.settings.rum_bootstrap,
            seed=self.settings.seed + self.index, presented=self.shown,
        )  # fmt: skip


def study_result(
    model: str, settings: StudySettings, configs: list[ConfigResult], ways: dict[str, int]
) -> MenuStudyResult:
    """The study's result over its configurations, with the notes that say how it was asked."""
    mode, order = settings.mode, settings.order
    why = (
        "a seeded random lettering per menu, so a letter preference cannot pass for a stable ranking"
        if order == "shuffled"
        else "always mild -> drastic: a model that always answers 'A' passes SARP trivially"
    )
    notes = [f"option order: {order} ({why})"]
    if mode == "deterministic":
        notes.append(
            "deterministic mode: one choice per menu by letter log-probability; no RUM test (for 0/1 "
            "choices RUM is equivalent to SARP) and no parse-fails (only the offered letters are scored)"
        )
    elif mode == "exact":
        notes.extend(_exact_notes(configs, settings.temperature))
        if (unread := letters_unread(configs)) is not None:
            notes.append(unread.text)
    else:
        notes.append(
            f"stochastic mode: SARP, WARP and Houtman-Maks use each menu's modal choice; RUM uses the "
            f"{settings.samples} samples per menu (bootstrap p-value, alpha={settings.alpha})"
        )
        notes.extend(f"{n} menus sampled as {SAMPLING_WAYS[w]}" for w, n in sorted(ways.items()))
    return MenuStudyResult(
        model=model,
        mode=mode,
        samples=settings.samples if mode == "stochastic" else 1,
        temperature=0.0 if mode == "deterministic" else settings.temperature,
        configs=configs,
        alpha=settings.alpha,
        notes=notes,
        sampling=ways,
    )


# Below this mean law_mass the menu letters are not how the model begins its replies (gemma3-270m:
# 4.3e-6, it opens with a newline and lists the options back; smollm2-135m: 0.58-0.74), so the
# letter modes' argmax and law describe replies the model almost never gives.
LETTERS_UNREAD_MASS = 0.05


def letters_unread(configs: Sequence[ConfigResult]) -> Optional[Caveat]:
    """The caveat an exact-mode study carries when the menu letters hold almost none of the
    model's first-token probability: its choices were not read, whatever SARP and RUM say."""
    masses = [m for c in configs for m in (c.law_mass or [])]
    if not masses or float(np.mean(masses)) >= LETTERS_UNREAD_MASS:
        return None
    return Caveat(
        "letters_unread",
        f"the menu letters hold {float(np.mean(masses)):.2g} of the model's first-token probability on average "
        f"(under {LETTERS_UNREAD_MASS}): its replies do not start with a letter, so these choices are not the "
        "model's; --mode stochastic parses whole replies",
    )


def _exact_notes(configs: Sequence[ConfigResult], temperature: float) -> list[str]:
    """What an exact-mode study's law covers, and (served) what it bounds or could not read."""
    masses = [m for c in configs for m in (c.law_mass or [])]
    covered = (
        f"the mean unconditioned probability of that is {np.mean(masses):.3f}"
        if masses
        else "no configuration had a computable law"
    )
    notes = [
        f"exact mode: SARP, IIA and Houtman-Maks use the temperature-0 choice (argmax of the letters' "
        f"log-probabilities); RUM is tested on the exact choice law at T={temperature} (no sampling noise). "
        f"The law is conditioned on the reply being a menu letter; {covered}, and replies outside it (the "
        f"parse-fails of sampling) are not seen"
    ]
    floors = [f for c in configs for f in (c.law_mass_floor or [])]
    if floors:
        notes.append(
            f"served model: the letters' log-probs come from the server's top list, so the law over each menu "
            f"is exact but law_mass is renormalised over the listed tokens (an upper bound); the unlisted "
            f"tokens can lower it to law_mass_floor (mean {np.mean(floors):.3f}"
            + (", no bound at T > 1" if temperature > 1 else "")
            + ")"
        )
    missing = [c for c in configs if c.law_unlisted]
    if missing:
        menus = sum(1 for c in missing for u in (c.law_unlisted or []) if u)
        notes.append(
            f"served model: in {len(missing)} of {len(configs)} configurations ({menus} menus) a menu letter was "
            "not in the server's top list; their law, law_mass and RUM on the law are not computable (None), "
            "not guessed; their argmax choices stand (exact while one letter is listed)"
        )
    return notes


def load_and_run_menu_study(
    model: str, backend: str = "transformers", load_kwargs: Optional[dict[str, Any]] = None, **kwargs: Any
) -> MenuStudyResult:
    """Load ``model`` offline through `models.load` (with ``load_kwargs``) and run the study on it."""
    check_study_arguments(
        kwargs.get("mode", "deterministic"),
        kwargs.get("samples", 20),
        kwargs.get("temperature", 0.7),
        kwargs.get("scenarios"),
        kwargs.get("tiers"),
        kwargs.get("framings"),
    )
    from liedar import models

    return run_menu_study(models.load(model, backend=backend, **(load_kwargs or {})), **kwargs)
