"""Where cel-cpp evaluates differently from cel-go, the evaluated program is rewritten so
that cel-go's semantics apply: equality of Kubernetes' value types, the kinds format()
clauses accept at run time (cel.strformat), and the format library's optional results
(cel.namedformats).

Equality:
cel-go asks the left operand: a Semver, Quantity, IP, CIDR or URL on the left of `==` or `!=`
answers "no such overload" unless the right one has its type (apiservercel Semver.Equal and
friends), while cel-cpp's heterogeneous equality answers false. Only a value typed dyn (an
attribute, a comprehension variable) or one of those types can be such a left operand, so those
comparisons (and those of lists and maps that may hold such values, compared element by
element), and every comparison of Quantities and Semvers (their messages carry how upstream
stores the value, and a version's build metadata, which == and list membership must ignore),
found on the checked AST, are rewritten in
the source to `draguard_equals([l], [r])`, `draguard_not_equals(...)` (`!=` is "not true", so
its errors read as unequal) or `draguard_in([x], list)`, which implement cel-go's rules; the program evaluated is built from the rewritten text while
every diagnostic still refers to the original.

Spans come from the AST positions (cel-cpp's conventions: a call at its `(`, a select at its
`.`, an index at its `[`, an operator at its token, a macro at its `(`) and a scan of the
source for where each construct ends."""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING, Callable, NamedTuple, cast

from . import strformat
from .checked import Call, CheckedAst, Expr, children

if TYPE_CHECKING:
    from .library import CelValue

#: expression id -> (start, end) of its text
Spans = dict[int, tuple[int, int]]
#: the source between two offsets, with the replacements made inside it so far
Text = Callable[[int, int], str]

_OPERATORS = {"_==_", "_!=_"}
MAX_RANGE_SIZE = 1_000_000  # cel-go ext/lists.go defaultMaxRangeSize
SPECIAL_TYPES = frozenset({"kubernetes.Semver", "kubernetes.Quantity", "kubernetes.URL", "net.IP", "net.CIDR"})
_QUANTITY = "kubernetes.Quantity"
#: compared by their `value` alone: a Quantity's message also carries how upstream stores it,
#: a Semver's its build metadata
_BY_VALUE = (_QUANTITY, "kubernetes.Semver")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
STRING_LITERAL = re.compile(r"""(?:[bB][rR]?|[rR][bB]?)?(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")""",
                     re.S)


def without_strings(code: str) -> str:
    """`code` with string literals blanked (same length): where names and brackets are code."""
    return STRING_LITERAL.sub(lambda m: " " * len(m.group(0)), code)

_FIELD_SELECTION = re.compile(r"\.\s*\??\s*")  # `.name` or `.?name`
# cel-spec literals: a float has digits after its point (`1.x` is the int 1, then `.x`)
_NUMBER = re.compile(r"-?0[xX][0-9a-fA-F]+[uU]?|-?(?:\d*\.\d+|\d+)(?:[eE][+-]?\d+)?[uU]?")
_CLOSING = {"(": ")", "[": "]", "{": "}"}


def matching_end(source: str, opening: int) -> int:
    """The index after the bracket closing the one at `opening`, skipping string literals."""
    depth, i = 0, opening
    while i < len(source):
        literal = STRING_LITERAL.match(source, i) if source[i] in "'\"bBrR" else None
        if literal:
            i = literal.end()
            continue
        if source[i] in _CLOSING:
            depth += 1
        elif source[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(source)


def _token_end(source: str, position: int) -> int:
    for pattern in (STRING_LITERAL, _NUMBER, _IDENTIFIER):
        match = pattern.match(source, position)
        if match:
            return match.end()
    return position + 1


def _own_end(source: str, expr: Expr, position: int) -> int:
    """Where the construct at `position` ends, not counting its operands."""
    if expr.HasField("comprehension_expr") or expr.HasField("list_expr") or expr.HasField("struct_expr"):
        return matching_end(source, position)
    if expr.HasField("select_expr") or (expr.HasField("call_expr") and expr.call_expr.function == "_?._"):
        match = _FIELD_SELECTION.match(source, position)
        return _token_end(source, match.end() if match else position + 1)
    if expr.HasField("call_expr"):
        function = expr.call_expr.function
        if function in ("_[_]", "_[?_]") or (not function.startswith(("_", "!", "@")) and source[position:position + 1] == "("):
            return matching_end(source, position)
        return position + 1
    return _token_end(source, position)


def _own_start(source: str, expr: Expr, position: int) -> int:
    """A global call's position is its `(`: its (possibly dotted, `format . named`) name comes before."""
    if expr.HasField("call_expr") and not expr.call_expr.HasField("target") and \
            not expr.call_expr.function.startswith(("_", "!", "@")):
        start = len(source[:position].rstrip())
        name = r"\s*\.\s*".join(map(re.escape, expr.call_expr.function.split(".")))
        match = re.search(f"(?<![A-Za-z0-9_.]){name}\\Z", source[:start])
        return match.start() if match else start
    return position


def spans(ast: CheckedAst, source: str) -> Spans:
    """expression id -> (start, end) in `source`, for every node with a position (where a
    rewrite replaces text; where a finding about a subexpression points)."""
    found: Spans = {}

    def visit(expr: Expr) -> tuple[int, int] | None:
        position = ast.positions.get(expr.id)
        own = (_own_start(source, expr, position), _own_end(source, expr, position)) if position is not None else None
        parts = [p for p in (visit(child) for child in children(expr)) if p] + ([own] if own else [])
        if not parts:
            return None
        span = _parenthesized(source, min(p[0] for p in parts), max(p[1] for p in parts))
        found[expr.id] = span
        return span

    visit(ast.root)
    return found


def _parenthesized(source: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to the parentheses it opens or closes but does not hold both of (a node
    whose first operand is parenthesized, `(a + b) * c`, starts inside that parenthesis),
    so that its text can stand on its own."""
    unclosed, unopened, i = 0, 0, start
    while i < end:
        literal = STRING_LITERAL.match(source, i) if source[i] in "'\"bBrR" else None
        if literal:
            i = literal.end()
            continue
        if source[i] == "(":
            unclosed += 1
        elif source[i] == ")":
            if unclosed:
                unclosed -= 1
            else:
                unopened += 1
        i += 1
    for _ in range(unopened):
        start = source.rindex("(", 0, start)
    for _ in range(unclosed):
        end = source.index(")", end) + 1
    return start, end


def _targets(ast: CheckedAst) -> list[Expr]:
    found = []
    for expr, _ in ast.nodes:
        if not expr.HasField("call_expr"):
            continue
        if expr.call_expr.function == "@in":  # list membership: the Quantities in it, by value
            left, right = expr.call_expr.args
            if ast.type_name(right.id).startswith("list(") and (
                    _by_value(ast.type_name(left.id)) or _by_value(ast.type_name(right.id))):
                found.append(expr)
            continue
        if expr.call_expr.function not in _OPERATORS:
            continue
        left, right = expr.call_expr.args
        left_type, right_type = ast.type_name(left.id), ast.type_name(right.id)
        if left_type.startswith("type(") and right_type.startswith("type("):
            continue  # types compare by name, whichever type they name
        may_hold = "dyn" in left_type or any(t in left_type for t in SPECIAL_TYPES)  # lists and maps too
        quantities = _by_value(left_type) or _by_value(right_type)  # never compared as messages
        if quantities or (may_hold and (right_type != left_type or "dyn" in right_type)):
            found.append(expr)
    return found


def _by_value(type_name: str) -> bool:
    return any(t in type_name for t in _BY_VALUE)


def _format_targets(ast: CheckedAst) -> list[Expr]:
    """Literal format() calls with a dyn element: its kind is known only when it runs."""
    found = []
    for expr, _ in ast.nodes:
        call = strformat.literal_format_call(expr)
        if call and any("dyn" in ast.type_name(element.id) for element in call[1]):
            found.append(expr)
    return found


def _offset_search_targets(ast: CheckedAst) -> list[Expr]:
    """A string's indexOf or lastIndexOf from an offset: cel-go's (ext/strings.go
    indexOfOffset) answers -1 for an offset at or past the end, and the end itself for an empty
    substring past it, where cel-cpp's is an error; and lastIndexOf from the end finds nothing."""
    return _member_calls(ast, ("indexOf", "lastIndexOf"), (2,), ("string", "dyn"))


def index_of_offset(text: str, part: str, offset: int) -> int:
    """ext/strings.go indexOfOffset, over code points."""
    return _search_from(text, part, offset, lambda: text.find(part, offset))


def last_index_of_offset(text: str, part: str, offset: int) -> int:
    """ext/strings.go lastIndexOfOffset, over code points: the last match starting at or before
    the offset."""
    return _search_from(text, part, offset,
                        lambda: text.rfind(part, 0, min(offset, len(text) - len(part)) + len(part)))


def _search_from(text: str, part: str, offset: int, search: Callable[[], int]) -> int:
    """What both searches from an offset answer before they search: a negative offset is an
    error, an empty substring is found at the offset (at most the end), and nothing else is
    found from the end on."""
    if offset < 0:
        raise ValueError(f"index out of range: {offset}")
    if not part:
        return min(offset, len(text))
    if offset >= len(text):
        return -1
    return search()


_ORDERING = ("_<_", "_<=_", "_>_", "_>=_")


def _nan_ordering_targets(ast: CheckedAst) -> list[Expr]:
    """An ordering of what may be a double (a double or dyn operand): cel-go's Compare refuses
    NaN on either side ("NaN values cannot be ordered"), where cel-cpp answers false."""
    return [expr for expr, _ in ast.nodes if expr.HasField("call_expr") and expr.call_expr.function in _ORDERING
            and len(expr.call_expr.args) == 2
            and any(ast.type_name(argument.id) in ("double", "dyn") for argument in expr.call_expr.args)]


def _nan_ordering(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    left, right = expr.call_expr.args
    operator = expr.call_expr.function.strip("_")

    def ordered(a: str, b: str) -> str:
        return f"({a} != {a} || {b} != {b} ? draguard_nan_unordered() : {a} {operator} {b})"
    if _cheap(left) and _cheap(right):
        return ordered(text(*span_of[left.id]), text(*span_of[right.id]))
    pair = f"[{text(*span_of[left.id])}, {text(*span_of[right.id])}]"
    return _named(pair, "draguard_pair", ordered("draguard_pair[0]", "draguard_pair[1]"))


def _split_targets(ast: CheckedAst) -> list[Expr]:
    """A string's split: cel-go's is Go's strings.Split and SplitN, which give no part at all
    for an empty string split by an empty separator, where cel-cpp gives one empty part."""
    return _member_calls(ast, ("split",), (1, 2), ("string", "dyn"))


def go_split(text: str, separator: str, limit: int = -1) -> list[str]:
    """strings.SplitN (Split: a limit of -1); an empty separator splits into code points."""
    if limit == 0:
        return []
    if separator == "":
        characters = list(text)
        count = len(characters) if limit < 0 or limit > len(characters) else limit
        return characters[:count - 1] + ["".join(characters[count - 1:])] if count else []
    return text.split(separator) if limit < 0 else text.split(separator, limit - 1)


def _includes_targets(ast: CheckedAst) -> list[Expr]:
    """Calls of the lists library's `includes`: its target and item are dyn, which no Python
    function's argument kinds match, so each goes through draguard_includes."""
    return [expr for expr, _ in ast.nodes
            if expr.HasField("call_expr") and expr.call_expr.function == "includes" and expr.call_expr.HasField("target")]


def _index_of_targets(ast: CheckedAst) -> list[Expr]:
    """indexOf or lastIndexOf of what may be null (a null or dyn argument, on a list or a dyn
    target): cel-expr-python dispatches on the argument's kind at run time and has no overload
    for null, so each such call goes through draguard_indexOf / draguard_lastIndexOf."""
    found = []
    for expr, _ in ast.nodes:
        call = expr.call_expr if expr.HasField("call_expr") else None
        if call is None or call.function not in ("indexOf", "lastIndexOf") or not call.HasField("target") \
                or len(call.args) != 1:
            continue
        target, argument = ast.type_name(call.target.id), ast.type_name(call.args[0].id)
        if (target.startswith("list(") or target == "dyn") and argument in ("null_type", "dyn"):
            found.append(expr)
    return found


def _map_literal_targets(ast: CheckedAst) -> list[Expr]:
    """Map literals whose keys may repeat (two or more entries, not all distinct constants):
    cel-go keeps the last value of a repeated key, cel-cpp fails, so each goes through
    draguard_map_literal."""
    found = []
    for expr, _ in ast.nodes:
        if not expr.HasField("struct_expr") or expr.struct_expr.message_name:
            continue
        entries = expr.struct_expr.entries
        if len(entries) < 2 or any(e.optional_entry for e in entries):
            continue
        keys = [e.map_key.const_expr.SerializeToString() if e.map_key.HasField("const_expr") else None
                for e in entries]
        if None in keys or len(set(keys)) < len(keys):
            found.append(expr)
    return found


def _map_insert(expr: Expr) -> tuple[Expr | None, Call] | None:
    """A transformMap or transformMapEntry macro's comprehension: (its filter or None, the
    cel.@mapInsert call of its step), else None."""
    if not expr.HasField("comprehension_expr"):
        return None
    step = expr.comprehension_expr.loop_step
    condition: Expr | None = None
    if step.HasField("call_expr") and step.call_expr.function == "_?_:_":
        condition, step = step.call_expr.args[0], step.call_expr.args[1]
    if step.HasField("call_expr") and step.call_expr.function == "cel.@mapInsert":
        return condition, step.call_expr
    return None


def _transform_map_targets(ast: CheckedAst) -> list[Expr]:
    """transformMap/transformMapEntry (two-variable comprehensions): their expansion builds the
    map with cel.@mapInsert, which cel-expr-python does not implement, so each is evaluated as
    transformList of its entries, gathered into a map by draguard_map_entries."""
    return [expr for expr, _ in ast.nodes if _map_insert(expr) is not None]


def _conversion_targets(ast: CheckedAst) -> list[Expr]:
    """int(s), uint(s), double(s), duration(s) and timestamp(s) of a string (or of a dyn value,
    which may be one): cel-cpp parses with its own rules (absl for durations and timestamps),
    cel-go with Go's strconv, time.ParseDuration and time.Parse(RFC3339) (cel.goconvert); and
    int(d) of a duration, which cel-cpp declares but does not implement (cel-go: nanoseconds)."""
    return _one_argument_calls(ast, ("uint", "double", "duration", "timestamp"), ("string", "dyn")) + \
        _one_argument_calls(ast, ("int",), ("string", "dyn", _DURATION))


def _one_argument_calls(ast: CheckedAst, functions: tuple[str, ...], argument_types: tuple[str, ...]) -> list[Expr]:
    """Global calls `function(argument)` with the argument of one of these static types."""
    return [expr for expr, _ in ast.nodes if expr.HasField("call_expr")
            and expr.call_expr.function in functions and not expr.call_expr.HasField("target")
            and len(expr.call_expr.args) == 1 and ast.type_name(expr.call_expr.args[0].id) in argument_types]


def _member_calls(ast: CheckedAst, functions: tuple[str, ...], argument_counts: tuple[int, ...],
                  target_types: tuple[str, ...]) -> list[Expr]:
    """Member calls `target.function(...)` with so many arguments, the target of one of these
    static types."""
    return [expr for expr, _ in ast.nodes if expr.HasField("call_expr")
            and expr.call_expr.function in functions and expr.call_expr.HasField("target")
            and len(expr.call_expr.args) in argument_counts and ast.type_name(expr.call_expr.target.id) in target_types]


_TIMESTAMP, _DURATION = "google.protobuf.Timestamp", "google.protobuf.Duration"
#: the Kubernetes library types cel-go has no string() for (ip and cidr have one)
_NO_TEXT = ("kubernetes.Semver", "kubernetes.Quantity", "kubernetes.URL", "kubernetes.NamedFormat")


def _text_targets(ast: CheckedAst) -> list[Expr]:
    """string() of a timestamp, a duration or a double (or of a dyn value, which may be one):
    cel-go writes a timestamp with Go's RFC3339Nano, a duration as its seconds' shortest float,
    cel-cpp both with 3, 6 or 9 fraction digits; a double's NaN and infinities as Go's
    strconv (NaN, +Inf, -Inf), cel-cpp as nan and inf; and a dyn value holding a version,
    quantity, URL or named format has no string() in cel-go, where cel-cpp writes the message."""
    return _one_argument_calls(ast, ("string",), (_TIMESTAMP, _DURATION, "double", "dyn"))


def _duration_milliseconds_targets(ast: CheckedAst) -> list[Expr]:
    """d.getMilliseconds() of a duration (or of a dyn value, which may be one): cel-go's is the
    whole duration in milliseconds (time.Duration.Milliseconds), cel-cpp's the part under a second."""
    return _member_calls(ast, ("getMilliseconds",), (0,), (_DURATION, "dyn"))


def _list_value_targets(ast: CheckedAst) -> list[Expr]:
    """max(), min() and sum() of the Kubernetes lists library where draguard's Python
    implementation would hand back what cel-cpp cannot take, or read wrongly: a duration or a
    timestamp (no CEL value from Python), a uint (read as an int), and a list of dyn values
    (upstream sums those of one summable type, in that type, and refuses a mix)."""
    return _member_calls(ast, ("max", "min"), (0,), (f"list({_DURATION})", f"list({_TIMESTAMP})", "list(uint)",
                                                     "list(dyn)", "dyn")) + \
        _member_calls(ast, ("sum",), (0,), (f"list({_DURATION})", "list(uint)", "list(dyn)", "dyn"))


def _list_value(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    """max and min read the list sorted by cel-cpp's ext lists (an empty one is an error, as
    upstream's), or for dyn values, which may not sort together, the element at the index
    Python finds (draguard_extreme_index); sum adds durations' exact nanoseconds and uints as
    uints in Python (draguard_duration_sum, draguard_uint_sum), and dyn values by the type
    they share."""
    call = expr.call_expr
    values, static = text(*span_of[call.target.id]), ast.type_name(call.target.id)
    if call.function != "sum":
        if static in ("list(dyn)", "dyn"):
            return _named(values, "draguard_list",
                          f"draguard_list[draguard_extreme_index(draguard_list, '{call.function}')]")
        last = "draguard_list.size() - 1" if call.function == "max" else "0"
        return _named(values, "draguard_list", f"draguard_list.sort()[{last}]")
    durations = "draguard_duration_sum(draguard_list.map(draguard_value, string(draguard_value)))"
    if static == f"list({_DURATION})":
        return _named(values, "draguard_list", durations)
    if static == "list(uint)":
        return f"draguard_uint_sum({values})"
    first = "type(draguard_list[0])"
    return _named(values, "draguard_list", (
        f"draguard_list.size() == 0 ? dyn(0) : "
        f"!draguard_list.all(draguard_value, type(draguard_value) == {first}) ? draguard_no_such_overload('sum') : "
        f"{first} == uint ? dyn(draguard_uint_sum(draguard_list)) : "
        f"{first} == {_DURATION} ? dyn({durations}) : "
        f"{first} in [int, double] ? draguard_list.sum() : draguard_no_such_overload('sum')"))


_SETS = {"sets.contains": "draguard_sets_contains", "sets.intersects": "draguard_sets_intersects",
         "sets.equivalent": "draguard_sets_equivalent"}


def _sets_targets(ast: CheckedAst) -> list[Expr]:
    """The sets library over lists that may hold Quantities or Semvers: cel-cpp compares them
    as messages (1 and 1000m differ, and so do versions told apart only by build metadata),
    cel-go with their Equal, by value (ext/sets.go contains: each element's list Contains)."""
    return [expr for expr, _ in ast.nodes if expr.HasField("call_expr") and expr.call_expr.function in _SETS
            and not expr.call_expr.HasField("target") and len(expr.call_expr.args) == 2
            and any(_by_value(ast.type_name(a.id)) or "dyn" in ast.type_name(a.id) for a in expr.call_expr.args)]


def sets_contains(values: list[CelValue], wanted: list[CelValue]) -> bool:
    return all(contained(item, values) for item in wanted)


def sets_intersects(first: list[CelValue], second: list[CelValue]) -> bool:
    return any(contained(item, second) for item in first)


def sets_equivalent(first: list[CelValue], second: list[CelValue]) -> bool:
    return sets_contains(first, second) and sets_contains(second, first)


def _distinct_targets(ast: CheckedAst) -> list[Expr]:
    """distinct() of lists that may hold Quantities or Semvers: cel-cpp keeps two that differ
    as messages (1 and 1000m, versions told apart only by build metadata), cel-go drops each
    that Equals one kept before it (ext/lists.go distinctList)."""
    return [expr for expr, _ in ast.nodes if expr.HasField("call_expr") and expr.call_expr.function == "distinct"
            and expr.call_expr.HasField("target") and not expr.call_expr.args
            and (_by_value(kind := ast.type_name(expr.call_expr.target.id)) or "dyn" in kind)]


def distinct_indices(values: list[CelValue]) -> list[int]:
    """The indices of the items distinctList keeps: those no item kept before Equals."""
    kept: list[int] = []
    for index, value in enumerate(values):
        if not any(is_equal(value, values[k]) for k in kept):
            kept.append(index)
    return kept


def _distinct(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    """The list's items at draguard_distinct_indices: they stay in CEL, whatever their type."""
    return _named(text(*span_of[expr.call_expr.target.id]), "draguard_items",
                  "draguard_distinct_indices(draguard_items).map(draguard_index, draguard_items[draguard_index])")


_SORT_BY_INPUT = "@__sortBy_input__"


def _sort_by_targets(ast: CheckedAst) -> list[Expr]:
    """sortBy macros: cel-cpp expands each into a lazy bind of its list, which can read a stale
    slot (cel.bind_inline), so each is evaluated as the list's items in draguard_sort_order of
    its keys (list.map(v, key)); the items stay in CEL, whatever their type."""
    return [expr for expr, _ in ast.nodes
            if expr.HasField("comprehension_expr") and expr.comprehension_expr.accu_var == _SORT_BY_INPUT]


def _sort_by(expr: Expr, text: Text, span_of: Spans) -> str:
    bind = expr.comprehension_expr
    keys = bind.result.call_expr.args[-1].comprehension_expr  # the map of the list to its keys
    key = keys.loop_step.call_expr.args[1].list_expr.elements[0]  # @result + [key]
    order = f"draguard_sort_order(draguard_items.map({keys.iter_var}, {text(*span_of[key.id])}))"
    return _named(text(*span_of[bind.accu_init.id]), "draguard_items",
                  f"{order}.map(draguard_index, draguard_items[draguard_index])")


#: cel-go's comparable kinds (ext/lists.go comparableTypes) as cel-expr-python hands them over:
#: bool, int and uint, double, string, bytes, duration, timestamp
_COMPARABLE = (bool, int, float, str, bytes, bytearray, datetime.timedelta, datetime.datetime)


def sort_order(keys: list[CelValue]) -> list[int]:
    """ext/lists.go sortListByAssociatedKeys: the indices of the items in the order of their
    keys, which must share one comparable type (Python's sort is stable, as Go's sort.Slice is
    on the short lists it sorts by insertion)."""
    if not keys:
        return []
    kind = type(keys[0])
    if not isinstance(keys[0], _COMPARABLE):
        raise ValueError("list elements must be comparable")
    if any(type(key) is not kind for key in keys):
        raise ValueError("list elements must have the same type")
    return sorted(range(len(keys)), key=keys.__getitem__)


def _range_targets(ast: CheckedAst) -> list[Expr]:
    """lists.range calls: cel-cpp's fails on a negative size (a C++ exception) and has no
    upper bound; cel-go's refuses both (ext/lists.go genRange), as draguard_lists_range does."""
    return [expr for expr, _ in ast.nodes if expr.HasField("call_expr")
            and expr.call_expr.function == "lists.range" and not expr.call_expr.HasField("target")]


def lists_range(size: int) -> list[int]:
    """ext.Lists' lists.range(n): 0..n-1, for n from 0 to its default maximum of 1,000,000."""
    if size < 0:
        raise ValueError(f"lists.range: size must be non-negative, got {size}")
    if size > MAX_RANGE_SIZE:
        raise ValueError(f"lists.range: size {size} exceeds maximum allowed ({MAX_RANGE_SIZE})")
    return list(range(size))


def _optional_targets(ast: CheckedAst) -> list[Expr]:
    """Calls of the format library's functions that return optionals (format.named, validate),
    which no Python implementation can: each is evaluated through its draguard_ function's
    list, empty for none (cel.namedformats)."""
    return [expr for expr, _ in ast.nodes if expr.HasField("call_expr") and (
        expr.call_expr.function == "format.named" and not expr.call_expr.HasField("target") or
        expr.call_expr.function == "validate" and expr.call_expr.HasField("target")
        and ast.type_name(expr.call_expr.target.id) == "kubernetes.NamedFormat")]


def _optional(expr: Expr, text: Text, span_of: Spans) -> str:
    call = expr.call_expr
    arguments = ", ".join(text(*span_of[part.id]) for part in [*([call.target] if call.HasField("target") else []),
                                                                *call.args])
    function, first = ("draguard_format_named", "[0]") if call.function == "format.named" else \
        ("draguard_format_errors", "")
    return _named(f"{function}({arguments})", "draguard_found",
                  f"draguard_found.size() == 0 ? optional.none() : optional.of(draguard_found{first})")


def _routed(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    """A comparison, `includes` or indexOf/lastIndexOf through its draguard_ function, each
    operand in a one-element list: cel-cpp dispatches a Python function on argument kinds, and
    a dyn parameter matches none of them, while list(dyn) matches every list."""
    call = expr.call_expr
    if call.function in ("includes", "indexOf", "lastIndexOf"):
        left, right = call.target, call.args[0]
        function = f"draguard_{call.function}"
    else:
        left, right = call.args
        function = {"_!=_": "draguard_not_equals", "@in": "draguard_in"}.get(call.function, "draguard_equals")
    right_text = text(*span_of[right.id]) if function == "draguard_in" else f"[{text(*span_of[right.id])}]"
    return f"({function}([{text(*span_of[left.id])}], {right_text}))"


def _conversion(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    function, argument = expr.call_expr.function, expr.call_expr.args[0]
    static = ast.type_name(argument.id)
    offset_shows = function == "timestamp" and any(_may_be_timestamp(ast, e.call_expr.args[0])
                                                   for e in _text_targets(ast))

    def converted(value: str) -> str:
        if function == "duration":  # read by cel-cpp from the seconds Go's parsing gives
            parsed = f"duration(draguard_go_duration({value}))"
        elif function == "timestamp":  # read by cel-cpp from the UTC time Go's parsing gives
            parsed = f"timestamp(draguard_go_timestamp({value}{', true' if offset_shows else ''}))"
        else:
            parsed = f"draguard_go_{function}({value})"
        otherwise = f"{function}({value})"
        if function == "int":
            otherwise = _when_typed(value, static, _DURATION, _nanoseconds(value), otherwise)
        return _when_typed(value, static, "string", parsed, otherwise)
    return _once(argument, text, span_of, static, converted)


def _may_be_timestamp(ast: CheckedAst, expr: Expr) -> bool:
    """Whether a value may be a timestamp when it runs: one, or a dyn value that is not dyn()
    of something known to be otherwise."""
    static = ast.type_name(expr.id)
    if static != "dyn":
        return static == _TIMESTAMP
    call = expr.call_expr if expr.HasField("call_expr") else None
    if call is not None and call.function == "dyn" and not call.HasField("target") and len(call.args) == 1:
        return _may_be_timestamp(ast, call.args[0])
    return True


def _once(operand: Expr, text: Text, span_of: Spans, static_type: str, build: Callable[[str], str]) -> str:
    """build(name), `name` standing for the operand's value: its text where its type is known
    (build writes it once) or where it is a cheap read (a literal, a variable, a field or an
    index of those); else the value evaluated once and named, for build to ask its type when
    it runs (_named)."""
    value = text(*span_of[operand.id])
    if static_type != "dyn" or _cheap(operand):
        return build(value)
    return _named(value, "draguard_value", build("draguard_value"))


def _named(value: str, name: str, body: str) -> str:
    """`body` with `name` standing for `value`, evaluated once and written once: a rewrite
    that reads a value twice would otherwise double it at each level of nesting. A one-item
    map names it, not a bind: cel-cpp may read a bind from a stale slot (cel.bind_inline);
    it costs one comprehension iteration of cel-cpp's 10,000."""
    return f"[{value}].map({name}, {body})[0]"


def _cheap(expr: Expr) -> bool:
    kind = expr.WhichOneof("expr_kind")
    if kind in ("const_expr", "ident_expr"):
        return True
    if kind == "select_expr":
        return not expr.select_expr.test_only and _cheap(expr.select_expr.operand)
    if kind == "call_expr" and not expr.call_expr.HasField("target") and expr.call_expr.function in ("_[_]", "dyn"):
        return all(_cheap(argument) for argument in expr.call_expr.args)
    return False


def _nanoseconds(duration: str) -> str:
    """A duration's nanoseconds, read from cel-cpp's exact text of it."""
    return f"draguard_duration_nanoseconds(string({duration}))"


def _when_typed(value: str, static_type: str, wanted: str, converted: str, otherwise: str) -> str:
    """`converted` where `value` (a name, or text that _once writes once) is of the `wanted`
    type, `otherwise` where it is of another; a dyn value is asked when it runs."""
    if static_type == wanted:
        return converted
    if static_type != "dyn":
        return otherwise
    return f"(type({value}) == {wanted} ? {converted} : {otherwise})"


def _text(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    argument = expr.call_expr.args[0]
    static = ast.type_name(argument.id)

    def written(value: str) -> str:
        plain = f"string({value})"
        if static == "dyn":  # Kubernetes' types but IP and CIDR have no string(): cel-cpp writes any message
            plain = f"(type({value}) in [{', '.join(_NO_TEXT)}] ? draguard_no_such_overload('string') : {plain})"
        as_double = _when_typed(value, static, "double", f"draguard_go_double_text({value}, string({value}))", plain)
        as_duration = _when_typed(value, static, _DURATION, f"draguard_go_duration_text(string({value}))",
                                  as_double)
        return _when_typed(value, static, _TIMESTAMP, f"draguard_go_timestamp_text(string({value}))", as_duration)
    return _once(argument, text, span_of, static, written)


def _duration_milliseconds(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    target = expr.call_expr.target
    static = ast.type_name(target.id)
    return _once(target, text, span_of, static, lambda value: _when_typed(
        value, static, _DURATION, f"({_nanoseconds(value)} / 1000000)", f"{value}.getMilliseconds()"))


def _map_literal(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    pairs = ", ".join(f"[{text(*span_of[e.map_key.id])}, {text(*span_of[e.value.id])}]"
                      for e in expr.struct_expr.entries)
    return f"draguard_map_literal([{pairs}])"


def _sets(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    first, second = (text(*span_of[a.id]) for a in expr.call_expr.args)
    return f"{_SETS[expr.call_expr.function]}({first}, {second})"


def _format_arguments(expr: Expr, text: Text, span_of: Spans, ast: CheckedAst) -> str:
    """The arguments checked against their clauses by draguard_format_fits, where they stay CEL
    values (Python cannot hand timestamps and durations back); the list is named once."""
    call = expr.call_expr
    return _named(text(*span_of[call.args[0].id]), "draguard_arguments",
                  f"draguard_format_fits({text(*span_of[call.target.id])}, draguard_arguments) ? draguard_arguments : []")


class _Rewriter(NamedTuple):
    """Which nodes to rewrite, the text that replaces each, and the node whose text it replaces."""

    find: Callable[[CheckedAst], list[Expr]]
    build: Callable[[Expr, Text, Spans, CheckedAst], str]  # the replacing text
    replaced: Callable[[Expr], Expr] = lambda expr: expr


_REWRITERS = (
    _Rewriter(_targets, _routed), _Rewriter(_includes_targets, _routed), _Rewriter(_index_of_targets, _routed),
    _Rewriter(_format_targets, _format_arguments, lambda expr: expr.call_expr.args[0]),
    _Rewriter(_transform_map_targets, lambda expr, text, span_of, ast: _transform_list(expr, text, span_of)),
    _Rewriter(_map_literal_targets, _map_literal),
    _Rewriter(_optional_targets, lambda expr, text, span_of, ast: _optional(expr, text, span_of)),
    _Rewriter(_range_targets, lambda expr, text, span_of, ast:
              f"draguard_lists_range({text(*span_of[expr.call_expr.args[0].id])})"),
    _Rewriter(_conversion_targets, _conversion),
    _Rewriter(_text_targets, _text),
    _Rewriter(_duration_milliseconds_targets, _duration_milliseconds),
    _Rewriter(_list_value_targets, _list_value),
    _Rewriter(_nan_ordering_targets, _nan_ordering),
    _Rewriter(_split_targets, lambda expr, text, span_of, ast: "draguard_split({})".format(
        ", ".join(text(*span_of[part.id]) for part in (expr.call_expr.target, *expr.call_expr.args)))),
    _Rewriter(_offset_search_targets, lambda expr, text, span_of, ast: "draguard_{}_offset({}, {}, {})".format(
        expr.call_expr.function, text(*span_of[expr.call_expr.target.id]),
        *(text(*span_of[argument.id]) for argument in expr.call_expr.args))),
    _Rewriter(_sets_targets, _sets),
    _Rewriter(_distinct_targets, _distinct),
    _Rewriter(_sort_by_targets, lambda expr, text, span_of, ast: _sort_by(expr, text, span_of)),
)


def rewrite(ast: CheckedAst, source: str) -> str | None:
    """`source` with each such comparison routed through draguard_equals, each literal
    format() call with dyn elements through draguard_format_fits, each `includes` (and each
    indexOf of what may be null) through its draguard_ function, each transformMap through
    draguard_map_entries, each map literal whose keys may repeat through
    draguard_map_literal, each format.named and validate through a list, each lists.range
    through draguard_lists_range, each int, uint, double, duration or timestamp of a string
    through Go's parsing (draguard_go_int ...), each string() of a timestamp, duration or double
    as Go writes it, int() and getMilliseconds() of a duration as Go counts them, max(), min()
    and sum() where Python would lose their values' types (durations, timestamps, uints, dyn
    values), indexOf and lastIndexOf of a string from an offset, split as Go's, orderings
    that refuse NaN, the sets
    library and distinct() over Quantities and Semvers through draguard_sets_* and
    draguard_distinct_indices, and each sortBy through
    draguard_sort_order, or None if there is none."""
    targets = [(expr, rewriter) for rewriter in _REWRITERS for expr in rewriter.find(ast)]
    if not targets:
        return None
    span_of = spans(ast, source)
    replacements: list[tuple[int, int, str]] = []  # innermost first, so outer ones can reuse them

    def text(start: int, end: int) -> str:
        out, cursor = [], start
        for s, e, new in sorted((r for r in replacements if start <= r[0] and r[1] <= end), key=lambda r: r[0]):
            if s < cursor:
                continue  # inside a replacement already taken
            out.append(source[cursor:s] + new)
            cursor = e
        return "".join(out) + source[cursor:end]

    for expr, rewriter in sorted(targets, key=lambda t: span_of[t[0].id][1] - span_of[t[0].id][0]):
        start, end = span_of[rewriter.replaced(expr).id]
        new = rewriter.build(expr, text, span_of, ast)
        replacements = [r for r in replacements if not (start <= r[0] and r[1] <= end)] + [(start, end, new)]
    return text(0, len(source))


def _transform_list(expr: Expr, text: Text, span_of: Spans) -> str:
    """A transformMap(k, v, [filter,] value) as draguard_map_entries(range.transformList(k, v,
    [filter,] [[k, value]])); a transformMapEntry(k, v, [filter,] entry) with the entry map
    in place of the pair."""
    comprehension = expr.comprehension_expr
    # a transformMap's comprehension, as _transform_map_targets found it
    condition, insert = cast(tuple["Expr | None", Call], _map_insert(expr))
    variables = f"{comprehension.iter_var}, {comprehension.iter_var2}"
    filtered = f"{text(*span_of[condition.id])}, " if condition is not None else ""
    if len(insert.args) == 3:  # (@result, key, value): transformMap
        entry = f"[[{text(*span_of[insert.args[1].id])}, {text(*span_of[insert.args[2].id])}]]"
    else:  # (@result, entry map): transformMapEntry
        entry = f"[{text(*span_of[insert.args[1].id])}]"
    return (f"draguard_map_entries({text(*span_of[comprehension.iter_range.id])}.transformList({variables}, "
            f"{filtered}{entry}))")


def map_literal(pairs: list[list[CelValue]]) -> dict[CelValue, CelValue]:
    """A map literal as cel-go builds it: a repeated key keeps its last value."""
    return {key: value for key, value in pairs}


def map_entries(groups: list[list[CelValue]]) -> dict[CelValue, CelValue]:
    """The map cel.@mapInsert would build from each step's entries ([key, value] pairs, or
    maps), in order: a key inserted twice is an error, as in cel-go, and so is a key of a
    Kubernetes value type (a Semver or Quantity cannot be hashed there)."""
    out: dict[CelValue, CelValue] = {}
    for group in groups:
        for item in group:
            pairs = item.items() if isinstance(item, dict) else [tuple(item)]
            for key, value in pairs:
                if not isinstance(key, (bool, int, str)):
                    raise ValueError(f"unsupported map key type: {type(key).__name__}")
                if key in out:
                    raise ValueError(f"insert failed: key {key!r} already exists")
                out[key] = value
    return out


def equals(left: CelValue, right: CelValue) -> bool:
    """cel-go's types.Equal, left operand first (see the module docstring): null equals only
    null, whatever the other side; lists and maps compare element by element and are unequal
    only on an element that is (an element's error does not count: baseList.Equal and
    baseMap.Equal look only for False)."""
    if left is None or right is None:
        return left is None and right is None
    left_type = getattr(getattr(left, "DESCRIPTOR", None), "full_name", None)
    if left_type in SPECIAL_TYPES:
        if getattr(getattr(right, "DESCRIPTOR", None), "full_name", None) != left_type:
            raise ValueError("no such overload")
        return bool(left.value == right.value) if left_type in _BY_VALUE else bool(left == right)
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_equal_or(a, b, True) for a, b in zip(left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_equal_or(v, right[k], True) for k, v in left.items())
    return type(left) is type(right) and left == right


def is_equal(left: CelValue, right: CelValue) -> bool:
    """`left.Equal(right) == True`, how cel-go's `!=`, list Contains and the Kubernetes lists
    library's indexOf read equality: an error counts as unequal."""
    return _equal_or(left, right, False)


def not_equals(left: CelValue, right: CelValue) -> bool:
    """cel-go's `!=`: true unless Equal is true."""
    return not is_equal(left, right)


def contained(item: CelValue, values: list[CelValue]) -> bool:
    """cel-go's list Contains: item.Equal(each value)."""
    return any(is_equal(item, value) for value in values)


def _equal_or(left: CelValue, right: CelValue, on_error: bool) -> bool:
    """equals, with `on_error` standing for a "no such overload" error."""
    try:
        return equals(left, right)
    except ValueError:
        return on_error
