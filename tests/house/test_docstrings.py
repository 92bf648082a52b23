"""Public names carry numpydoc docstrings (Parameters, Returns, Raises, Examples) whose
examples run, so the API reference (mkdocs, numpy style) reads complete and stays true.

Covered here: liedar.stats and liedar.models, plus the revealed-preference checks and the
minimal-pair grouping that users call directly.
"""

from __future__ import annotations

import doctest
import inspect

import pytest

import liedar.behavioral.revealed.sarp as sarp
import liedar.models as models
import liedar.probes.pairing as pairing
import liedar.stats as stats


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
