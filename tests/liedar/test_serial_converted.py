"""The result and record classes that write their JSON through `liedar.core._util.serial`
write the same bytes their hand-written ``to_dict`` wrote.

``data/serial/converted.json`` holds, per class, the JSON the hand-written method produced
for the instances built here (every field set, and once more with every optional field
None); the codec must produce it byte for byte, and read it back to an equal object where
the class can be read.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Union

import pytest

from liedar.core import stats
from liedar.core.results import Caveat
from liedar.core.stats import Estimate, wilson

GOLDEN = Path(__file__).parent / "data" / "serial" / "converted.json"

# module, class, whether its JSON is read back (a class whose fields the codec cannot read is not)
CLASSES: tuple[tuple[str, str, bool], ...] = (
    ("liedar.behavioral.noise", "NoiseTrial", True),
    ("liedar.behavioral.noise", "NoiseLevel", True),
    ("liedar.behavioral.noise", "NoiseCurve", True),
    ("liedar.behavioral.noise", "NoiseComparison", True),
    ("liedar.behavioral.consistency.records", "OptionOrderTrial", True),
    ("liedar.behavioral.consistency.records", "PositionTest", True),
    ("liedar.behavioral.consistency.records", "OptionOrderAnalysis", True),
    ("liedar.behavioral.consistency.records", "ParaphraseAnalysis", True),
    ("liedar.behavioral.consistency.records", "ConsistencyResult", True),
    ("liedar.behavioral.consistency.sim", "OptionOrderPopulation", True),
    ("liedar.behavioral.consistency.sim", "ParaphrasePopulation", True),
    ("liedar.behavioral.consistency.sim", "ContrastPopulation", True),
    ("liedar.behavioral.consistency.contrast", "PositionPrior", True),
    ("liedar.behavioral.consistency.contrast", "ConditionProfile", True),
    ("liedar.behavioral.consistency.contrast", "ContrastTest", True),
    ("liedar.behavioral.consistency.contrast", "ConsistencyContrast", True),
    ("liedar.behavioral.consistency.runner", "ConditionRun", False),
    ("liedar.behavioral.consistency.runner", "ConsistencyRun", False),
    ("liedar.behavioral.honesty", "HonestyRecord", True),
    ("liedar.behavioral.honesty", "HonestyResult", True),
    ("liedar.behavioral.honesty_choice", "HonestyChoiceRecord", True),
    ("liedar.behavioral.honesty_choice", "HonestyChoiceResult", True),
    ("liedar.behavioral.sycophancy", "SycophancyRecord", True),
    ("liedar.behavioral.sycophancy", "SycophancyResult", True),
    ("liedar.behavioral.sycophancy_choice", "ChoiceSycophancyRecord", True),
    ("liedar.behavioral.sycophancy_choice", "ChoiceSycophancyResult", True),
    ("liedar.behavioral.elicitation", "ProtocolScore", True),
    ("liedar.behavioral.sandbagging", "SandbaggingResult", True),
    ("liedar.behavioral.observer", "ObserverRecord", True),
    ("liedar.behavioral.observer", "Contrast", True),
    ("liedar.behavioral.observer", "ObserverResult", True),
    ("liedar.behavioral.observer", "Alarm", True),
    ("liedar.behavioral.episodes", "Episode", True),
    ("liedar.behavioral.episodes", "EpisodeResult", True),
    ("liedar.behavioral.items.beliefs", "BeliefItem", True),
    ("liedar.behavioral.items.claims", "Claim", True),
    ("liedar.behavioral.items.claims", "NegationPair", True),
    ("liedar.behavioral.items.claims_choice", "ChoiceClaim", True),
    ("liedar.behavioral.items.fresh", "WordedItem", True),
    ("liedar.behavioral.items.sycophancy", "SycophancyItem", True),
    ("liedar.behavioral.negation", "NegationRecord", True),
    ("liedar.behavioral.negation", "GroupConsistency", True),
    ("liedar.behavioral.negation", "NegationResult", True),
    ("liedar.behavioral.runners.common", "MCQAnswer", True),
    ("liedar.behavioral.runners.yesno", "YesNoAnswer", True),
    ("liedar.behavioral.runners.menus", "ConfigResult", False),
    ("liedar.behavioral.revealed.houtman_maks", "HoutmanMaksResult", True),
    ("liedar.behavioral.revealed.logs", "ParseFail", True),
    ("liedar.behavioral.revealed.menu_effects", "IIAReversal", True),
    ("liedar.behavioral.revealed.menu_effects", "RegularityViolation", True),
    ("liedar.behavioral.revealed.rum", "RumTestResult", False),
    ("liedar.behavioral.revealed.sarp", "SarpResult", True),
    ("liedar.behavioral.revealed.sarp", "WarpViolation", True),
    ("liedar.behavioral.revealed.sarp", "WarpResult", True),
    ("liedar.behavioral.contamination", "ItemScore", True),
    ("liedar.behavioral.contamination", "ContaminationResult", True),
    ("liedar.behavioral.judges", "JudgeResult", True),
    ("liedar.behavioral.verbalized", "VerbalizedResult", True),
    ("liedar.behavioral.verbalized", "VerbalizedRecord", True),
    ("liedar.probes.awareness", "TransferCell", True),
    ("liedar.probes.awareness", "AwarenessTransfer", True),
    ("liedar.probes.awareness", "SandbagProbe", True),
    ("liedar.probes.evaluation", "ProbeScore", True),
    ("liedar.probes.io", "ProbeMetadata", True),
    ("liedar.probes.monitor", "TokenScore", True),
    ("liedar.probes.monitor", "SentenceScore", True),
    ("liedar.probes.monitor_calibration", "ThresholdCalibration", True),
    ("liedar.core.stats", "TestResult", True),
)


class _Maker:
    """Builds an instance of a dataclass from its type hints, every value distinct."""

    def __init__(self, sparse: bool) -> None:
        self.sparse = sparse  # every Optional field None
        self.count = itertools.count(1)

    def make(self, cls: type) -> Any:
        hints = typing.get_type_hints(cls)
        kwargs = {f.name: self.value(hints[f.name], f.name) for f in dataclasses.fields(cls) if f.init}
        return cls(**kwargs)

    def value(self, tp: Any, name: str) -> Any:  # noqa: PLR0911, PLR0912 - one case per kind of hint
        k = next(self.count)
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin in (Union, types.UnionType):
            rest = [a for a in args if a is not type(None)]
            return None if self.sparse and type(None) in args else self.value(rest[0], name)
        if origin is Literal:
            return args[0]
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(self.value(args[0], name) for _ in range(2))
            return tuple(self.value(a, name) for a in args)
        if origin is list or tp is list:
            return [self.value(args[0] if args else str, name) for _ in range(2)]
        if origin in (dict, Mapping) or tp is dict:
            item = args[1] if args else Any
            return {f"{name}-a": self.value(item, name), f"{name}-b": self.value(item, name)}
        if tp is Any:
            return {"any": [k, f"v{k}"]}
        if tp is str:
            return f"{name}-{k}"
        if tp is bool:
            return k % 2 == 0
        if tp is int:
            return k % 3
        if tp is float:
            return 0.125 * (k % 7) + 0.0625
        if tp is Estimate:
            return wilson(k % 5 + 1, 10)
        if tp is stats.TestResult:
            return stats.TestResult(float(k), 0.01 * k, f"test-{k}")
        if tp is Caveat:
            return Caveat(f"code_{k}", f"text {k}")
        if dataclasses.is_dataclass(tp):
            return self.make(tp)
        raise AssertionError(f"no fixture value for {tp} ({name})")


def _instances(cls: type) -> list[Any]:
    return [_Maker(sparse=False).make(cls), _Maker(sparse=True).make(cls)]


def _cls(module: str, name: str) -> type:
    return getattr(importlib.import_module(module), name)


def _capture(module: str, name: str) -> None:
    """Add what a class writes now to the file: run before the class's ``to_dict`` is replaced."""
    kept = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    key = f"{module}.{name}"
    assert key not in kept, f"{key} is already captured: its old output is not rewritten"
    kept[key] = [json.loads(json.dumps(x.to_dict())) for x in _instances(_cls(module, name))]
    GOLDEN.write_text(json.dumps(kept, indent=1) + "\n")


@pytest.mark.parametrize(("module", "name", "readable"), CLASSES, ids=[n for _, n, _ in CLASSES])
def test_the_codec_writes_the_bytes_the_old_method_wrote(module: str, name: str, readable: bool) -> None:
    from liedar.core._util.serial import Serial

    cls = _cls(module, name)
    expected = json.loads(GOLDEN.read_text())[f"{module}.{name}"]
    assert issubclass(cls, Serial)
    for obj, want in zip(_instances(cls), expected):
        d = obj.to_dict()
        assert json.dumps(d) == json.dumps(want)
        assert d == want
        if readable:
            assert cls.from_dict(d) == obj


if __name__ == "__main__":  # python test_serial_converted.py liedar.some.module ClassName
    import sys

    _capture(sys.argv[1], sys.argv[2])
