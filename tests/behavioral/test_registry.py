"""The instrument registry: the CLI and the demo are generated from it, so a new instrument is
one module (an Instrument subclass), its items and its tests, plus one registration line."""

from __future__ import annotations

import argparse
from typing import Any, Sequence

import pytest

from liedar.behavioral import registry
from liedar.behavioral.instrument import DemoPlan, Flag, Instrument, InstrumentRun, ItemSource, sample_items
from liedar.cli import main
from liedar.core.errors import InputError
from liedar.core.results import Caveat, Section
from liedar.core.rows import add_measure, attach_caveats
from liedar.core.stats import proportion


class _Result:
    def __init__(self, k: int, n: int) -> None:
        self.rate, self.warnings = proportion(k, n, "propensity"), (Caveat("toy_note", "a toy caveat"),)

    def to_dict(self) -> dict[str, Any]:
        return {"rate": self.rate.to_dict(), "warnings": [w.to_dict() for w in self.warnings]}


class ToyInstrument(Instrument):
    """The worked example of docs/contributing.md: counts items whose text has an 'a'."""

    name = "toy"
    title = "toy instrument (test only)"
    needs_model = False
    source = ItemSource(lambda: ["apple", "berry", "cherry", "date", "fig", "grape"])
    demo = DemoPlan(full={"limit": 4}, quick={"limit": 2}, order=1)

    flags = (Flag("--letter", "the letter to count (default a)", default="a"),)

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        if len(args.letter) != 1:
            raise InputError(f"--letter {args.letter!r}: give one character")
        return super().options(args)

    def run(self, backend: Any, items: Sequence[str], *, interval: str = "clopper-pearson", seed: int = 0,
            progress: bool = False, letter: str = "a", **options: Any) -> InstrumentRun:  # fmt: skip
        res = _Result(sum(letter in it for it in items), len(items))
        return InstrumentRun(self.name, res, list(items), res.warnings, {"letter": letter})

    def section(self, run: InstrumentRun) -> Section:
        s = Section()
        add_measure(s, id="toy_rate", label="toy rate", instrument="toy", scale="proportion", estimate=run.result.rate)
        return attach_caveats(s, run.caveats, {"toy_note": ("toy_rate",)})


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    return registry.register(ToyInstrument())


def test_a_registered_instrument_gets_a_cli_subcommand(toy, tmp_path, capsys) -> None:
    out = tmp_path / "toy.json"
    assert main(["behavioral", "toy", "--letter", "r", "--output", str(out)]) == 0
    assert "rate" in capsys.readouterr().out and out.is_file()
    assert main(["behavioral", "toy", "--letter", "rr"]) == 2
    assert "give one character" in capsys.readouterr().err


def test_a_registered_instrument_becomes_a_demo_step(toy) -> None:
    from liedar.pipeline.demo_steps import demo_steps

    names = [s.name for s in demo_steps(quick=True)]
    assert "toy" in names and names.index("toy") > names.index("cross_check")


def test_names_are_unique(toy) -> None:
    with pytest.raises(InputError, match="already registered"):
        registry.register(ToyInstrument())
    with pytest.raises(InputError, match="no instrument named"):
        registry.get("nope")


def test_every_builtin_meets_the_contract() -> None:
    for inst in registry.BUILTIN:
        assert inst.name and inst.title and isinstance(inst.caveat_rows, dict)
        assert inst.demo is None or ("limit" in inst.demo.full or inst.name == "menus")
        if inst.needs_model:
            items = inst.items(limit=4, seed=0, **({"scenarios": None} if inst.name == "menus" else {}))
            assert 0 < len(items) <= 4 or inst.name == "sycophancy"  # whole claims: 2 items each


def test_sample_items_is_stratified_seeded_and_in_bank_order() -> None:
    bank = [(g, i) for g in "abc" for i in range(10)]
    picked = sample_items(bank, 6, seed=3, group=lambda x: x[0])
    assert sorted({g for g, _ in picked}) == ["a", "b", "c"] and len(picked) == 6
    assert picked == sorted(picked, key=bank.index) and picked == sample_items(bank, 6, 3, lambda x: x[0])
    assert sample_items(bank, 6, seed=4, group=lambda x: x[0]) != picked


def test_the_cli_flags_are_the_declared_ones() -> None:
    """Each instrument's subcommand has the flags it declares (consistency adds ``--items``, its
    name for ``--limit``), and a flag two instruments share is one declaration."""
    from liedar.behavioral.runners.observer import FAMILIES

    for inst in registry.BUILTIN:
        parser = argparse.ArgumentParser()
        inst.add_arguments(parser)
        added = [a.option_strings[0] for a in parser._actions if a.option_strings and a.dest != "help"]
        assert added == (["--items"] if inst.name == "consistency" else []) + [f.flag for f in inst.flags]
    assert FAMILIES in registry.get("observer").flags and FAMILIES in registry.get("verbalized").flags
