"""Names moved by the house rebuild keep working for one release, with a DeprecationWarning
that names the new home (TransformerLens's pattern)."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    "old,name,new",
    [
        ("liedar.atomic", "write_json_atomic", "liedar._util.atomic"),
        ("liedar.report.model", "Section", "liedar.results"),
        ("liedar.behavioral.stats", "Estimate", "liedar.stats"),
        ("liedar.demo", "run_demo", "liedar.pipeline.demo"),
    ],
)
def test_moved_names_forward_with_a_warning(old: str, name: str, new: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"{new}.{name}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


def test_unknown_names_still_raise_attribute_error() -> None:
    module = importlib.import_module("liedar.atomic")
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018
