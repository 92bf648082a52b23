"""Public names carry numpydoc docstrings (Parameters, Returns, Raises, Examples) whose
examples run, so the API reference (mkdocs, numpy style) reads complete and stays true.

Covered here: liedar.core.stats and liedar.models, plus the revealed-preference checks and the
minimal-pair grouping that users call directly; and every public name of liedar.probes and
liedar.behavioral (their __all__, the runners that ask a model, and their classes' public
methods), whose docstrings need a Parameters section and whose Examples run.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import liedar.behavioral.revealed.sarp as sarp
import liedar.core.stats as stats
import liedar.models as models
import liedar.probes.pairing as pairing


def _public(module) -> list[tuple[str, object]]:
    names = getattr(module, "__all__", None) or [
        n
        for n, obj in vars(module).items()
        if not n.startswith("_") and getattr(obj, "__module__", None) == module.__name__
    ]
    return [
        (n, getattr(module, n))
        for n in names
        if inspect.isfunction(getattr(module, n)) or inspect.isclass(getattr(module, n))
    ]


FACES = [*_public(stats), *_public(models), ("check_sarp", sarp.check_sarp), ("minimal_pairs", pairing.minimal_pairs)]


@pytest.mark.parametrize("name,obj", FACES, ids=[n for n, _ in FACES])
def test_numpydoc_sections(name: str, obj: object):
    doc = inspect.getdoc(obj) or ""
    sections = ["Parameters", "Examples"] + ([] if inspect.isclass(obj) else ["Returns"])
    for section in sections:
        assert f"{section}\n{'-' * len(section)}" in doc, f"{name}: no {section} section"
    if inspect.isfunction(obj):
        assert "Raises\n------" in doc, f"{name}: no Raises section"


@pytest.mark.parametrize("module", [stats, sarp, pairing], ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# ---- liedar.probes and liedar.behavioral --------------------------------------------------
# Every name in the __all__ of their public faces, the runners a user calls to ask a model,
# and each public method or property of their classes (also those inherited from liedar's
# own private bases, e.g. the probes' predict_proba): a docstring, and a Parameters section
# when it takes parameters besides self.

PUBLIC_FACES = ("liedar.probes", "liedar.behavioral", "liedar.behavioral.consistency", "liedar.behavioral.revealed")
RUNNERS = {
    "liedar.behavioral.runners.sandbagging": ("run_sandbagging",),
    "liedar.behavioral.runners.sycophancy": ("run_sycophancy", "sycophancy_records"),
    "liedar.behavioral.runners.honesty": ("run_honesty", "honesty_records"),
    "liedar.behavioral.runners.menus": ("run_menu_study",),
    "liedar.behavioral.observer": ("observer_effect",),
}
# the modules whose public names carry Examples; their doctests run here (model-bound lines
# are marked +SKIP)
EXAMPLE_MODULES = (
    "liedar.probes.datasets",
    "liedar.probes.estimators",
    "liedar.probes.evaluation",
    "liedar.probes.training",
    "liedar.probes.io",
    "liedar.probes.recipes",
    "liedar.probes.monitor",
    "liedar.probes.monitor_calibration",
    "liedar.behavioral.consistency.records",
    "liedar.behavioral.consistency.detector",
    "liedar.behavioral.consistency.contrast",
    "liedar.behavioral.elicitation",
    "liedar.behavioral.episodes",
    "liedar.behavioral.honesty",
    "liedar.behavioral.instrument",
    "liedar.behavioral.judges",
    "liedar.behavioral.negation",
    "liedar.behavioral.noise",
    "liedar.behavioral.registry",
    "liedar.behavioral.sandbagging",
    "liedar.behavioral.sycophancy",
    "liedar.behavioral.revealed.logs",
    "liedar.behavioral.revealed.sarp",
    "liedar.behavioral.revealed.houtman_maks",
    "liedar.behavioral.revealed.menu_effects",
    "liedar.behavioral.revealed.rum",
    "liedar.behavioral.runners.sandbagging",
    "liedar.behavioral.runners.sycophancy",
    "liedar.behavioral.runners.honesty",
    "liedar.behavioral.runners.menus",
)


def _members(cls: type) -> list[tuple[str, object]]:
    """Public methods and properties of ``cls`` and of the liedar classes it derives from."""
    out: dict[str, object] = {}
    for base in cls.__mro__:
        if not base.__module__.startswith("liedar."):
            continue
        for name, value in vars(base).items():
            if name.startswith("_") or name in out:
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                out[name] = value.fget
            elif inspect.isfunction(value):
                out[name] = value
    return sorted(out.items())


def public_api() -> list[tuple[str, object]]:
    """(qualified name, object) for every public callable of liedar.probes and liedar.behavioral."""
    roots: list[object] = []
    for face in PUBLIC_FACES:
        module = importlib.import_module(face)
        roots += [getattr(module, name) for name in module.__all__]
    for module_name, names in RUNNERS.items():
        module = importlib.import_module(module_name)
        roots += [getattr(module, name) for name in names]
    seen: dict[str, object] = {}
    for obj in roots:
        if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__.startswith("liedar.core.stats"):
            continue  # constants, type aliases, and liedar.core.stats (covered above)
        qual = f"{obj.__module__}.{obj.__qualname__}"
        seen.setdefault(qual, obj)
        if inspect.isclass(obj):
            for name, member in _members(obj):
                seen.setdefault(f"{qual}.{name}", member)
    return sorted(seen.items())


def _parameters(obj: object) -> list[str]:
    try:
        signature = inspect.signature(obj)  # a class: its constructor's parameters
    except (TypeError, ValueError):
        return []
    return [p for p in signature.parameters if p not in ("self", "cls")]


def numpydoc_problems(qual: str, obj: object) -> list[str]:
    doc = inspect.cleandoc(obj.__doc__) if inspect.isclass(obj) and obj.__doc__ else inspect.getdoc(obj)
    if not doc or not doc.strip():
        return [f"{qual}: no docstring"]
    if _parameters(obj) and "Parameters\n----------" not in doc:
        return [f"{qual}: takes {', '.join(_parameters(obj))} but has no Parameters section"]
    return []


API = public_api()


def test_the_walk_covers_the_entry_points():
    names = {q.rsplit(".", 1)[-1] for q, _ in API} | {q.rsplit(".", 2)[-2] for q, _ in API}
    for expected in ("LogisticProbe", "predict_proba", "ConsistencyDetector", "detect_inconsistency", "run_honesty"):
        assert expected in names
    assert len(API) > 150


@pytest.mark.parametrize("qual,obj", API, ids=[q for q, _ in API])
def test_public_callables_have_numpydoc_docstrings(qual: str, obj: object):
    assert not numpydoc_problems(qual, obj), numpydoc_problems(qual, obj)


@pytest.mark.parametrize("module_name", EXAMPLE_MODULES)
def test_probes_and_behavioral_examples_run(module_name: str):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
