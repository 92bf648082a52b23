"""The generic dataclass codec (`liedar.core._util.serial`): each rule of its table, the per-field
options, and the refusals a damaged file gets (one line naming the field)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Optional

import numpy as np
import pytest

from liedar.core._util.serial import INLINE, OMIT_NONE, Serial, from_data, to_data
from liedar.core.errors import IncompatibleError, InputError
from liedar.core.results import Caveat, Measure, NotComputable, Report, ValidationCell
from liedar.core.stats import Estimate, wilson


@dataclass(frozen=True)
class Inner(Serial):
    tag: str
    weight: float = 1.0


@dataclass
class Outer(Serial):
    name: str
    count: int
    ratio: float
    on: bool
    mode: Literal["a", "b"]
    inner: Inner
    maybe: Optional[Inner] = None
    many: list[Inner] = field(default_factory=list)
    fixed: tuple[int, ...] = ()
    table: dict[str, list[int]] = field(default_factory=dict)
    est: Optional[Estimate] = None
    free: Any = None
    hidden: Optional[str] = field(default=None, metadata=OMIT_NONE)


def _outer(**more: Any) -> Outer:
    return Outer("x", 3, 0.5, True, "a", Inner("i"), **more)


def test_every_rule_round_trips() -> None:
    o = _outer(
        maybe=Inner("m", 2.0),
        many=[Inner("p"), Inner("q", 0.25)],
        fixed=(1, 2),
        table={"k": [1, 2]},
        est=wilson(3, 10),
        free={"nested": (1, 2)},
        hidden="shown",
    )
    d = o.to_dict()
    assert d["inner"] == {"tag": "i", "weight": 1.0} and d["fixed"] == [1, 2] and d["est"] == wilson(3, 10).to_dict()
    assert d["free"] == {"nested": (1, 2)}  # Any is written as it is
    assert Outer.from_dict(d) == o
    assert list(d) == [f for f in Outer.__dataclass_fields__]


def test_defaults_nulls_and_unknown_keys() -> None:
    d = {"name": "x", "count": 3, "ratio": 0.5, "on": True, "mode": "a", "inner": {"tag": "i"}}
    assert Outer.from_dict({**d, "many": None, "from_a_newer_version": 1}) == _outer()
    assert "hidden" not in _outer().to_dict()  # OMIT_NONE
    with pytest.raises(InputError, match=r"Outer\.inner is missing"):
        Outer.from_dict({k: v for k, v in d.items() if k != "inner"})
    with pytest.raises(InputError, match=r"Outer\.inner is null"):
        Outer.from_dict({**d, "inner": None})


def test_numbers_keep_their_json_spelling() -> None:
    d = _outer().to_dict()
    assert Outer.from_dict({**d, "ratio": 1}).ratio == 1 and isinstance(Outer.from_dict({**d, "ratio": 1}).ratio, int)
    assert Outer.from_dict({**d, "count": 4.0}).count == 4  # a whole float is a whole number
    with pytest.raises(InputError, match=r"Outer\.count must be a whole number, is a number"):
        Outer.from_dict({**d, "count": 4.5})
    with pytest.raises(InputError, match=r"Outer\.count must be a whole number, is true/false"):
        Outer.from_dict({**d, "count": True})


@pytest.mark.parametrize(
    "key,value,needle",
    [
        ("name", 3, r"Outer\.name must be text, is a number"),
        ("on", 1, r"Outer\.on must be true or false"),
        ("mode", "c", r"Outer\.mode is 'c', not one of 'a', 'b'"),
        ("inner", [], r"Inner must be a JSON object, is a list"),
        ("many", {}, r"Outer\.many must be a list, is an object"),
        ("table", {"k": ["1"]}, r"Outer\.table\['k'\]\[0\] must be a whole number, is text"),
        ("est", "0.3", r"Outer\.est must be an object, is text"),
    ],
)
def test_a_wrong_type_is_refused_naming_the_field(key: str, value: Any, needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        Outer.from_dict({**_outer().to_dict(), key: value})


def test_numpy_values_are_written_as_python_values() -> None:
    o = _outer(fixed=np.array([1, 2]), table={"k": np.arange(3)})
    o.ratio = np.float64(0.25)
    d = o.to_dict()
    assert d["fixed"] == [1, 2] and type(d["fixed"][0]) is int
    assert d["table"] == {"k": [0, 1, 2]} and type(d["ratio"]) is float


@dataclass
class Part(Serial):
    a: int = 0
    b: str = ""


@dataclass
class Whole(Serial):
    name: str
    part: Part = field(default_factory=Part, metadata=INLINE)
    last: int = 0

    key_order = ("last", "name", "part")


def test_inline_and_key_order() -> None:
    w = Whole("w", Part(1, "x"), 2)
    assert list(w.to_dict().items()) == [("last", 2), ("name", "w"), ("a", 1), ("b", "x")]
    assert Whole.from_dict(w.to_dict()) == w


def test_a_key_order_must_name_every_field() -> None:
    @dataclass
    class Bad(Serial):
        a: int
        b: int

        key_order = ("a",)

    with pytest.raises(TypeError, match="key_order must name every field"):
        Bad(1, 2).to_dict()


@dataclass(frozen=True)
class Scored(Serial):
    name: str
    hits: int
    n: int
    seeds: tuple[int, ...] = ()

    instrument: ClassVar[str] = "scored"
    key_order = ("instrument", "n", ..., "rate")

    @property
    def rate(self) -> tuple[float, ...]:
        return (self.hits / self.n,)


def test_key_order_writes_properties_and_constants_and_dots_stand_for_the_other_fields() -> None:
    s = Scored("s", 1, 4, (7,))
    d = s.to_dict()
    assert list(d.items()) == [
        ("instrument", "scored"),
        ("n", 4),
        ("name", "s"),
        ("hits", 1),
        ("seeds", [7]),
        ("rate", [0.25]),
    ]
    assert Scored.from_dict(d) == s  # written-only keys are not read


def test_key_order_refuses_a_name_that_is_nothing_and_two_dots() -> None:
    @dataclass
    class Typo(Serial):
        a: int

        key_order = ("a", "rat")

    @dataclass
    class Dots(Serial):
        a: int

        key_order = (..., "a", ...)

    with pytest.raises(TypeError, match="names 'rat', neither a field nor an attribute"):
        Typo(1).to_dict()
    with pytest.raises(TypeError, match="key_order must name every field once"):
        Dots(1).to_dict()


def test_plain_dataclasses_work_too() -> None:
    @dataclass
    class Plain:
        a: int
        tags: tuple[str, ...] = ()

    assert from_data(Plain, to_data(Plain(1, ("t",)))) == Plain(1, ("t",))


# ---- the results model's own rules, kept through the codec --------------------------------


def test_a_caveat_written_as_text_is_read_as_unclassified() -> None:
    assert Caveat.from_dict("n < 30") == Caveat("unclassified", "n < 30")
    assert Caveat.from_dict({"code": "small_n", "text": "n < 30"}) == Caveat("small_n", "n < 30")


def test_a_rows_own_checks_run_on_reading() -> None:
    row = Measure("m", "M", "t", "proportion", wilson(1, 5)).to_dict()
    with pytest.raises(InputError, match="give either an estimate or a not_computable reason, not neither"):
        Measure.from_dict({**row, "estimate": None})
    with pytest.raises(InputError, match="not-computable row must say why"):
        NotComputable.from_dict({"reason": " "})
    with pytest.raises(InputError, match="estimate has n=0"):
        Measure.from_dict({**row, "estimate": {**row["estimate"], "n": 0}})


def test_power_is_written_only_when_known() -> None:
    cell = ValidationCell("d", "base", True, wilson(3, 10), True)
    assert "power" not in cell.to_dict()
    with_power = ValidationCell("d", "base", True, wilson(3, 10), True, power={"value": 0.9})
    assert with_power.to_dict()["power"] == {"value": 0.9}
    assert ValidationCell.from_dict(cell.to_dict()).power is None


def test_a_report_is_checked_for_its_version_first() -> None:
    with pytest.raises(IncompatibleError, match="not a liedar report file"):
        Report.from_dict(["not", "a", "report"])
    with pytest.raises(IncompatibleError, match="schema version 9.0"):
        Report.from_dict({"schema_version": "9.0", "models": "never read"})
