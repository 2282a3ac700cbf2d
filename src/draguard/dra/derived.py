"""Derived attributes (DRADerivedAttributes, KEP-5963's sibling in the experimental
allocator): a request names an attribute and a CEL expression over the device; a constraint
of its claim that names that attribute reads the expression's value on each device in place
of the device's own attribute (upstream allocator_experimental.go lookupAttribute).

Mirrored from k8s.io/dynamic-resource-allocation/cel (compile.go): the expression compiles in
the stored-expressions environment, where lists are always allowed (validateOutputType: a
bool, int, string or semver, dyn, or a list of one of those), and its value becomes a device
attribute as valToDeviceAttribute makes it: a list takes the type of its first item and every
other item must have it; an empty list is a list of strings; a semver keeps its build
metadata."""

from __future__ import annotations

import re
from functools import lru_cache, partial

from ..cel.env import CelRuntimeError, CompiledSelector, Output, compile_expression
from .devices import Attr

_SCALARS = {"BOOL": "bool", "INT": "int", "STRING": "string", "kubernetes.Semver": "version"}
_ELEMENT_TYPES = {*_SCALARS, "DYN"}
_LIST_OF = re.compile(r"LIST<(.*)>")


def _refusal(returns, ast, allow_lists: bool) -> str | None:
    name = "null_type" if _null_first(ast) else returns.name()
    listed = _LIST_OF.fullmatch(name) if allow_lists else None
    if name in _ELEMENT_TYPES or (listed and listed.group(1) in _ELEMENT_TYPES):
        return None
    lists = " or a list of these scalars" if allow_lists else ""
    return f"must evaluate to a primitive scalar (string, integer, boolean, semver){lists}, not {_cel_go_name(name)}"


def _null_first(ast) -> bool:
    """`cond ? null : <a Semver or Quantity>`: cel-go types the conditional as its first
    branch, null_type, where cel-cpp takes the message type."""
    root = ast.root
    if not root.HasField("call_expr") or root.call_expr.function != "_?_:_":
        return False
    _, first, second = root.call_expr.args
    return ast.type_name(first.id) == "null_type" and "." in ast.type_name(second.id)


def _cel_go_name(name: str) -> str:
    """cel-cpp's type name as cel-go spells it in the message (list(int), map(string, int))."""
    return name.replace("<", "(").replace(">", ")").lower() if not name.startswith("kubernetes.") else name


def _convert(result):
    kind = _SCALARS.get(result.type().name())
    if kind is not None:
        return Attr(kind, _plain(kind, result.value()))
    if not result.type().name().startswith("LIST"):
        return CelRuntimeError(f"unsupported CEL return type: {result.type().name().lower()}")
    items = result.value()
    if not items:
        return Attr("strings", ())
    kind = _SCALARS.get(items[0].type().name())
    if kind is None:
        return CelRuntimeError(f"unsupported list element type: {items[0].type().name().lower()}")
    values = []
    for index, item in enumerate(items):
        if _SCALARS.get(item.type().name()) != kind:
            return CelRuntimeError(f"expected list element at index {index} to be {kind}, got "
                                   f"{item.type().name().lower()}")
        values.append(_plain(kind, item.value()))
    return Attr(kind + "s", tuple(values))


def _plain(kind: str, value):
    """A CEL value as the device model keeps an attribute's (a semver as its text, build
    metadata included, as upstream's String() gives it)."""
    if kind == "version":
        return value.text
    if kind == "bool":
        return bool(value)
    return value


_OUTPUTS = {allow_lists: Output(partial(_refusal, allow_lists=allow_lists), _convert) for allow_lists in (True, False)}


@lru_cache(maxsize=4096)
def compile_derived(expression: str, allow_lists: bool = True, allow_multiple_allocations: bool = True,
                    includes: bool = True) -> CompiledSelector:
    """A derived attribute's expression compiled as the allocator does
    (cel.Cache.GetOrCompileDerivedAttribute: stored expressions, lists allowed), or as the API
    server does for a new claim (lists, device.allowMultipleAllocations and `includes` only
    while DRAListTypeAttributes and DRAConsumableCapacity are on), cached by its arguments."""
    return compile_expression(expression, _OUTPUTS[allow_lists], allow_multiple_allocations, includes)
