"""One way a dataclass becomes JSON data and back: field by field, read by its type hints.

Why one mechanism: the report's data model (`liedar.core.results`) and the files liedar keeps
(step results, audit verdicts) were written by a hand-made ``to_dict``/``from_dict`` pair
per class; each pair restated the fields, and a field added to the class but not to both
methods was silently lost on the next save. Here the fields are stated once, in the class,
and a value is checked against its field's type when read, so a damaged file is refused in
one line naming the field instead of surfacing later as a wrong type in a renderer.

Why the standard library and not pydantic or msgspec: the core install stays small (no
compiled dependency for a few hundred lines of plain JSON), and the rules below are the
whole contract.

A class takes part by deriving from `Serial` (and being a dataclass). Its JSON object has
one key per field, named as the field, in field order or in ``key_order`` when the class
sets it. Values by the field's type hint:

============================== =========================================================
hint                           JSON
============================== =========================================================
``Optional[X]``                null, or X
``list[X]``, ``tuple[X, ...]`` an array (read back as a list or a tuple)
``dict[str, X]``               an object
``Literal[...]``               the value; reading refuses any other
``bool``, ``str``              the value; reading refuses another JSON type
``int``, ``float``             the number; reading refuses a bool, keeps a float as the
                               JSON wrote it (an int stays an int: files read and
                               rewritten keep their bytes) and takes a whole float as an int
``Any``                        as is (containers are not copied deeper)
a `Serial` dataclass           its ``to_dict()`` / ``from_dict()`` (nested objects)
a class with its own           by those methods (e.g. `liedar.core.stats.Estimate`)
``to_dict``/``from_dict``
============================== =========================================================

numpy scalars and arrays in a typed field are written as Python numbers and lists.

Reading: a missing key takes the field's default; a null takes None when the type is
``Optional``, else the default; a missing or null field with neither is refused. Keys the
class does not know are ignored (a newer minor schema version only adds keys). The class's
``__post_init__`` runs as on any construction, so its checks hold for data read from files.

``key_order`` may also name an attribute that is not a field, a property or a `ClassVar`
constant (an instrument's name, a derived rate): its value is written at that place, by
its type hint (the property's return type, the ClassVar's type) and is not read back; and
it may hold ``...`` once, standing for the fields it does not name, in field order. Why:
results whose files always carried such a key next to their fields (``"instrument"``
first) keep their bytes without restating every field in a hand-made ``to_dict``.

Per-field options, in ``dataclasses.field(metadata=...)``:

* `OMIT_NONE`: leave the key out when the value is None (a key added after files without
  it were written, so those files' bytes do not change);
* `INLINE`: a nested `Serial` dataclass whose keys sit in the parent object itself
  (`liedar.core.results.ModelReport` holds its `Section`'s keys beside its own).

Like the rest of `liedar.core._util`, this module imports nothing of the project but its errors.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Optional, TypeVar, Union

from liedar.core.errors import InputError

__all__ = ["INLINE", "OMIT_NONE", "Serial", "from_data", "to_data"]

_OMIT_NONE_KEY = "liedar.serial.omit_none"
_INLINE_KEY = "liedar.serial.inline"
OMIT_NONE: Mapping[str, bool] = MappingProxyType({_OMIT_NONE_KEY: True})
INLINE: Mapping[str, bool] = MappingProxyType({_INLINE_KEY: True})

S = TypeVar("S", bound="Serial")
T = TypeVar("T")


class Serial:
    """Base of a dataclass that is written to and read from JSON by its fields.

    Attributes
    ----------
    key_order : tuple of str (and ``...``)
        The JSON keys' order when it is not the fields' order (every field named once, or
        covered by ``...``; other names are written-only properties or constants); empty
        for field order. Why it exists: a class whose positional arguments were fixed
        before its file format keeps both, so neither its callers nor its files change.

    Examples
    --------
    >>> from dataclasses import dataclass, field
    >>> @dataclass(frozen=True)
    ... class Row(Serial):
    ...     name: str
    ...     n: int = 0
    ...     tags: tuple[str, ...] = ()
    >>> Row("a", 3, ("x",)).to_dict()
    {'name': 'a', 'n': 3, 'tags': ['x']}
    >>> Row.from_dict({"name": "a", "tags": ["x"]})
    Row(name='a', n=0, tags=('x',))
    """

    key_order: ClassVar[tuple[Union[str, types.EllipsisType], ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON data of this object (see the module's rules).

        Returns
        -------
        dict
            One key per field (inline fields contribute their own keys).
        """
        return to_data(self)

    @classmethod
    def from_dict(cls: type[S], d: Any) -> S:
        """The object the JSON data describes, checked as any construction is.

        Parameters
        ----------
        d : Any
            Parsed JSON, as `to_dict` writes it.

        Returns
        -------
        Serial
            An instance of the class it is called on.

        Raises
        ------
        liedar.core.errors.InputError
            When ``d`` is not an object, a field is missing or of the wrong type, or the
            class's own checks refuse the values.
        """
        return from_data(cls, d)


def to_data(obj: Any) -> dict[str, Any]:
    """The JSON data of a dataclass instance, field by field (the rules in the module doc).

    Parameters
    ----------
    obj : dataclass instance
        Usually a `Serial`; any dataclass whose fields follow the rules works.

    Returns
    -------
    dict
        One key per field, in field order or the class's ``key_order``.

    Raises
    ------
    TypeError
        When ``obj`` is not a dataclass instance, or a field's type has no rule.
    """
    cls = type(obj)
    out: dict[str, Any] = {}
    for name, f, hint in _keys(cls):
        value = getattr(obj, name)
        if f is not None and value is None and f.metadata.get(_OMIT_NONE_KEY):
            continue
        data = _encode(value, hint)
        if f is not None and f.metadata.get(_INLINE_KEY):
            out.update(data)
        else:
            out[name] = data
    return out


def from_data(cls: type[T], data: Any) -> T:
    """An instance of ``cls`` from its JSON data (the rules in the module doc).

    Parameters
    ----------
    cls : type
        A dataclass whose fields follow the rules.
    data : Any
        Parsed JSON.

    Returns
    -------
    instance of ``cls``

    Raises
    ------
    liedar.core.errors.InputError
        When ``data`` is not an object, a field is missing or of the wrong type, or the
        class's own checks refuse the values.
    """
    name = cls.__name__
    if not isinstance(data, dict):
        raise InputError(f"{name} must be a JSON object, is {_json_type(data)}")
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for _, f, _ in _keys(cls):
        if f is None or not f.init:  # a written-only key is not read
            continue
        tp, where = hints[f.name], f"{name}.{f.name}"
        if f.metadata.get(_INLINE_KEY):
            kwargs[f.name] = _decode(data, tp, where)
            continue
        value = data.get(f.name)
        if value is not None or (f.name in data and _optional(tp)):
            kwargs[f.name] = _decode(value, tp, where)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            if not _optional(tp):
                raise InputError(f"{where} is {'null' if f.name in data else 'missing'}")
            kwargs[f.name] = None
    return cls(**kwargs)


# ---- the rules --------------------------------------------------------------------------

_HINTS: dict[type, dict[str, Any]] = {}
_KEYS: dict[type, tuple[tuple[str, Optional[dataclasses.Field[Any]], Any], ...]] = {}


def _hints(cls: type) -> dict[str, Any]:
    found = _HINTS.get(cls)
    if found is None:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} is not a dataclass: serial writes dataclasses only")
        found = _HINTS[cls] = typing.get_type_hints(cls)
    return found


def _keys(cls: type) -> tuple[tuple[str, Optional[dataclasses.Field[Any]], Any], ...]:
    """The keys in the order they are written: name, field (None for a written-only key), hint."""
    found = _KEYS.get(cls)
    if found is None:
        hints = _hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        given = getattr(cls, "key_order", ()) or tuple(fields)
        rest = tuple(k for k in fields if k not in given)  # what ``...`` stands for
        order = tuple(k for g in given for k in (rest if g is Ellipsis else (g,)))
        if given.count(Ellipsis) > 1 or len(set(order)) != len(order) or not set(fields) <= set(order):
            raise TypeError(f"{cls.__name__}.key_order must name every field once: {given} vs {tuple(fields)}")
        for k in order:
            if k not in fields and not hasattr(cls, k):
                raise TypeError(f"{cls.__name__}.key_order names {k!r}, neither a field nor an attribute")
        found = _KEYS[cls] = tuple(
            (k, fields.get(k), hints[k] if k in fields else _written_hint(cls, k)) for k in order
        )
    return found


def _written_hint(cls: type, name: str) -> Any:
    """The type of a written-only key: a property's return type, a ClassVar's type, else Any."""
    attr = getattr(cls, name)
    if isinstance(attr, property):
        return typing.get_type_hints(attr.fget).get("return", Any) if attr.fget else Any
    hint = _hints(cls).get(name, Any)
    return (typing.get_args(hint) or (Any,))[0] if typing.get_origin(hint) is ClassVar else hint


def _optional(tp: Any) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType) and type(None) in typing.get_args(tp)


def _inner(tp: Any) -> Any:
    """X of ``Optional[X]``; other unions have no rule (the reader could not tell which type)."""
    rest = [a for a in typing.get_args(tp) if a is not type(None)]
    if len(rest) != 1:
        raise TypeError(f"serial has no rule for {tp}: only Optional[X] unions are read and written")
    return rest[0]


def _items(tp: Any, n: int) -> list[Any]:
    """The element type of each of ``n`` items of a list or tuple hint."""
    args = typing.get_args(tp)
    if not args:
        return [Any] * n
    if typing.get_origin(tp) is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return list(args)
    return [args[0]] * n


def _encode(value: Any, tp: Any) -> Any:
    if value is None or tp is Any:
        return value
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        value = value.tolist()  # a numpy scalar becomes a Python number, an array nested lists
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return _encode(value, _inner(tp))
    if origin in (list, tuple) or tp in (list, tuple):
        return [_encode(v, t) for v, t in zip(value, _items(tp, len(value)))]
    if origin is dict or tp is dict:
        item = (typing.get_args(tp) or (str, Any))[1]
        return {k: _encode(v, item) for k, v in value.items()}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if dataclasses.is_dataclass(value):
        return to_data(value)
    return value  # bool, int, float, str, a Literal's value


def _decode(value: Any, tp: Any, where: str) -> Any:
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return None if value is None else _decode(value, _inner(tp), where)
    if value is None:
        raise InputError(f"{where} is null")
    if origin is Literal:
        allowed = typing.get_args(tp)
        if not any(type(value) is type(a) and value == a for a in allowed):
            raise InputError(f"{where} is {value!r}, not one of {', '.join(map(repr, allowed))}")
        return value
    if origin in (list, tuple) or tp in (list, tuple):
        if not isinstance(value, list):
            raise InputError(f"{where} must be a list, is {_json_type(value)}")
        kinds = _items(tp, len(value))
        if len(kinds) != len(value):
            raise InputError(f"{where} must hold {len(kinds)} items, holds {len(value)}")
        out = [_decode(v, t, f"{where}[{i}]") for i, (v, t) in enumerate(zip(value, kinds))]
        return tuple(out) if origin is tuple or tp is tuple else out
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise InputError(f"{where} must be an object, is {_json_type(value)}")
        item = (typing.get_args(tp) or (str, Any))[1]
        return {k: _decode(v, item, f"{where}[{k!r}]") for k, v in value.items()}
    if tp is bool:
        if not isinstance(value, bool):
            raise InputError(f"{where} must be true or false, is {_json_type(value)}")
        return value
    if tp is int:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{where} must be a whole number, is {_json_type(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{where} must be a number, is {_json_type(value)}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise InputError(f"{where} must be text, is {_json_type(value)}")
        return value
    if isinstance(tp, type):
        if issubclass(tp, Serial):
            return tp.from_dict(value)  # the class may read an older shape (a caveat as plain text)
        from_dict = getattr(tp, "from_dict", None)
        if callable(from_dict):
            if not isinstance(value, dict):
                raise InputError(f"{where} must be an object, is {_json_type(value)}")
            return from_dict(value)
        if dataclasses.is_dataclass(tp):
            return from_data(tp, value)
    raise TypeError(f"serial has no rule for {where}'s type {tp}")


def _json_type(value: Any) -> str:
    """How JSON names the value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
