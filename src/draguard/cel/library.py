"""The CEL environment Kubernetes gives device selectors, built on cel-expr-python (Google's
cel-cpp): the base environment of k8s.io/apiserver/pkg/cel/environment/base.go as of 1.33+
and the DRA extensions of k8s.io/dynamic-resource-allocation/cel/compile.go.

- language options: optional types (`.?`, `orValue`, `[?x]`), cross-type numeric ordering
  (`1 < 2.5`, `1u < 2`; equality stays strictly typed at compile time), two-variable
  comprehensions, ext sets, ext strings v2, ext lists (`sort`, `sortBy`, `distinct`,
  `reverse`, `slice`, `flatten`, `lists.range`: cel-go's version 3, base environment since
  1.34; cel-cpp's version 2 has the same functions) and `cel.bind`;
- the Kubernetes libraries: quantity (`sign()` is a global function, the rest members),
  semver v1 (equality and order ignore build metadata), regex `find`/`findAll` with Go's
  regexp semantics (cel.goregex), lists with `includes` (ListsVersion 1, 1.37; for new
  objects only with DRAListTypeAttributes);
- homogeneous aggregate literals and regex-literal checks run on the checked AST
  (cel.compile_checks), as cel-go's checker and AST validators do.

cel-cpp cannot declare cross-type ordering as an option, so the ordering operators are taken
out of its standard library and declared again with the cross-type overloads; cel-cpp's own
runtime implements them (heterogeneous comparisons are on by default there)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, TypeAlias, TypeGuard

from . import strformat, netlib, rewrite, goconvert, goregex, namedformats
from .descriptors import TYPE_STRING, Field, MessageType, file_descriptor
from ..core.quantity import Form, QuantityError, add_forms, as_int64, is_quantity, parse_quantity_form, subtract_forms

if TYPE_CHECKING:
    import semver

#: cel-expr-python ships no type information, and the message classes below are made at run
#: time: what they are is Any to mypy, named here for what it holds
CelType: TypeAlias = Any  # a cel.Type
CelEnv: TypeAlias = Any  # a cel.Env
Message: TypeAlias = Any  # a message of _TYPES (a Quantity, a Semver, an IP...), its fields strings
#: a value cel-expr-python hands a Python implementation, or takes back from one: whatever the
#: expression computed (an int, a string, a list, a message...)
CelValue: TypeAlias = Any
#: one overload: (function, overload id, return type, parameter types, is member, implementation
#: (None: cel-cpp's own))
Overload: TypeAlias = tuple[str, str, CelType, list[CelType], bool, Callable[..., CelValue] | None]

_ORDERING = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater", "_>=_": "greater_equals"}
_REDECLARED = (*_ORDERING, "string")  # standard functions Kubernetes' libraries add overloads to
_ENV_CONFIG = """name: kubernetes-dra
extensions:
  - name: optional
  - name: sets
  - name: two-var-comprehensions
  - name: lists
    version: 2
stdlib:
  exclude_functions:
""" + "".join(f"    - name: {name}\n" for name in _REDECLARED) + namedformats.DECLARATIONS
# message types standing in for upstream's, named as they are so error messages read the same;
# draguard.ListElement is never written in an expression (see _lists_table)
_TYPES = {"kubernetes": ("Quantity", "Semver", "URL", "NamedFormat"), "net": ("IP", "CIDR"), "draguard": ("ListElement",)}
#: message fields beyond `value`: how upstream stores a quantity, and a version as written
#: (its build metadata, which equality and order ignore but a derived attribute's text keeps)
_FIELDS = {"Quantity": ("value", "form"), "Semver": ("value", "text")}


def _file_descriptor(package: str, names: tuple[str, ...]) -> bytes:
    """The proto3 file of `package`'s message types, each of string fields (_FIELDS, else `value`)."""
    return file_descriptor(f"draguard/cel_{package}.proto", package, "proto3", (
        MessageType(name, tuple(Field(field, number, TYPE_STRING)
                                for number, field in enumerate(_FIELDS.get(name, ("value",)), 1)))
        for name in names))


class _Runtime:
    """cel-expr-python and protobuf, imported when the first selector is compiled: commands
    that compile none (`draguard rules`, `explain`) do not load them; semver when a version
    is first read."""

    def __init__(self) -> None:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_strings
        from google.protobuf import descriptor_pool, message_factory

        self.cel = cel
        self.extensions = (ext_strings, ext_bindings)
        self.pool = descriptor_pool.DescriptorPool()
        for package, names in _TYPES.items():
            self.pool.AddSerializedFile(_file_descriptor(package, names))
        self.Quantity, self.Semver, self.URL, self.IP, self.CIDR, self.NamedFormat = (
            message_factory.GetMessageClass(self.pool.FindMessageTypeByName(name))
            for name in ("kubernetes.Quantity", "kubernetes.Semver", "kubernetes.URL", "net.IP", "net.CIDR",
                         "kubernetes.NamedFormat"))
        self.T = cel.Type
        self.QT, self.ST = cel.Type("kubernetes.Quantity"), cel.Type("kubernetes.Semver")
        self.URLT, self.IPT, self.CIDRT = cel.Type("kubernetes.URL"), cel.Type("net.IP"), cel.Type("net.CIDR")
        self.FormatT = cel.Type("kubernetes.NamedFormat")
        self.ElementT = cel.Type("draguard.ListElement")
        self.declarations = _declarations(self)
        self.config = cel.NewEnvConfigFromYaml(_ENV_CONFIG)

    @cached_property
    def version(self) -> type[semver.Version]:
        from semver import Version

        return Version

    def new_env(self, variables: dict[str, CelType], constants: dict[str, object] | None = None,
                includes: bool = True) -> CelEnv:
        """An environment with `variables` and quantity `constants` (folded literals); without
        the lists library's `includes` where the API server's environment for new objects
        lacks it (before 1.38 without DRAListTypeAttributes)."""
        cel = self.cel
        variables = dict(variables, **{name: self.QT for name in constants or {}})
        ext_strings, ext_bindings = self.extensions
        declared, merged = self.declarations
        functions = [d for name, d in declared.items() if includes or name != "includes"]
        # after ext strings, so its indexOf/lastIndexOf gain the list overloads instead of clashing
        lists = cel.CelExtension("kubernetes.lists", merged)
        return cel.NewEnv(self.pool, config=self.config, variables=variables, functions=functions,
                          extensions=[ext_strings.ExtStrings(version=2), ext_bindings.ExtBindings(), lists])


_RUNTIME: _Runtime | None = None


def runtime() -> _Runtime:
    global _RUNTIME
    if _RUNTIME is None:
        _RUNTIME = _Runtime()
    return _RUNTIME


# --- Quantity ---------------------------------------------------------------------------------

def quantity_message(value: Fraction, form: Form = None) -> object:
    """A Quantity value for CEL: the exact fraction, and how upstream would store it ("i:value:
    scale" for an int64Amount, "d" for an inf.Dec), which isInteger, asInteger and sums read.
    cel.rewrite routes every == and != on Quantities through draguard_equals, which
    compares the values only (apiservercel.Quantity.Equal uses Cmp), and list membership
    (`in`) through draguard_in, and the sets library's functions through draguard_sets_*."""
    encoded = "d" if form is None else f"i:{form[0]}:{form[1]}"
    return runtime().Quantity(value=f"{value.numerator}/{value.denominator}", form=encoded)


def quantity_value(message: Message) -> Fraction:
    return _fraction(message.value)


def _form(message: Message) -> Form:
    if message.form.startswith("i:"):
        _, value, scale = message.form.split(":")
        return int(value), int(scale)
    return None


@lru_cache(maxsize=8192)
def _fraction(text: str) -> Fraction:
    return Fraction(text)


def _quantity(text: str) -> object:
    try:
        return quantity_message(*parse_quantity_form(text, trim=False))
    except QuantityError as exc:
        raise ValueError(str(exc)) from None


def _as_integer(message: Message) -> int:
    value = as_int64(_form(message))
    if value is None:
        raise ValueError("cannot convert value to integer")
    return value


def _is_integer(message: Message) -> bool:
    return as_int64(_form(message)) is not None


def _add(a: Message, b: Message | int) -> object:
    other_value, other_form = (Fraction(b), (b, 0)) if isinstance(b, int) else (quantity_value(b), _form(b))
    return quantity_message(quantity_value(a) + other_value, add_forms(_form(a), other_form))


def _sub(a: Message, b: Message | int) -> object:
    other_value, other_form = (Fraction(b), (b, 0)) if isinstance(b, int) else (quantity_value(b), _form(b))
    return quantity_message(quantity_value(a) - other_value, subtract_forms(_form(a), other_form))


# --- Semver -----------------------------------------------------------------------------------

_NUMBER = r"(?:0|[1-9][0-9]*)"
_IDENTIFIER = r"[0-9A-Za-z-]+"
_SEMVER = re.compile(rf"({_NUMBER})\.({_NUMBER})\.({_NUMBER})"
                     rf"(?:-({_IDENTIFIER}(?:\.{_IDENTIFIER})*))?(?:\+({_IDENTIFIER}(?:\.{_IDENTIFIER})*))?")


def _check_version(text: str) -> None:
    """blang/semver/v4 Parse: strict MAJOR.MINOR.PATCH (ASCII, no leading zeros, each below
    2^64), prerelease identifiers without leading zeros when numeric, non-empty build parts."""
    match = _SEMVER.fullmatch(text)
    if not match or any(int(part) >= 2**64 for part in match.groups()[:3]) or any(
            p.isdigit() and len(p) > 1 and p[0] == "0" for p in (match.group(4) or "").split(".")):
        raise ValueError(f"{text!r} is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])")


@lru_cache(maxsize=4096)
def _version(text: str) -> semver.Version:
    """The version as the semver library holds it (to compare, or read a part of)."""
    _check_version(text)
    return runtime().version.parse(text)


def semver_message(text: str) -> object:
    """A Semver value for CEL: `value` without build metadata (what equality and order read:
    upstream's ignore it), `text` with it (what upstream's String() gives). A checked version
    is its own canonical text (no leading zeros, nothing to normalise), so the semver library
    (about 20 ms to import) is not needed to make one: the built-in inventory's devices carry
    version attributes, and a one-file lint makes them all."""
    _check_version(text)
    return runtime().Semver(value=text.partition("+")[0], text=text)


def _normalize_semver(text: str) -> str:
    """library.normalizeAndParse: drop a leading 'v' and leading zeros of the first three
    dot-separated parts, and fill in a missing minor/patch (a short version cannot carry
    prerelease or build data)."""
    parts = (text[1:] if text.startswith("v") else text).split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            parts[i] = part if part[:1].isdigit() and part[:1].isascii() else "0" + part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _semver(text: str, normalize: bool = False) -> object:
    try:
        return semver_message(_normalize_semver(text) if normalize else text)
    except ValueError as exc:
        raise ValueError(f"could not parse {text!r} as a semantic version: {exc}") from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _semver(text, normalize)
    except ValueError:
        return False
    return True


def _int64(value: int) -> int:
    """Go's int64(uint64) conversion."""
    return (value + 2**63) % 2**64 - 2**63


# --- shared by both types ---------------------------------------------------------------------

def _cmp(a: Fraction | int, b: Fraction | int) -> int:
    return (a > b) - (a < b)


def _compare(a: Message, b: Message) -> int:
    if isinstance(a, runtime().Semver):
        return _version(a.value).compare(_version(b.value))
    return _cmp(quantity_value(a), quantity_value(b))


def _scalars(T: Any) -> dict[str, CelType]:  # T: cel.Type, whose members are the scalar types
    """The ordered scalar types by their names in cel-cpp's overload ids: what the ordering
    operators, string() and the lists library's comparable functions take. The order counts:
    the checker types a call on an empty list literal by the first overload (`[].max()` is int)."""
    return {"int64": T.INT, "uint64": T.UINT, "double": T.DOUBLE, "bool": T.BOOL, "string": T.STRING,
            "bytes": T.BYTES, "duration": T.DURATION, "timestamp": T.TIMESTAMP}


def _ordering_overloads(rt: _Runtime) -> list[Overload]:
    """Every overload of the four ordering operators, the cross-type numeric ones included
    (cel-go's CrossTypeNumericComparisons); implementations are cel-cpp's built-ins."""
    T = rt.T
    numeric = {"int64": T.INT, "uint64": T.UINT, "double": T.DOUBLE}
    table: list[Overload] = []
    for operator, prefix in _ORDERING.items():
        for name, kind in _scalars(T).items():
            table.append((operator, f"{prefix}_{name}", T.BOOL, [kind, kind], False, None))
        for left, left_type in numeric.items():
            for right, right_type in numeric.items():
                if left != right:
                    table.append((operator, f"{prefix}_{left}_{right}", T.BOOL, [left_type, right_type], False, None))
    return table


def _string_overloads(rt: _Runtime) -> list[Overload]:
    """string() of the standard library (cel-cpp's built-ins), plus string(ip) and string(cidr)."""
    T = rt.T
    return [("string", f"{name}_to_string", T.STRING, [kind], False, None) for name, kind in _scalars(T).items()] + [
        ("string", "ip_to_string", T.STRING, [rt.IPT], False, lambda message: message.value),
        ("string", "cidr_to_string", T.STRING, [rt.CIDRT], False, None)]


# --- the Kubernetes lists library -------------------------------------------------------------

def _max(values: list[CelValue]) -> CelValue:
    return values[_extreme_index(values, "max")]


def _min(values: list[CelValue]) -> CelValue:
    return values[_extreme_index(values, "min")]


def _extreme_index(values: list[CelValue], function: str) -> int:
    """library.Lists max and min (cmp): the index of the first element each later one does not
    beat; one that does not compare with it (an error in cel-go's Compare) beats nothing, one
    that compares with nothing (a list, a map, null) is an error.
    cel.rewrite reads the element in CEL where Python would change its type."""
    if not values:
        raise ValueError(f"{function} called on empty list")
    _require_comparers(values, function)
    preferred = 1 if function == "max" else -1
    best = 0
    for index in range(1, len(values)):
        if _cel_compare(values[index], values[best]) == preferred:
            best = index
    return best


def _is_sorted(values: list[CelValue]) -> bool:
    """library.Lists isSorted: no element greater than the next; a pair that does not compare
    is passed over, an element that compares with nothing is an error (as _extreme_index)."""
    _require_comparers(values, "isSorted")
    return not any(_cel_compare(a, b) == 1 for a, b in zip(values, values[1:]))


def _require_comparers(values: list[CelValue], function: str) -> None:
    """cel-go's cmp and isSorted refuse an element that is no traits.Comparer."""
    if any(_comparable_kind(value) is None for value in values):
        raise ValueError(f"no such overload: {function}")


def _comparable_kind(value: object) -> str | None:
    if isinstance(value, bool):
        return "bool"
    for python_type, kind in ((int, "number"), (float, "number"), (str, "string"), ((bytes, bytearray), "bytes"),
                              (datetime.datetime, "timestamp"), (datetime.timedelta, "duration")):
        if isinstance(value, python_type):
            return kind
    return None


def _cel_compare(a: CelValue, b: CelValue) -> int | None:
    """cel-go's Compare of two values as Python has them: -1, 0 or 1, or None where cel-go's is
    an error (different kinds; numbers of any kind compare, as CrossTypeNumericComparisons)."""
    kind = _comparable_kind(a)
    if kind is None or kind != _comparable_kind(b):
        return None
    return int(a > b) - int(a < b)


def _index_of(values: list[CelValue] | str, item: CelValue) -> int:
    """library.Lists indexOf: the first `values[i].Equal(item) == True`; on a dyn target that
    is a string, ext strings' (code points), and no such overload for anything else."""
    if _is_string_search(values, item):
        return values.find(item)
    return next((i for i, value in enumerate(values) if rewrite.is_equal(value, item)), -1)


def _last_index_of(values: list[CelValue] | str, item: CelValue) -> int:
    if _is_string_search(values, item):
        return values.rfind(item)
    return next((i for i in range(len(values) - 1, -1, -1) if rewrite.is_equal(values[i], item)), -1)


def _is_string_search(values: list[CelValue] | str, item: CelValue) -> TypeGuard[str]:
    """Whether this is ext strings' search (a string in a string); no such overload for a
    target that is neither a list nor a string."""
    if isinstance(values, str) and isinstance(item, str):
        return True
    if not isinstance(values, list):
        raise ValueError("no such overload")
    return False


def _includes(target: CelValue, item: CelValue) -> bool:
    """library.Lists includes (ListsVersion 1, Kubernetes 1.37; IncludesOption with
    DRAListTypeAttributes from 1.36): a list holds an element Equal to `item`, any other value
    is Equal to it, so a selector reads a scalar and a list-typed attribute alike."""
    if isinstance(target, list):
        return any(rewrite.is_equal(value, item) for value in target)
    return rewrite.is_equal(target, item)


_LISTS: dict[str, tuple[Callable[[list[CelValue]], CelValue], str, str]] = {
    "isSorted": (_is_sorted, "comparable", "bool"),
    "sum": (lambda values: sum(values[1:], values[0]) if values else 0, "summable", "element"),
    "max": (_max, "comparable", "element"),
    "min": (_min, "comparable", "element"),
}


def _duration_sum(texts: list[str]) -> object:
    """library.Lists sum of durations, from cel-cpp's exact text of each: a Duration message,
    which cel-cpp reads with its nanoseconds; past int64 nanoseconds, cel-go's overflow error."""
    from google.protobuf import duration_pb2

    total = sum(goconvert.duration_nanoseconds(text) for text in texts)
    if not -(1 << 63) <= total < 1 << 63:
        raise ValueError("integer overflow")
    seconds, nanos = goconvert.seconds_and_nanos(total)
    return duration_pb2.Duration(seconds=seconds, nanos=nanos)


def _nan_unordered() -> bool:
    raise ValueError("NaN values cannot be ordered")


def _no_such_overload(function: str) -> CelValue:
    raise ValueError(f"no such overload: {function}")


def _uint_sum(values: list[int]) -> int:
    """library.Lists sum of uints (cel-expr-python hands them over as ints; the overload's
    return type makes the total a uint again); past 2^64, cel-go's overflow error."""
    total = sum(values)
    if total >= 1 << 64:
        raise ValueError("unsigned integer overflow")
    return total


def _lists_table(rt: _Runtime) -> list[Overload]:
    """library.Lists: isSorted, sum, max and min over the comparable or summable element types
    (templatedOverloads), indexOf and lastIndexOf over any. cel-cpp runs one implementation per
    argument kind and converts its result with that overload's return type, so each function's
    implementation hangs on one extra overload over draguard.ListElement (a type no expression
    can name) that returns dyn; the typed overloads keep the checker exact. indexOf and
    lastIndexOf take a second argument of each kind, so every typed overload carries one."""
    T = rt.T
    comparable = _scalars(T)
    kinds = {"comparable": comparable,
             "summable": {n: comparable[n] for n in ("int64", "uint64", "double", "duration")}}
    table: list[Overload] = []
    for name, (impl, kind, returns) in _LISTS.items():
        for type_name, element in kinds[kind].items():
            table.append((name, f"list_{type_name}_{name}", T.BOOL if returns == "bool" else element,
                          [T.List(element)], True, None))
        table.append((name, f"list_element_{name}", T.DYN, [T.List(rt.ElementT)], True, impl))
    # every message type is one argument kind, so lists of Quantity, Semver, IP... are left out
    anything = dict(comparable, list=T.List(T.DYN), map=T.Map(T.DYN, T.DYN))  # null would collide with all
    searches: tuple[tuple[str, Callable[[list[CelValue] | str, CelValue], int]], ...] = (
        ("indexOf", _index_of), ("lastIndexOf", _last_index_of))
    for name, search in searches:
        for type_name, element in anything.items():  # (list, int), (list, string)...: one kind each
            table.append((name, f"list_{type_name}_{name}", T.INT, [T.List(element), element], True, search))
    return table


def _function_table(rt: _Runtime) -> list[Overload]:
    """(name, overload id, return type, parameter types, is member, implementation): the
    Kubernetes quantity, semver and regex libraries."""
    T, QT, ST = rt.T, rt.QT, rt.ST
    return [
        ("quantity", "quantity_string", QT, [T.STRING], False, _quantity),
        ("isQuantity", "isQuantity_string", T.BOOL, [T.STRING], False, lambda text: is_quantity(text, trim=False)),
        ("sign", "quantity_sign", T.INT, [QT], False, lambda q: _cmp(quantity_value(q), 0)),
        ("isInteger", "quantity_isInteger", T.BOOL, [QT], True, _is_integer),
        ("asInteger", "quantity_asInteger", T.INT, [QT], True, _as_integer),
        ("asApproximateFloat", "quantity_asApproximateFloat", T.DOUBLE, [QT], True,
         lambda q: float(quantity_value(q))),
        ("add", "quantity_add", QT, [QT, QT], True, _add),
        ("add", "quantity_add_int", QT, [QT, T.INT], True, _add),
        ("sub", "quantity_sub", QT, [QT, QT], True, _sub),
        ("sub", "quantity_sub_int", QT, [QT, T.INT], True, _sub),
        # cel-cpp registers implementations by argument kind (message, message), so the Quantity
        # and Semver overloads of these three share one implementation that dispatches on type
        ("compareTo", "quantity_compareTo", T.INT, [QT, QT], True, _compare),
        ("isGreaterThan", "quantity_isGreaterThan", T.BOOL, [QT, QT], True, lambda a, b: _compare(a, b) > 0),
        ("isLessThan", "quantity_isLessThan", T.BOOL, [QT, QT], True, lambda a, b: _compare(a, b) < 0),
        ("semver", "semver_string", ST, [T.STRING], False, _semver),
        ("semver", "semver_string_bool", ST, [T.STRING, T.BOOL], False, _semver),
        ("isSemver", "isSemver_string", T.BOOL, [T.STRING], False, _is_semver),
        ("isSemver", "isSemver_string_bool", T.BOOL, [T.STRING, T.BOOL], False, _is_semver),
        ("major", "semver_major", T.INT, [ST], True, lambda s: _int64(_version(s.value).major)),
        ("minor", "semver_minor", T.INT, [ST], True, lambda s: _int64(_version(s.value).minor)),
        ("patch", "semver_patch", T.INT, [ST], True, lambda s: _int64(_version(s.value).patch)),
        ("compareTo", "semver_compareTo", T.INT, [ST, ST], True, None),
        ("isGreaterThan", "semver_isGreaterThan", T.BOOL, [ST, ST], True, None),
        ("isLessThan", "semver_isLessThan", T.BOOL, [ST, ST], True, None),
        ("find", "string_find", T.STRING, [T.STRING, T.STRING], True, goregex.find),
        ("findAll", "string_findAll", T.List(T.STRING), [T.STRING, T.STRING], True, goregex.find_all),
        ("findAll", "string_findAll_int", T.List(T.STRING), [T.STRING, T.STRING, T.INT], True, goregex.find_all),
        # what cel.rewrite routes comparisons of version, quantity and network values through
        ("draguard_equals", "draguard_equals_list_list", T.BOOL, [T.List(T.DYN), T.List(T.DYN)], False,
         lambda left, right: rewrite.equals(left[0], right[0])),
        ("draguard_in", "draguard_in_list_list", T.BOOL, [T.List(T.DYN), T.List(T.DYN)], False,
         lambda item, values: rewrite.contained(item[0], values)),
        ("draguard_format_fits", "draguard_format_fits_string_list", T.BOOL, [T.STRING, T.List(T.DYN)], False,
         strformat.arguments_fit),
        ("draguard_not_equals", "draguard_not_equals_list_list", T.BOOL, [T.List(T.DYN), T.List(T.DYN)], False,
         lambda left, right: rewrite.not_equals(left[0], right[0])),
        ("draguard_map_entries", "draguard_map_entries_list", T.Map(T.DYN, T.DYN), [T.List(T.DYN)], False,
         rewrite.map_entries),
        ("draguard_map_literal", "draguard_map_literal_list", T.Map(T.DYN, T.DYN), [T.List(T.DYN)], False,
         rewrite.map_literal),
        ("draguard_lists_range", "draguard_lists_range_int", T.List(T.INT), [T.INT], False, rewrite.lists_range),
        ("draguard_go_int", "draguard_go_int_string", T.INT, [T.STRING], False, goconvert.to_int),
        ("draguard_sort_order", "draguard_sort_order_list", T.List(T.INT), [T.List(T.DYN)], False,
         rewrite.sort_order),
        ("draguard_distinct_indices", "draguard_distinct_indices_list", T.List(T.INT), [T.List(T.DYN)], False,
         rewrite.distinct_indices),
        *((f"draguard_sets_{name}", f"draguard_sets_{name}_list_list", T.BOOL, [T.List(T.DYN), T.List(T.DYN)], False,
           getattr(rewrite, f"sets_{name}")) for name in ("contains", "intersects", "equivalent")),
        ("draguard_go_uint", "draguard_go_uint_string", T.UINT, [T.STRING], False, goconvert.to_uint),
        ("draguard_go_double", "draguard_go_double_string", T.DOUBLE, [T.STRING], False, goconvert.to_double),
        ("draguard_go_duration", "draguard_go_duration_string", T.STRING, [T.STRING], False, goconvert.to_duration),
        ("draguard_go_timestamp", "draguard_go_timestamp_string", T.STRING, [T.STRING], False, goconvert.to_timestamp),
        ("draguard_go_timestamp", "draguard_go_timestamp_string_bool", T.STRING, [T.STRING, T.BOOL], False,
         goconvert.to_timestamp),
        ("draguard_go_timestamp_text", "draguard_go_timestamp_text_string", T.STRING, [T.STRING], False,
         goconvert.timestamp_text),
        ("draguard_go_duration_text", "draguard_go_duration_text_string", T.STRING, [T.STRING], False,
         goconvert.duration_text),
        ("draguard_duration_nanoseconds", "draguard_duration_nanoseconds_string", T.INT, [T.STRING], False,
         goconvert.duration_nanoseconds),
        ("draguard_go_double_text", "draguard_go_double_text_double_string", T.STRING, [T.DOUBLE, T.STRING], False,
         goconvert.double_text),
        ("draguard_duration_sum", "draguard_duration_sum_list", T.DURATION, [T.List(T.STRING)], False,
         _duration_sum),
        ("draguard_no_such_overload", "draguard_no_such_overload_string", T.DYN, [T.STRING], False,
         _no_such_overload),
        ("draguard_uint_sum", "draguard_uint_sum_list", T.UINT, [T.List(T.DYN)], False, _uint_sum),
        ("draguard_nan_unordered", "draguard_nan_unordered", T.BOOL, [], False, _nan_unordered),
        ("draguard_split", "draguard_split_string_string", T.List(T.STRING), [T.STRING, T.STRING], False,
         rewrite.go_split),
        ("draguard_split", "draguard_split_string_string_int", T.List(T.STRING), [T.STRING, T.STRING, T.INT], False,
         rewrite.go_split),
        ("draguard_indexOf_offset", "draguard_indexOf_offset_string_string_int", T.INT,
         [T.STRING, T.STRING, T.INT], False, rewrite.index_of_offset),
        ("draguard_lastIndexOf_offset", "draguard_lastIndexOf_offset_string_string_int", T.INT,
         [T.STRING, T.STRING, T.INT], False, rewrite.last_index_of_offset),
        ("draguard_extreme_index", "draguard_extreme_index_list_string", T.INT, [T.List(T.DYN), T.STRING], False,
         _extreme_index),
        ("draguard_indexOf", "draguard_indexOf_list_list", T.INT, [T.List(T.DYN), T.List(T.DYN)], False,
         lambda target, item: _index_of(target[0], item[0])),
        ("draguard_lastIndexOf", "draguard_lastIndexOf_list_list", T.INT, [T.List(T.DYN), T.List(T.DYN)], False,
         lambda target, item: _last_index_of(target[0], item[0])),
        # the declaration the checker reads; cel.rewrite routes each call through draguard_includes
        ("includes", "list_includes_dyn_dyn", T.BOOL, [T.DYN, T.DYN], True, None),
        ("draguard_includes", "draguard_includes_list_list", T.BOOL, [T.List(T.DYN), T.List(T.DYN)], False,
         lambda target, item: _includes(target[0], item[0])),
    ] + _ordering_overloads(rt) + _string_overloads(rt) + _lists_table(rt) + netlib.function_table(rt) + \
        namedformats.function_table(rt)


_MERGED_WITH_EXT_STRINGS = frozenset({"indexOf", "lastIndexOf"})


@lru_cache(maxsize=1)
def python_functions_taking_values() -> frozenset[str]:
    """Names of the functions implemented in Python that take dyn values (or lists and maps of
    them), which may be handed anything the program makes (cel.optionals)."""
    return frozenset(name for name, _, _, params, _, impl in _function_table(runtime())
                     if impl and any("DYN" in str(p) or "ListElement" in str(p) for p in params))


def _declarations(rt: _Runtime) -> tuple[dict[str, Any], list[Any]]:
    """(declarations given as functions, by name; declarations given as an extension). Only an
    extension merges overloads into a name ext strings declares; only plain functions may
    re-declare overloads whose implementations cel-cpp's runtime already has."""
    cel = rt.cel
    by_name: dict[str, list[Any]] = {}  # cel.Overload objects
    for name, overload_id, returns, params, member, impl in _function_table(rt):
        overload = (cel.Overload(overload_id, returns, params, is_member=member, impl=impl) if impl else
                    cel.Overload(overload_id, returns, params, is_member=member))
        by_name.setdefault(name, []).append(overload)
    declarations = {name: cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()}
    return ({name: d for name, d in declarations.items() if name not in _MERGED_WITH_EXT_STRINGS},
            [d for name, d in declarations.items() if name in _MERGED_WITH_EXT_STRINGS])
