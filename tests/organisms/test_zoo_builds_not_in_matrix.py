"""An audit-zoo member built into the organisms cache is `liedar audit`'s blinded model, never a
column of the validation matrix; a local build of any other recipe still is."""

from __future__ import annotations

from tiny_recipe import tiny_recipe

from liedar.organisms import build
from liedar.organisms.zoo_recipes import FRESH_RECIPES
from liedar.pipeline.validate import _organisms_now, organism_specs


def test_a_zoo_members_build_is_left_out_and_named(cache, tiny_model_dir):
    base = str(tiny_model_dir)
    zoo_name = sorted(FRESH_RECIPES)[0]
    for recipe in (tiny_recipe(), tiny_recipe(name=zoo_name, epochs=1)):
        build(base, recipe.name, recipe=recipe, threads=1, progress=False)
    specs, notes = organism_specs(base, None, (), 1, lambda line: None, verify=False)
    assert [s.name for s in specs] == [f"{base}:tiny_trigger"]
    assert any("audit-zoo build(s) in the cache left out" in n and zoo_name in n for n in notes)
    assert [entry.split("@")[0] for entry in _organisms_now(base)] == ["tiny_trigger"]
