"""The checked AST of a compiled expression, read from cel-cpp's serialized
cel.expr.CheckedExpr (cel-spec proto/cel/expr/checked.proto and syntax.proto).

Only the fields the validations in cel.compile_checks read are declared; protobuf skips the rest.
Maps (type_map, positions) are declared as their wire form, repeated key/value entries.

The message classes are made at run time from that schema, so mypy cannot see them; the
Protocols below (Expr, Type and the messages they hold) state the fields the code reads, as
protobuf's Python API presents them (a repeated field is a sequence, an unset one its default)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Protocol

from .descriptors import (LABEL_OPTIONAL as _OPTIONAL, LABEL_REPEATED as _REPEATED, TYPE_BOOL as _BOOL,
                          TYPE_BYTES as _BYTES, TYPE_DOUBLE as _DOUBLE, TYPE_INT32 as _INT32, TYPE_INT64 as _INT64,
                          TYPE_MESSAGE as _MESSAGE, TYPE_STRING as _STRING, TYPE_UINT64 as _UINT64, Field,
                          MessageType, file_descriptor)

# message -> [(field, number, type, label, message type)]
_SCHEMA: dict[str, list[tuple[str, int, int, int, str | None]]] = {
    "Expr": [("id", 2, _INT64, _OPTIONAL, None), ("const_expr", 3, _MESSAGE, _OPTIONAL, "Constant"),
             ("ident_expr", 4, _MESSAGE, _OPTIONAL, "Ident"), ("select_expr", 5, _MESSAGE, _OPTIONAL, "Select"),
             ("call_expr", 6, _MESSAGE, _OPTIONAL, "Call"),
             ("list_expr", 7, _MESSAGE, _OPTIONAL, "CreateList"),
             ("struct_expr", 8, _MESSAGE, _OPTIONAL, "CreateStruct"),
             ("comprehension_expr", 9, _MESSAGE, _OPTIONAL, "Comprehension")],
    "Constant": [("null_value", 1, _INT32, _OPTIONAL, None), ("bool_value", 2, _BOOL, _OPTIONAL, None),
                 ("int64_value", 3, _INT64, _OPTIONAL, None), ("uint64_value", 4, _UINT64, _OPTIONAL, None),
                 ("double_value", 5, _DOUBLE, _OPTIONAL, None), ("string_value", 6, _STRING, _OPTIONAL, None),
                 ("bytes_value", 7, _BYTES, _OPTIONAL, None)],
    "Ident": [("name", 1, _STRING, _OPTIONAL, None)],
    "Select": [("operand", 1, _MESSAGE, _OPTIONAL, "Expr"), ("field", 2, _STRING, _OPTIONAL, None),
               ("test_only", 3, _BOOL, _OPTIONAL, None)],
    "Call": [("target", 1, _MESSAGE, _OPTIONAL, "Expr"), ("function", 2, _STRING, _OPTIONAL, None),
             ("args", 3, _MESSAGE, _REPEATED, "Expr")],
    "CreateList": [("elements", 1, _MESSAGE, _REPEATED, "Expr"), ("optional_indices", 2, _INT32, _REPEATED, None)],
    "CreateStruct": [("message_name", 1, _STRING, _OPTIONAL, None), ("entries", 2, _MESSAGE, _REPEATED, "Entry")],
    "Entry": [("id", 1, _INT64, _OPTIONAL, None), ("field_key", 2, _STRING, _OPTIONAL, None),
              ("map_key", 3, _MESSAGE, _OPTIONAL, "Expr"),
              ("value", 4, _MESSAGE, _OPTIONAL, "Expr"), ("optional_entry", 5, _BOOL, _OPTIONAL, None)],
    "Comprehension": [("iter_var", 1, _STRING, _OPTIONAL, None), ("iter_range", 2, _MESSAGE, _OPTIONAL, "Expr"),
                      ("accu_var", 3, _STRING, _OPTIONAL, None), ("accu_init", 4, _MESSAGE, _OPTIONAL, "Expr"),
                      ("loop_condition", 5, _MESSAGE, _OPTIONAL, "Expr"),
                      ("loop_step", 6, _MESSAGE, _OPTIONAL, "Expr"), ("result", 7, _MESSAGE, _OPTIONAL, "Expr"),
                      ("iter_var2", 8, _STRING, _OPTIONAL, None)],
    "Type": [("dyn", 1, _BYTES, _OPTIONAL, None), ("null", 2, _INT32, _OPTIONAL, None),
             ("primitive", 3, _INT32, _OPTIONAL, None), ("wrapper", 4, _INT32, _OPTIONAL, None),
             ("well_known", 5, _INT32, _OPTIONAL, None), ("list_type", 6, _MESSAGE, _OPTIONAL, "ListType"),
             ("map_type", 7, _MESSAGE, _OPTIONAL, "MapType"), ("message_type", 9, _STRING, _OPTIONAL, None),
             ("type_param", 10, _STRING, _OPTIONAL, None), ("type", 11, _MESSAGE, _OPTIONAL, "Type"),
             ("error", 12, _BYTES, _OPTIONAL, None), ("abstract_type", 14, _MESSAGE, _OPTIONAL, "AbstractType")],
    "ListType": [("elem_type", 1, _MESSAGE, _OPTIONAL, "Type")],
    "MapType": [("key_type", 1, _MESSAGE, _OPTIONAL, "Type"), ("value_type", 2, _MESSAGE, _OPTIONAL, "Type")],
    "AbstractType": [("name", 1, _STRING, _OPTIONAL, None), ("parameter_types", 2, _MESSAGE, _REPEATED, "Type")],
    "TypeEntry": [("key", 1, _INT64, _OPTIONAL, None), ("value", 2, _MESSAGE, _OPTIONAL, "Type")],
    "PositionEntry": [("key", 1, _INT64, _OPTIONAL, None), ("value", 2, _INT32, _OPTIONAL, None)],
    "SourceInfo": [("positions", 4, _MESSAGE, _REPEATED, "PositionEntry")],
    "Reference": [("name", 1, _STRING, _OPTIONAL, None), ("overload_id", 3, _STRING, _REPEATED, None)],
    "ReferenceEntry": [("key", 1, _INT64, _OPTIONAL, None), ("value", 2, _MESSAGE, _OPTIONAL, "Reference")],
    "CheckedExpr": [("reference_map", 2, _MESSAGE, _REPEATED, "ReferenceEntry"),
                    ("type_map", 3, _MESSAGE, _REPEATED, "TypeEntry"), ("expr", 4, _MESSAGE, _OPTIONAL, "Expr"),
                    ("source_info", 5, _MESSAGE, _OPTIONAL, "SourceInfo")],
    "Any": [("type_url", 1, _STRING, _OPTIONAL, None), ("value", 2, _BYTES, _OPTIONAL, None)],
}
PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}  # Type.PrimitiveType
_WELL_KNOWN = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


# the oneof each message's kinds belong to, as in the .proto files (WhichOneof names the one set)
_KINDS: dict[str, tuple[str, set[str]]] = {"Expr": ("expr_kind", {"const_expr", "ident_expr", "select_expr", "call_expr", "list_expr", "struct_expr",
                                 "comprehension_expr"}),
          "Type": ("type_kind", {name for name, *_ in _SCHEMA["Type"]}),
          "Constant": ("constant_kind", {name for name, *_ in _SCHEMA["Constant"]})}


class Message(Protocol):
    """What every message of the schema answers (google.protobuf.message.Message)."""

    def WhichOneof(self, oneof_group: str) -> str | None: ...  # noqa: N802 - protobuf's name

    def HasField(self, field_name: str) -> bool: ...  # noqa: N802 - protobuf's name

    def SerializeToString(self, *, deterministic: bool = ...) -> bytes: ...  # noqa: N802 - protobuf's name


class Constant(Message, Protocol):
    null_value: int
    bool_value: bool
    int64_value: int
    uint64_value: int
    double_value: float
    string_value: str
    bytes_value: bytes


class Ident(Message, Protocol):
    name: str


class Select(Message, Protocol):
    operand: Expr
    field: str
    test_only: bool


class Call(Message, Protocol):
    target: Expr
    function: str
    args: Sequence[Expr]


class CreateList(Message, Protocol):
    elements: Sequence[Expr]
    optional_indices: Sequence[int]


class Entry(Message, Protocol):
    id: int
    field_key: str
    map_key: Expr
    value: Expr
    optional_entry: bool


class CreateStruct(Message, Protocol):
    message_name: str
    entries: Sequence[Entry]


class Comprehension(Message, Protocol):
    iter_var: str
    iter_var2: str
    iter_range: Expr
    accu_var: str
    accu_init: Expr
    loop_condition: Expr
    loop_step: Expr
    result: Expr


class Expr(Message, Protocol):
    """One node of the checked AST (cel.expr.Expr); WhichOneof("expr_kind") names its kind."""

    id: int
    const_expr: Constant
    ident_expr: Ident
    select_expr: Select
    call_expr: Call
    list_expr: CreateList
    struct_expr: CreateStruct
    comprehension_expr: Comprehension


class ListType(Message, Protocol):
    elem_type: Type


class MapType(Message, Protocol):
    key_type: Type
    value_type: Type


class AbstractType(Message, Protocol):
    name: str
    parameter_types: Sequence[Type]


class Type(Message, Protocol):
    """A checked type (cel.expr.Type); WhichOneof("type_kind") names its kind."""

    primitive: int
    wrapper: int
    well_known: int
    list_type: ListType
    map_type: MapType
    message_type: str
    type_param: str
    type: Type
    abstract_type: AbstractType


def _file_descriptor() -> bytes:
    """The schema as a proto2 file (presence for every field), each _KINDS oneof its message's."""
    messages = []
    for message_name, fields in _SCHEMA.items():
        oneof, members = _KINDS.get(message_name, (None, set()))
        messages.append(MessageType(message_name, tuple(
            Field(name, number, kind, label, f".draguard.celast.{type_name}" if type_name else None,
                  0 if name in members else None)
            for name, number, kind, label, type_name in fields), (oneof,) if oneof else ()))
    return file_descriptor("draguard/cel_checked.proto", "draguard.celast", "proto2", messages)


@lru_cache(maxsize=1)
def _messages() -> dict[str, Any]:
    """The schema's message classes by name. Any: protobuf makes them at run time."""
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(_file_descriptor())
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"draguard.celast.{name}"))
            for name in _SCHEMA}


@dataclass
class CheckedAst:
    """A checked expression as the validations read it: the tree, each node's type, position and kept overloads."""
    root: Expr
    types: dict[int, Type]  # expression id -> Type
    positions: dict[int, int]  # expression id -> character offset
    overloads: dict[int, tuple[str, ...]]  # call expression id -> the overload ids the checker kept

    def type_name(self, expr_id: int) -> str:
        return type_name(self.types.get(expr_id))

    @cached_property
    def nodes(self) -> list[tuple[Expr, tuple[Expr, ...]]]:
        """walk(root), once: every rewrite and check asks for all nodes of the same tree."""
        return list(walk(self.root))


def checked_ast(serialized: bytes) -> CheckedAst:
    """Decode cel-expr-python's Expression.serialize() (an Any holding a CheckedExpr)."""
    messages = _messages()
    wrapper = messages["Any"].FromString(serialized)
    checked = messages["CheckedExpr"].FromString(wrapper.value)
    return CheckedAst(checked.expr, {e.key: e.value for e in checked.type_map},
                      {p.key: p.value for p in checked.source_info.positions},
                      {e.key: tuple(e.value.overload_id) for e in checked.reference_map if e.value.overload_id})


def equivalent(a: Type, b: Type) -> bool:
    """cel-go's Type.IsEquivalentType: the same kind, name and parameters."""
    return a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def type_name(t: Type | None) -> str:
    """A type as cel-go prints it in checker errors."""
    if t is None:
        return "dyn"
    kind = t.WhichOneof("type_kind")
    if kind == "primitive":
        return PRIMITIVES.get(t.primitive, "dyn")
    if kind == "well_known":
        return _WELL_KNOWN.get(t.well_known, "dyn")
    if kind == "wrapper":
        return f"wrapper({PRIMITIVES.get(t.wrapper, 'dyn')})"
    if kind == "list_type":
        return f"list({type_name(t.list_type.elem_type)})"
    if kind == "map_type":
        return f"map({type_name(t.map_type.key_type)}, {type_name(t.map_type.value_type)})"
    if kind == "message_type":
        return t.message_type
    if kind == "type_param":
        return t.type_param
    if kind == "type":
        return f"type({type_name(t.type)})"
    if kind == "abstract_type":
        params = ", ".join(type_name(p) for p in t.abstract_type.parameter_types)
        return f"{t.abstract_type.name}({params})" if params else t.abstract_type.name
    if kind == "null":
        return "null_type"
    if kind == "error":
        return "*error*"
    return "dyn"


def children(expr: Expr) -> list[Expr]:
    """The direct subexpressions of `expr`."""
    kind = expr.WhichOneof("expr_kind")
    if kind == "select_expr":
        return [expr.select_expr.operand]
    if kind == "call_expr":
        call = expr.call_expr
        return ([call.target] if call.HasField("target") else []) + list(call.args)
    if kind == "list_expr":
        return list(expr.list_expr.elements)
    if kind == "struct_expr":
        return [part for entry in expr.struct_expr.entries for part in (entry.map_key, entry.value)]
    if kind == "comprehension_expr":
        c = expr.comprehension_expr
        return [c.iter_range, c.accu_init, c.loop_condition, c.loop_step, c.result]
    return []


def walk(expr: Expr, ancestors: tuple[Expr, ...] = ()) -> Iterator[tuple[Expr, tuple[Expr, ...]]]:
    """(expression, its ancestors outermost first) for every node, depth first."""
    yield expr, ancestors
    for child in children(expr):
        yield from walk(child, ancestors + (expr,))
