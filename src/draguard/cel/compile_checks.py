"""Checks Kubernetes' CEL environment makes at compile time that cel-cpp does not, run on the
checked AST (cel.checked):

- homogeneous aggregate literals (cel.HomogeneousAggregateLiterals and
  cel.ValidateHomogeneousAggregateLiterals): every element of a list literal, and every key
  and every value of a map literal, has exactly the type of the first one (`[1, 'a']`,
  `[1, dyn(2)]` and `{'a': 1, 'b': 'x'}` are rejected); literals inside a `format()` call are
  exempt, as ext strings declares;
- regular-expression literals (cel.ValidateRegexLiterals): a constant pattern given to
  `s.matches(p)` must compile ("invalid matches argument"); the constant patterns of
  `matches(s, p)`, `find` and `findAll` are compiled when the program is built (regex
  optimizations), so a bad one fails there;
- format strings (ext strings' stringFormatValidator): a literal `'...'.format([...])` has its
  clauses parsed and each checked against the type of the list element it formats;
- duration and timestamp literals (cel.ValidateDurationLiterals, ValidateTimestampLiterals):
  `duration('1d')` and `timestamp('2020-13-01T00:00:00Z')` are compile errors ("invalid
  duration argument"), judged by evaluating the call (`converts`, given by the caller);
- an overload cel-cpp declares more loosely: ext lists' `flatten()` takes a list of lists
  (list_flatten: list(list(T))), not any list."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Callable

from . import strformat, goregex
from .checked import CheckedAst, Expr, Type, children, equivalent, type_name

_EXEMPT_FUNCTIONS = frozenset({"format"})
_PRECOMPILED_REGEX_FUNCTIONS = frozenset({"matches", "find", "findAll"})


@dataclass(frozen=True)
class Problem:
    message: str
    offset: int


_CONVERSIONS = frozenset({"duration", "timestamp"})


def first_problem(ast: CheckedAst, converts: Callable[[str, str], bool] = lambda function, text: True) -> Problem | None:
    """The first problem upstream reports. Compile-time validators (homogeneous literals; the
    regex validator, which sees only the member form `s.matches(p)`) report together, sorted
    by position; only without them is the program built, which compiles the constant patterns
    of `matches(s, p)`, `find` and `findAll` (the first one failing, in pre-order)."""
    nodes = ast.nodes
    checker = [p for p in (_flatten_problem(ast, expr) for expr, _ in nodes) if p]
    if checker:  # the checker's errors stop cel-go before any validator runs
        return min(checker, key=lambda p: p.offset)
    at_compile = [p for p in (_literal_problem(ast, expr, ancestors) or _regex_problem(ast, expr, member=True)
                              or _format_problem(ast, expr) or _conversion_problem(ast, expr, converts)
                              for expr, ancestors in nodes) if p]
    if at_compile:
        return min(at_compile, key=lambda p: p.offset)
    return next(filter(None, (_regex_problem(ast, expr, member=False) for expr, _ in nodes)), None)


def _conversion_problem(ast: CheckedAst, expr: Expr, converts: Callable[[str, str], bool]) -> Problem | None:
    """`duration(s)` or `timestamp(s)` of a string literal that does not convert."""
    if not expr.HasField("call_expr") or expr.call_expr.function not in _CONVERSIONS or expr.call_expr.HasField("target") \
            or len(expr.call_expr.args) != 1:
        return None
    argument = expr.call_expr.args[0]
    if not (argument.HasField("const_expr") and argument.const_expr.HasField("string_value")):
        return None
    if converts(expr.call_expr.function, argument.const_expr.string_value):
        return None
    return Problem(f"invalid {expr.call_expr.function} argument", ast.positions.get(argument.id, 0))


def _flatten_problem(ast: CheckedAst, expr: Expr) -> Problem | None:
    """`l.flatten()` on a list whose elements are known not to be lists (dyn ones may be)."""
    if not expr.HasField("call_expr") or expr.call_expr.function != "flatten" or expr.call_expr.args \
            or not expr.call_expr.HasField("target"):
        return None
    target = ast.types.get(expr.call_expr.target.id)
    if target is None or not target.HasField("list_type"):
        return None
    element = target.list_type.elem_type
    if element.WhichOneof("type_kind") in ("list_type", "dyn", "type_param", "error", None):
        return None
    return Problem(f"found no matching overload for 'flatten' applied to '({type_name(target)})'",
                   ast.positions.get(expr.id, 0))


def _unwrapped_optional(t: Type) -> Type:
    """T of optional_type(T), for optional list elements and map entries."""
    if t.HasField("abstract_type") and t.abstract_type.name == "optional_type":
        return t.abstract_type.parameter_types[0]
    return t


def _mismatch(ast: CheckedAst, ids_and_types: Iterable[tuple[int, Type]]) -> Problem | None:
    first: Type | None = None
    for expr_id, t in ids_and_types:
        if first is None:
            first = t
            continue
        if not equivalent(first, t):
            return Problem(f"expected type '{type_name(first)}' but found '{type_name(t)}'",
                           ast.positions.get(expr_id, 0))
    return None


def _literal_problem(ast: CheckedAst, expr: Expr, ancestors: tuple[Expr, ...]) -> Problem | None:
    if not (expr.HasField("list_expr") or expr.HasField("struct_expr")):
        return None
    if any(a.HasField("call_expr") and a.call_expr.function in _EXEMPT_FUNCTIONS for a in ancestors):
        return None
    if expr.HasField("list_expr"):
        optional = set(expr.list_expr.optional_indices)
        return _mismatch(ast, [(e.id, _unwrapped_optional(ast.types[e.id]) if i in optional else ast.types[e.id])
                               for i, e in enumerate(expr.list_expr.elements) if e.id in ast.types])
    entries = [entry for entry in expr.struct_expr.entries if entry.HasField("map_key")]
    return (_mismatch(ast, [(e.map_key.id, ast.types[e.map_key.id]) for e in entries if e.map_key.id in ast.types])
            or _mismatch(ast, [(e.value.id, _unwrapped_optional(ast.types[e.value.id]) if e.optional_entry
                                else ast.types[e.value.id]) for e in entries if e.value.id in ast.types]))


def _regex_problem(ast: CheckedAst, expr: Expr, member: bool) -> Problem | None:
    """A constant pattern that does not compile: for `s.matches(p)` when `member` (the
    validator's "invalid matches argument"), else for `matches(s, p)`, `find` and `findAll`
    (the program fails to build)."""
    if not expr.HasField("call_expr"):
        return None
    call = expr.call_expr
    is_member = call.HasField("target")
    if member != (is_member and call.function == "matches"):
        return None
    if not member and call.function not in _PRECOMPILED_REGEX_FUNCTIONS:
        return None
    arguments = ([call.target] if is_member else []) + list(call.args)
    if len(arguments) < 2:
        return None
    pattern = arguments[1]
    if not (pattern.HasField("const_expr") and pattern.const_expr.HasField("string_value")):
        return None
    try:
        goregex.compile_pattern(pattern.const_expr.string_value)
    except goregex.RegexError as exc:
        offset = ast.positions.get(pattern.id, 0)
        return Problem("invalid matches argument" if member else f"program instantiation failed: {exc}", offset)
    return None


# --- format strings (cel-go ext/formatting.go, strings library version 2) ----------------------

def _kind(ast: CheckedAst, expr_id: int) -> str:
    """cel-go's Type.TypeName: the kind's name, without type parameters."""
    return ast.type_name(expr_id).split("(")[0]


def _unprintable(ast: CheckedAst, expr: Expr) -> int | None:
    """verifyString: the id of the first (possibly nested) literal element %s cannot print."""
    if strformat.clause_error("s", _kind(ast, expr.id)):
        return expr.id
    nested = children(expr) if expr.WhichOneof("expr_kind") in ("list_expr", "struct_expr") else []
    return next((found for found in (_unprintable(ast, e) for e in nested) if found is not None), None)


def _format_problem(ast: CheckedAst, expr: Expr) -> Problem | None:
    """A literal format string whose clauses do not fit its list literal's elements."""
    call = strformat.literal_format_call(expr)
    if call is None:
        return None
    text, elements = call
    used = 0
    try:
        for verb, element in zip(strformat.clauses(text, len(elements)), elements):
            used += 1
            bad = _unprintable(ast, element) if verb == "s" else element.id
            if bad is None:
                continue
            error = strformat.clause_error(verb, _kind(ast, bad))
            if error:
                return Problem(error, ast.positions.get(bad, 0))
    except strformat.FormatError as exc:
        return Problem(str(exc), ast.positions.get(expr.id, 0))
    if len(elements) > used:
        return Problem(f"too many arguments supplied to string.format (expected {used}, got {len(elements)})",
                       ast.positions.get(expr.id, 0))
    return None
