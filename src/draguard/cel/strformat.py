"""format() clauses as cel-go's strings library (version 2, ext/formatting.go) reads and checks
them: `%%`, then `%[.precision]verb` for the verbs s d f e b x X o, each taking the next list
element. Shared by the compile-time check on literal arguments (cel.compile_checks) and the
run-time check on dyn ones (cel.rewrite), which cel-cpp's own format does not make."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .checked import Expr

# verb -> (the kinds it accepts, what the error says); a dyn element is checked when it runs
_ACCEPTS = {
    "s": ({"list", "map", "int", "uint", "double", "bool", "string", "google.protobuf.Timestamp", "bytes",
           "google.protobuf.Duration", "type", "null_type"},
          "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, "
          "and timestamps"),
    "d": ({"int", "uint"}, "decimal clause can only be used on integers"),
    "f": ({"double", "string"}, "fixed-point clause can only be used on doubles"),
    "e": ({"double", "string"}, "scientific clause can only be used on doubles"),
    "b": ({"int", "uint", "bool"}, "only integers and bools can be formatted as binary"),
    "x": ({"int", "uint", "string", "bytes"}, "only integers, byte buffers, and strings can be formatted as hex"),
    "o": ({"int", "uint"}, "octal clause can only be used on integers"),
}
_ACCEPTS["X"] = _ACCEPTS["x"]


class FormatError(ValueError):
    pass


def clauses(text: str, available: int) -> Iterator[str]:
    """The verbs of `text`, one at a time (parseFormatString checks each clause's argument
    before reading the next clause); FormatError as cel-go words it when the string does not
    parse or asks for more than `available` arguments."""
    count, i = 0, 0
    while i < len(text):
        if text[i] != "%":
            i += 1
            continue
        if text[i + 1:i + 2] == "%":
            i += 2
            continue
        if i + 1 >= len(text):
            raise FormatError("unexpected end of string")
        if count >= available:
            raise FormatError(f"index {count} out of range")
        i += 1
        if text[i] == ".":
            end = i + 1
            while end < len(text) and text[end] in "0123456789":
                end += 1
            if end >= len(text):
                raise FormatError("could not parse formatting clause: error while parsing precision: "
                                  "could not find end of precision specifier")
            if end == i + 1:
                raise FormatError('could not parse formatting clause: error while parsing precision: error while '
                                  'converting precision to integer: strconv.Atoi: parsing "": invalid syntax')
            i = end
        if text[i] not in _ACCEPTS:
            raise FormatError(f'could not parse formatting clause: unrecognized formatting clause "{text[i]}"')
        yield text[i]
        count += 1
        i += 1


def clause_error(verb: str, kind: str) -> str | None:
    """cel-go's message when `verb` cannot format a value of `kind` (a TypeName), else None."""
    kinds, message = _ACCEPTS[verb]
    return None if kind == "dyn" or kind in kinds else f"error during formatting: {message}, was given {kind}"


def literal_format_call(expr: Expr) -> tuple[str, list[Expr]] | None:
    """(format string, list elements) of `'...'.format([...])`, else None."""
    call = expr.call_expr if expr.HasField("call_expr") else None
    if call is None or call.function != "format" or not call.HasField("target") or len(call.args) != 1:
        return None
    target, arguments = call.target, call.args[0]
    if not (target.HasField("const_expr") and target.const_expr.HasField("string_value")) or \
            not arguments.HasField("list_expr"):
        return None
    return target.const_expr.string_value, list(arguments.list_expr.elements)


def runtime_kind(value: object) -> str:
    """The TypeName of a value as cel-expr-python hands it to Python (a uint reads as int,
    bytes as a bytearray)."""
    for python_type, kind in ((bool, "bool"), (int, "int"), (float, "double"), (str, "string"),
                              ((bytes, bytearray), "bytes"), (list, "list"), (dict, "map"),
                              (datetime.datetime, "google.protobuf.Timestamp"),
                              (datetime.timedelta, "google.protobuf.Duration")):
        if isinstance(value, python_type):
            return kind
    if value is None:
        return "null_type"
    return getattr(getattr(value, "DESCRIPTOR", None), "full_name", "unknown")


def arguments_fit(text: str, arguments: list[object]) -> bool:
    """True once each argument has the kind its clause needs (what cel-go checks as it
    formats); FormatError with cel-go's message where one does not."""
    for verb, value in zip(clauses(text, len(arguments)), arguments):
        for part in _printed(value) if verb == "s" else (value,):
            error = clause_error(verb, runtime_kind(part))
            if error:
                raise FormatError(error)
    return True


def _printed(value: object) -> Iterator[object]:
    """A value and, for lists and maps, everything %s prints of them."""
    yield value
    nested = value if isinstance(value, list) else [p for kv in value.items() for p in kv] if isinstance(value, dict) else []
    for part in nested:
        yield from _printed(part)
