"""What a plain YAML scalar means, as PyYAML's safe loader reads it (YAML 1.1: `0o7` is text,
`010` octal, `1:30` sexagesimal, `yes` and `on` booleans, `~` null), without importing PyYAML.

The block reader (sources.blockyaml) reads most files whole; importing `yaml` only for its
resolver cost a one-file lint 15 ms at every start (its reader compiles a pattern of all of
Unicode's printable ranges at import). Mirrors PyYAML 6.0's `yaml/resolver.py` (the implicit
resolvers, in the order added, keyed by first character) and `yaml/constructor.py`
(SafeConstructor's construct_yaml_int, construct_yaml_float and bool_values);
tests/unit/sources/test_resolver.py holds them to PyYAML's answers."""

from __future__ import annotations

import re

from ..core.patterns import Lazy

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
MERGE = "tag:yaml.org,2002:merge"

_BOOL = (BOOL, Lazy(r"""^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$""", re.X))
_FLOAT = (FLOAT, Lazy(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", re.X))
_INT = (INT, Lazy(r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""", re.X))
_MERGE = (MERGE, Lazy(r"^(?:<<)$"))
_NULL = (NULL, Lazy(r"""^(?: ~
                    |null|Null|NULL
                    | )$""", re.X))
_TIMESTAMP = ("tag:yaml.org,2002:timestamp", Lazy(r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""", re.X))
_VALUE = ("tag:yaml.org,2002:value", Lazy(r"^(?:=)$"))
_YAML = ("tag:yaml.org,2002:yaml", Lazy(r"^(?:!|&|\*)$"))

def _by_first() -> dict[str, list[tuple[str, Lazy]]]:
    """The resolvers to try by a scalar's first character ('' for the empty scalar), in PyYAML's order."""
    table: dict[str, list[tuple[str, Lazy]]] = {}
    for resolver, firsts in ((_BOOL, "yYnNtTfFoO"), (_FLOAT, "-+0123456789."), (_INT, "-+0123456789"), (_MERGE, "<"),
                             (_NULL, ("~", "n", "N", "")), (_TIMESTAMP, "0123456789"), (_VALUE, "="), (_YAML, "!&*")):
        for first in firsts:
            table.setdefault(first, []).append(resolver)
    return table


_BY_FIRST = _by_first()


def tag_of(text: str) -> str:
    """The tag a plain scalar of this text resolves to (Resolver.resolve of a plain scalar)."""
    for tag, pattern in _BY_FIRST.get(text[:1], ()):
        if pattern.match(text):
            return tag
    return STR


def value_of(tag: str, text: str) -> object:
    """A plain scalar's value by its tag; timestamps, merge keys and the rest stay text, as
    sigs.k8s.io/yaml turns them to JSON strings. An integer past Python's 4,300 digits is a
    ValueError, as it is to PyYAML."""
    if tag == INT:
        return _int(text)
    if tag == BOOL:
        return _BOOLEANS[text.lower()]
    if tag == NULL:
        return None
    if tag == FLOAT:
        return _float(text)
    return text


_BOOLEANS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}
_INF = float("inf")
_NAN = -_INF / _INF  # PyYAML's quiet NaN, made the same way


def _int(text: str) -> int:
    value = text.replace("_", "")
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == "0":
        return 0
    if value.startswith("0b"):
        return sign * int(value[2:], 2)
    if value.startswith("0x"):
        return sign * int(value[2:], 16)
    if value[0] == "0":
        return sign * int(value, 8)
    if ":" in value:
        return sign * _sexagesimal(value, int)
    return sign * int(value)


def _float(text: str) -> float:
    value = text.replace("_", "").lower()
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * _INF
    if value == ".nan":
        return _NAN
    if ":" in value:
        return sign * _sexagesimal(value, float)
    return sign * float(value)


def _sexagesimal(value: str, number):
    """`1:30:00` as 5400 (base 60, the last part the units)."""
    total = number(0)
    base = 1
    for part in reversed(value.split(":")):
        total += number(part) * base
        base *= 60
    return total
