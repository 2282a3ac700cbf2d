"""The worst-case cost of a device selector, estimated at compile time as the API server
estimates it before it accepts the selector (upstream refuses more than
resourceapi.CELSelectorExpressionMaxCost, 1,000,000: "too complex, exceeds cost limit").

A port of three upstream parts, applied in upstream's order to the checked AST:
- cel-go checker/cost.go (the coster: literal 0, identifier and field selection 1, list 10,
  map 30, message 40, comprehensions as range size x (step + condition), the standard
  functions' string and list factors), with Kubernetes' base-environment option that a
  presence test (`has()`) costs nothing;
- the cost options of cel-go's ext sets (ext/sets.go), which take precedence over
- k8s.io/apiserver/pkg/cel/library/cost.go (CostEstimator.EstimateCallCost: the Kubernetes
  libraries, keyed by function name);
- the sizes k8s.io/dynamic-resource-allocation/cel/compile.go declares for `device`
  (sizeEstimator: driver 63 characters, 32 domains of 32 attributes or capacities, domain 63
  and name 32 characters, an attribute value 64).

cel-go builds each node's field path with Go's append(), which writes into an array another
path shares when its capacity allows; which size an iteration variable gets depends on it
(the key variable of `m.all(k, v, ...)` reads the values' size), so paths here are Go slices
(_Path) and the estimate is upstream's to the unit, not an approximation of it."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from .checked import PRIMITIVES, CheckedAst, Expr, Type, children, equivalent

U64 = (1 << 64) - 1
_TWO_TO_64 = float(1 << 64)
#: cel-go common/cost.go
STRING_TRAVERSAL_FACTOR = 0.1
REGEX_LENGTH_FACTOR = 0.25
LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 10, 30, 40
_ACCUMULATOR, _HIDDEN_ACCUMULATOR = "__result__", "@result"  # parser.AccumulatorName, HiddenAccumulatorName
_WRAP = 1 << 64  # uint64 arithmetic wraps in Go
#: apiserver/pkg/cel/limits.go: what a format's validate, and comparing two formats, are estimated at
MAX_NAME_FORMAT_REGEX_SIZE, MAX_FORMAT_SIZE = 128, 64


@dataclass(frozen=True, slots=True)
class Range:
    """cel-go's SizeEstimate and CostEstimate alike: [min, max] in uint64, saturating (a
    dataclass, not a tuple: `+` adds, it does not concatenate)."""

    min: int
    max: int

    def __add__(self, other: "Range") -> "Range":
        return Range(min(self.min + other.min, U64), min(self.max + other.max, U64))

    def times(self, other: "Range") -> "Range":
        return Range(_multiply(self.min, other.min), _multiply(self.max, other.max))

    def factor(self, cost_per_unit: float) -> "Range":
        return Range(_by_factor(self.min, cost_per_unit), _by_factor(self.max, cost_per_unit))

    def union(self, other: "Range") -> "Range":
        return Range(min(self.min, other.min), max(self.max, other.max))


def fixed(n: int) -> Range:
    return Range(n, n)


UNKNOWN = Range(0, U64)
ZERO, ONE = fixed(0), fixed(1)


def _multiply(x: int, y: int) -> int:
    return U64 if y != 0 and x > U64 // y else x * y


def _by_factor(x: int, y: float) -> int:
    """multiplyByCostFactor: x * y rounded up, in float64 as upstream computes it."""
    xf = float(x)
    if xf > 0 and y > 0 and xf > float(U64) / y:
        return U64
    ceiling = math.ceil(xf * y)
    return U64 if ceiling >= _TWO_TO_64 else int(ceiling)


# --- paths: Go slices ------------------------------------------------------------------------

class _Path:
    """A Go []string: a backing array shared by every slice of it, a length and a capacity.
    append() writes in place while the capacity allows (so a path appended to twice keeps
    only the last name in the shared slot, as in cel-go), else copies with Go's growth."""

    __slots__ = ("array", "length", "cap")

    def __init__(self, array: list[str], length: int, cap: int) -> None:
        self.array, self.length, self.cap = array, length, cap

    @classmethod
    def of(cls, *names: str) -> "_Path":
        return cls(list(names), len(names), len(names))

    def names(self) -> tuple[str, ...]:
        return tuple(self.array[:self.length])

    def append(self, name: str) -> "_Path":
        if self.length < self.cap:
            if len(self.array) > self.length:
                self.array[self.length] = name
            else:
                self.array.append(name)
            return _Path(self.array, self.length + 1, self.cap)
        cap = max(self.length + 1, 2 * self.cap)  # runtime.growslice below 256 elements
        return _Path(self.array[:self.length] + [name], self.length + 1, cap)


_NIL = _Path([], 0, 0)


# --- types -------------------------------------------------------------------------------------

_WELL_KNOWN_KINDS = {1: "any", 2: "timestamp", 3: "duration"}
_SCALARS = {"bool", "double", "duration", "int", "timestamp", "uint"}
#: upstream declares these with cel.OpaqueType; draguard's engine has them as messages
_OPAQUE_MESSAGES = {"net.IP", "net.CIDR"}


def kind(t: Type | None) -> str:
    """The cel-go types.Kind of a checked type (None: dyn, as GetType answers for no type)."""
    if t is None:
        return "dyn"
    which = t.WhichOneof("type_kind")
    if which == "primitive":
        return PRIMITIVES.get(t.primitive, "dyn")
    if which == "wrapper":
        return PRIMITIVES.get(t.wrapper, "dyn")
    if which == "well_known":
        return _WELL_KNOWN_KINDS.get(t.well_known, "dyn")
    if which == "message_type":
        return "opaque" if t.message_type in _OPAQUE_MESSAGES else "struct"
    return {"list_type": "list", "map_type": "map", "abstract_type": "opaque", "type_param": "type_param",
            "type": "type", "null": "null", "error": "error"}.get(which or "", "dyn")


def parameters(t: Type | None) -> list[Type]:
    if t is None:
        return []
    which = t.WhichOneof("type_kind")
    if which == "list_type":
        return [t.list_type.elem_type]
    if which == "map_type":
        return [t.map_type.key_type, t.map_type.value_type]
    if which == "abstract_type":
        return list(t.abstract_type.parameter_types)
    return []


def _type_name(t: Type | None) -> str:
    """A message's or an abstract type's name, else the kind (what library/cost.go compares)."""
    if t is not None:
        which = t.WhichOneof("type_kind")
        if which == "message_type":
            return t.message_type
        if which == "abstract_type":
            return t.abstract_type.name
    return kind(t)


def _is_scalar(t: Type | None) -> bool:
    k = kind(t)
    if k in _SCALARS:
        return True
    return k == "opaque" and _type_name(t) == "optional_type" and _is_scalar(parameters(t)[0])


# --- the sizes of `device` (dynamic-resource-allocation/cel/compile.go) -------------------------

@dataclass(eq=False)
class _Decl:
    """An apiservercel.DeclType as far as sizes go."""

    max_elements: int = 0
    fields: dict[str, _Decl] = field(default_factory=dict)
    key: "_Decl | None" = None
    elem: "_Decl | None" = None


_ATTRIBUTE = _Decl(64)  # DeviceAttributeMaxValueLength (max with ResourceSliceMaxAttributeValuesPerDevice, 48)
_DOMAIN, _ID = _Decl(63), _Decl(32)  # DeviceMaxDomainLength, DeviceMaxIDLength
_PER_DEVICE = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
_DEVICE = _Decl(fields={
    "driver": _Decl(63),  # DriverNameMaxLength
    "allowMultipleAllocations": _Decl(1),
    "attributes": _Decl(_PER_DEVICE, key=_DOMAIN, elem=_Decl(_PER_DEVICE, key=_ID, elem=_ATTRIBUTE)),
    "capacity": _Decl(_PER_DEVICE, key=_DOMAIN, elem=_Decl(_PER_DEVICE, key=_ID, elem=_Decl(0))),  # QuantityDeclType
})


def _device_size(path: tuple[str, ...]) -> Range | None:
    """sizeEstimator.EstimateSize: the declared maximum of what `path` reaches from `device`."""
    if not path or path[0] != "device":
        return None
    node = _DEVICE
    for name in path[1:]:
        found: _Decl | None
        if name in ("@items", "@values"):
            found = node.elem
        elif name == "@keys":
            found = node.key
        elif name in node.fields:
            found = node.fields[name]
        elif node.elem is _ATTRIBUTE:  # any name in a domain's map is an attribute
            node = _ATTRIBUTE
            continue
        else:
            return None
        if found is None:
            return None
        node = found
    return Range(0, node.max_elements)


# --- AST nodes ----------------------------------------------------------------------------------

class _Node(NamedTuple):
    """checker.AstNode: a path from `device` (None when it has none), a type, an expression
    (None for the list element nodes of library/cost.go) and the size CEL computed."""

    path: _Path | None
    type: Type | None
    expr: Expr | None
    computed: Range | None

    def path_names(self) -> tuple[str, ...] | None:
        return self.path.names() if self.path is not None and self.path.length else None


def _size_of(node: _Node) -> Range:
    """ComputedSize, else the environment's estimate, else unknown (library sizeEstimate)."""
    if node.computed is not None:
        return node.computed
    estimated = _device_size(node.path_names() or ())
    return estimated if estimated is not None else UNKNOWN


def _element(node: _Node) -> _Node | None:
    """library listElementNode: the first type parameter's node, with the list's path."""
    params = parameters(node.type)
    if not params:
        return None
    names = node.path_names()
    path = _Path.of(*names, "@items") if names else None
    return _Node(path, params[0], None, None)


# --- function costs ---------------------------------------------------------------------------

#: a call's (cost, result size or None: the size CEL computes otherwise)
_Call = tuple[Range, Range | None]
#: an estimator of one overload: (target, arguments) -> its _Call, or None where it has none
_Estimator = Callable[[_Node | None, list[_Node]], _Call | None]


def _sets(factor: float) -> _Estimator:
    """ext/sets.go estimateSetsCost."""
    def sets_cost(target: _Node | None, args: list[_Node]) -> _Call | None:
        if len(args) != 2:
            return None
        return _size_of(args[0]).times(_size_of(args[1])).factor(factor) + ONE, None
    return sets_cost


def _uint_literal(node: _Node, default: int) -> int:
    """ext/costs.go nodeAsUintValue: an int literal as uint64 (a negative one as 0), else `default`."""
    expr = node.expr
    if expr is None or expr.WhichOneof("expr_kind") != "const_expr" \
            or expr.const_expr.WhichOneof("constant_kind") != "int64_value":
        return default
    return max(expr.const_expr.int64_value, 0)


def _allocating_list(factor: float, size: Range) -> _Call:
    """ext/lists.go estimateAllocatingListCall: the list's size by the factor, the call, and
    the list's creation; the result has that size."""
    return size.factor(factor) + ONE + fixed(LIST_CREATE), size


def _slice(target: _Node | None, args: list[_Node]) -> _Call | None:
    if target is None or len(args) != 2:
        return None
    start, end = _uint_literal(args[0], 0), _uint_literal(args[1], _size_of(target).max)
    return _allocating_list(1, fixed((end - start) % _WRAP))


def _range(target: _Node | None, args: list[_Node]) -> _Call | None:
    return _allocating_list(1, fixed(_uint_literal(args[0], U64))) if target is None and len(args) == 1 else None


def _reverse(target: _Node | None, args: list[_Node]) -> _Call | None:
    return _allocating_list(1, _size_of(target)) if target is not None and not args else None


def _flatten(target: _Node | None, args: list[_Node]) -> _Call | None:
    if target is None or len(args) > 1:
        return None
    depth = _uint_literal(args[0], U64) if args else 1
    return _allocating_list(float(depth), _size_of(target))


def _self_compare(factor: float) -> _Estimator:
    """distinct and sort: each element against each."""
    def cost(target: _Node | None, args: list[_Node]) -> _Call | None:
        if target is None or args:
            return None
        size = _size_of(target)
        return _allocating_list(factor, size.times(size))
    return cost


def _sort_by(factor: float) -> _Estimator:
    """sortBy, on its keys (@sortByAssociatedKeys' argument)."""
    def cost(target: _Node | None, args: list[_Node]) -> _Call | None:
        if target is None or len(args) != 1:
            return None
        size = _size_of(args[0])
        return _allocating_list(factor, size.times(size))
    return cost


#: ext.Lists (version 3 declares these estimates), by element type for sort and sortBy: a
#: string or bytes comparison also walks the text
_COMPARABLE = ("int", "uint", "double", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp", "string",
               "bytes")  # as cel-cpp names them in its overload ids
_OVERLOAD_ESTIMATORS: dict[str, _Estimator] = {
    "list_sets_contains_list": _sets(1), "list_sets_intersects_list": _sets(1), "list_sets_equivalent_list": _sets(2),
    "list_slice": _slice, "list_range": _range, "list_reverse": _reverse, "list_flatten": _flatten,
    "list_flatten_int": _flatten, "list_distinct": _self_compare(2.0),
    **{f"list_{t}_sort": _self_compare(2.0 + (STRING_TRAVERSAL_FACTOR if t in ("string", "bytes") else 0))
       for t in _COMPARABLE},
    **{f"list_{t}_sortByAssociatedKeys": _sort_by(2.0 + (STRING_TRAVERSAL_FACTOR if t in ("string", "bytes") else 0))
       for t in _COMPARABLE}}

_NOMINAL = {"sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add",
            "sub", "major", "minor", "patch", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath",
            "getQuery", "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
            "isLinkLocalUnicast", "isGlobalUnicast", "format.named", "serviceAccount", "path", "group", "resource",
            "subresource", "namespace", "name", "allowed", "reason", "error", "errored"}
_STRING_PARSES = {"quantity", "isQuantity", "semver", "isSemver", "cidr", "isIP", "isCIDR"}
_IP_BYTES = Range(4, 16)


def _kubernetes(function: str, overload: str, target: _Node | None, args: list[_Node]) -> _Call | None:
    """library/cost.go CostEstimator.EstimateCallCost: (cost, result size or None), or None."""
    s = STRING_TRAVERSAL_FACTOR
    if function in _NOMINAL:
        return ONE, None
    if function == "check":  # an authorization check: two per expression
        return fixed(350000), None
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"):
        if target is None:
            return None
        element_cost = ONE
        element = _element(target)
        if element is not None:
            if kind(element.type) in ("string", "bytes"):
                element_cost = element_cost + _size_of(element).factor(s)
            return _size_of(target).times(element_cost), None
        if function == "includes":
            return _size_of(target).times(element_cost), None
        return _size_of(target).factor(s), None
    if function in ("url", "jsonpatch.escapeKey"):
        if len(args) == 1:
            size = _size_of(args[0])
            return size.factor(s), size
        return None
    if function in ("lowerAscii", "upperAscii", "substring", "trim"):
        if target is not None:
            size = _size_of(target)
            return size.factor(s), size
        return None
    if function == "replace":
        return _replace(target, args) if target is not None and len(args) >= 2 else None
    if function == "split":
        if target is None:
            return None
        size = _size_of(target)
        most = size.max
        if len(args) > 1 and args[1].expr is not None and args[1].expr.WhichOneof("expr_kind") == "const_expr" \
                and args[1].expr.const_expr.WhichOneof("constant_kind") == "int64_value":
            most = args[1].expr.const_expr.int64_value % _WRAP  # uint64(i)
        return size.factor(2 * s), Range(0, most)
    if function == "join":
        return _join(target, args) if target is not None else None
    if function in ("find", "findAll"):
        if target is None or not args:
            return None
        size = _size_of(target)
        return (size + ONE).factor(s).times(_size_of(args[0]).factor(REGEX_LENGTH_FACTOR)), Range(0, size.max)
    if function == "validate" and overload == "format-validate":  # every format counts as the longest regex
        return (_size_of(args[0]).factor(s).factor(MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH_FACTOR), None) \
            if args else None
    if function in _STRING_PARSES:
        return (_size_of(args[0]).factor(s), None) if args else None
    if function == "ip":
        if overload == "cidr_ip":
            return ONE, None
        return (_size_of(args[0]).factor(s), None) if args else None
    if function == "ip.isCanonical":
        return (_size_of(args[0]).factor(2 * s), None) if args else None
    if function in ("containsIP", "containsCIDR"):
        if not args:
            return None
        cost = (_IP_BYTES + _IP_BYTES).factor(s)
        if function == "containsCIDR":
            cost = cost + _IP_BYTES.factor(s) + ONE
        if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
            cost = cost + _size_of(args[0]).factor(s)
        return cost, None
    if function == "_==_" and len(args) == 2:
        return _equality(args[0], args[1])
    return None


def _equality(lhs: _Node, rhs: _Node) -> _Call | None:
    if lhs.type is None or rhs.type is None or not equivalent(lhs.type, rhs.type):
        return None
    k, name = kind(lhs.type), _type_name(lhs.type)
    if k == "opaque" and name in _OPAQUE_MESSAGES:
        return ONE, None
    if k == "struct":
        if name in ("kubernetes.Quantity", "kubernetes.Semver"):
            return ONE, None
        if name == "kubernetes.NamedFormat":
            return Range(1, MAX_FORMAT_SIZE).factor(STRING_TRAVERSAL_FACTOR), None
        if name == "kubernetes.URL":
            size = rhs.computed if rhs.computed is not None else ONE  # upstream reads rhs's size for both sides
            return Range(1, size.max).factor(STRING_TRAVERSAL_FACTOR), None
    return None


def _replace(target: _Node, args: list[_Node]) -> _Call:
    size, old, new = _size_of(target), _size_of(args[0]), _size_of(args[1])
    if old.min == 0:
        count_max, retained_max = (size.max + 1 if size.max < U64 else size.max), size.max
    elif new.max <= old.min:
        count_max, retained_max = 0, size.max
    else:
        count_max, retained_max = _go_uint64(math.ceil(float(size.max) / float(old.min))), 0
    if old.max == 0:
        count_min, retained_min = (size.min + 1 if size.min < U64 else size.min), size.min
    elif old.max <= new.min:
        count_min, retained_min = 0, size.min
    else:
        count_min, retained_min = _go_uint64(math.ceil(float(size.min) / float(old.max))), 0
    result = Range(count_min, count_max).times(new) + Range(retained_min, retained_max)
    return size.factor(2 * STRING_TRAVERSAL_FACTOR), result


def _go_uint64(value: int) -> int:
    """uint64(f) of a whole float64 as amd64 converts it: past 2**64 it gives 2**63."""
    return value if value < _TWO_TO_64 else 1 << 63


def _join(target: _Node, args: list[_Node]) -> _Call:
    size = ZERO
    items = _size_of(target)
    element = _element(target)
    if element is not None:
        size = items.times(_size_of(element))
    if args:
        separators = Range(items.min - 1 if items.min > 0 else 0, items.max - 1 if items.max > 0 else 0)
        size = size + _size_of(args[0]).times(separators)
    return size.factor(STRING_TRAVERSAL_FACTOR), size


# --- the coster -------------------------------------------------------------------------------

@dataclass
class _Local:
    path: _Path
    size: Range | None
    entry: "_Entry | None"


class _Entry(NamedTuple):
    """entrySizeEstimate: a container's kind and its keys' and values' sizes."""

    container: str
    key: Range
    value: Range

    def union(self, other: "_Entry | None") -> "_Entry | None":
        if other is None:
            return None
        return _Entry(self.container, self.key.union(other.key), self.value.union(other.value))


def _entry_union(a: _Entry | None, b: _Entry | None) -> _Entry | None:
    return a.union(b) if a is not None else None


class _Coster:
    def __init__(self, ast: CheckedAst) -> None:
        self.ast = ast
        self.costs: dict[int, Range] = {}  # each expression's own estimate, to name the costliest part
        self.paths: dict[int, _Path] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, _Entry] = {}

    # paths and scopes
    def type_of(self, e: Expr) -> Type | None:
        return self.ast.types.get(e.id)

    def local(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, path: _Path, size: Range | None, entry: _Entry | None) -> None:
        self.locals.setdefault(name, []).append(_Local(path, size, entry))

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def path(self, e: Expr) -> _Path:
        if e.WhichOneof("expr_kind") == "ident_expr":
            found = self.local(e.ident_expr.name)
            if found is not None:
                return found.path
        return self.paths.get(e.id, _NIL)

    def node(self, e: Expr) -> _Node:
        path: _Path | None = self.path(e)
        if path is not None and path.length and path.array[0] in (_ACCUMULATOR, _HIDDEN_ACCUMULATOR):
            path = None
        return _Node(path, self.type_of(e), e, self.size(e))

    # sizes
    def size(self, e: Expr) -> Range | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = _literal_size(e)
        if literal is not None:
            return literal
        path = self.path(e)
        estimated = _device_size(path.names())
        if estimated is not None:
            self.sizes[e.id] = estimated
            return estimated
        if _is_scalar(self.type_of(e)):
            return ONE
        if e.WhichOneof("expr_kind") == "ident_expr":
            found = self.local(e.ident_expr.name)
            if found is not None and found.size is not None:
                return found.size
        return None

    def size_or_unknown(self, e: Expr) -> Range:
        found = self.size(e)
        return found if found is not None else UNKNOWN

    def entry(self, e: Expr | None) -> _Entry | None:
        """The entry sizes of a container (None for a node without an expression: a list's element)."""
        if e is None:
            return None
        if e.id in self.entries:
            return self.entries[e.id]
        if e.WhichOneof("expr_kind") == "ident_expr":
            found = self.local(e.ident_expr.name)
            if found is not None:
                return found.entry
        return None

    def set_size(self, e: Expr, size: Range | None) -> None:
        if size is not None:
            self.sizes[e.id] = size

    def set_entry(self, e: Expr, entry: _Entry | None) -> None:
        if entry is not None:
            self.entries[e.id] = entry

    # costs
    def cost(self, e: Expr) -> Range:
        self.costs[e.id] = found = self._cost(e)
        return found

    def _cost(self, e: Expr) -> Range:
        which = e.WhichOneof("expr_kind")
        if which == "const_expr":
            return ZERO
        if which == "ident_expr":
            return self.ident(e)
        if which == "select_expr":
            return self.select(e)
        if which == "call_expr":
            return self.call(e)
        if which == "list_expr":
            return self.create_list(e)
        if which == "struct_expr":
            return self.create_struct(e)
        if which == "comprehension_expr":
            return self.bind(e) if _is_bind(e) else self.comprehension(e)
        return ZERO

    def ident(self, e: Expr) -> Range:
        name = e.ident_expr.name
        found = self.local(name)
        if found is not None:
            self.paths[e.id] = found.path
            return ONE
        if name.startswith("device_"):  # draguard's spelling of `device.<field>`: an ident and a select
            self.paths[e.id] = _Path.of("device", name[len("device_"):])
            return fixed(2)
        self.paths[e.id] = _Path.of(name)
        return ONE

    def select(self, e: Expr) -> Range:
        operand = e.select_expr.operand
        if e.select_expr.test_only:
            return self.cost(operand)  # has() itself costs nothing (PresenceTestHasCost(false))
        total = self.cost(operand)
        if kind(self.type_of(operand)) in ("map", "struct", "type_param"):
            total = total + ONE
        self.paths[e.id] = self.path(operand).append(e.select_expr.field)
        return total

    def call(self, e: Expr) -> Range:
        call = e.call_expr
        if call.function == "dyn" and len(call.args) == 1:
            arg = call.args[0]
            argument = self.cost(arg)
            self.set_size(e, self.size(arg))
            self.set_entry(e, self.entry(arg))
            return ONE + argument
        costs: list[Range] = []
        nodes: list[_Node] = []
        for arg in call.args:
            costs.append(self.cost(arg))
            nodes.append(self.node(arg))
        overloads = self.ast.overloads.get(e.id, ())
        if not overloads:
            return ZERO
        total, target = ZERO, None
        if call.HasField("target"):
            total = total + self.cost(call.target)
            target = self.node(call.target)
        function_cost, result = Range(U64, 0), None
        for overload in overloads:
            cost, size = self.function(e, call.function, overload, target, nodes, costs)
            function_cost = function_cost.union(cost)
            if size is not None:
                result = size if result is None else result.union(size)
            if overload in ("index_list", "index_map") and call.args:
                entry = self.entry(call.args[0])
                result = entry.value if entry is not None else None
                suffix = "@items" if overload == "index_list" else "@values"
                self.paths[e.id] = self.path(call.args[0]).append(suffix)
            if result is None:
                result = self.size(e)
        self.set_size(e, result)
        return total + function_cost

    def function(self, e: Expr, function: str, overload: str, target: _Node | None, args: list[_Node],
                 costs: list[Range]) -> _Call:
        """checker/cost.go functionCost: (cost, result size or None)."""
        argument_sum = ZERO
        for c in costs:
            argument_sum = argument_sum + c
        estimator = _OVERLOAD_ESTIMATORS.get(overload)
        found = estimator(target, args) if estimator else None
        if found is None:
            found = _kubernetes(function, overload, target, args)
        if found is not None:
            return found[0] + argument_sum, found[1]
        s = STRING_TRAVERSAL_FACTOR
        if overload == "string_format" and target is not None:
            return _computed(target).factor(s) + argument_sum, None
        if overload in _CONVERSIONS and len(args) == 1:
            n = _computed(args[0])
            return n.factor(s) + argument_sum, _CONVERSIONS[overload](n)
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return _computed(args[0]).factor(s) + argument_sum, None
        if overload == "in_list" and len(args) == 2:
            return _computed(args[1]).factor(1) + argument_sum, None
        if overload in ("matches", "matches_string"):
            pair = (target, args[0]) if overload == "matches_string" and target is not None and len(args) == 1 \
                else (args[0], args[1]) if overload == "matches" and target is None and len(args) == 2 else None
            if pair is not None:
                text, regex = pair
                text_cost = (_computed(text) + ONE).factor(s)
                return text_cost.times(_computed(regex).factor(REGEX_LENGTH_FACTOR)) + argument_sum, None
        if overload == "contains_string" and target is not None and len(args) == 1:
            return _computed(target).factor(s).times(_computed(args[0]).factor(s)) + argument_sum, None
        if overload in ("logical_or", "logical_and"):
            lhs, rhs = costs
            return Range(lhs.min, (lhs + rhs).max), None
        if overload == "conditional":
            result = _computed(args[1]).union(_computed(args[2]))
            self.set_entry(e, _entry_union(self.entry(args[1].expr), self.entry(args[2].expr)))
            return costs[0] + costs[1].union(costs[2]), result
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = _computed(args[0]) + _computed(args[1])
            self.set_entry(e, _entry_union(self.entry(args[0].expr), self.entry(args[1].expr)))
            if overload == "add_list":
                return ONE + argument_sum, result
            return result.factor(s) + argument_sum, result
        if overload in _COMPARISONS:
            lhs, rhs = _computed(args[0]), _computed(args[1])
            smallest = min(lhs.max, rhs.max)
            return Range(1 if smallest > 0 else 0, smallest).factor(s) + argument_sum, None
        return ONE + argument_sum, None

    def create_list(self, e: Expr) -> Range:
        elements = e.list_expr.elements
        total = ZERO
        items = Range(U64 if elements else 0, 0)
        for element in elements:
            total = total + self.cost(element)
            items = items.union(self.size_or_unknown(element))
        self.set_entry(e, _Entry("list", ONE, items))
        return total + fixed(LIST_CREATE)

    def create_struct(self, e: Expr) -> Range:
        create = e.struct_expr
        total = ZERO
        if create.message_name:
            for entry in create.entries:
                total = total + self.cost(entry.value)
            return total + fixed(STRUCT_CREATE)
        keys = Range(U64 if create.entries else 0, 0)
        values = Range(U64 if create.entries else 0, 0)
        for entry in create.entries:
            total = total + self.cost(entry.map_key)
            total = total + self.cost(entry.value)
            keys = keys.union(self.size_or_unknown(entry.map_key))
            values = values.union(self.size_or_unknown(entry.value))
        self.set_entry(e, _Entry("map", keys, values))
        return total + fixed(MAP_CREATE)

    def comprehension(self, e: Expr) -> Range:
        c = e.comprehension_expr
        total = self.cost(c.iter_range) + self.cost(c.accu_init)
        self.push_local(c.accu_var, c.accu_init)
        if c.iter_var2:
            self.push_iteration(c.iter_var, c.iter_range, "key")
            self.push_iteration(c.iter_var2, c.iter_range, "value")
        else:
            self.push_iteration(c.iter_var, c.iter_range, "single")
        loop = self.cost(c.loop_condition)
        step = self.cost(c.loop_step)
        self.pop(c.iter_var)
        if c.iter_var2:
            self.pop(c.iter_var2)
        total = total + self.cost(c.result)
        self.pop(c.accu_var)
        count = self.size_or_unknown(c.iter_range)
        total = total + count.times(step + loop)
        init = c.accu_init.WhichOneof("expr_kind")
        if init == "const_expr":
            self.set_size(e, self.size(c.accu_init))
        elif init in ("list_expr", "struct_expr"):
            self.set_size(e, count)
            self.set_entry(e, self.entry(c.loop_step))
        return total

    def bind(self, e: Expr) -> Range:
        c = e.comprehension_expr
        total = self.cost(c.iter_range) + self.cost(c.accu_init)
        self.push_local(c.accu_var, c.accu_init)
        total = total + self.cost(c.result)
        self.pop(c.accu_var)
        self.set_size(e, self.size(c.result))
        self.set_entry(e, self.entry(c.result))
        return total

    def push_local(self, name: str, e: Expr) -> None:
        path = self.path(e)
        entry = self.entry(e)
        self.push(name, path, self.size(e), entry)

    def push_iteration(self, name: str, range_expr: Expr, which: str) -> None:
        """pushIterKey, pushIterValue and pushIterSingle."""
        entry = self.entry(range_expr)
        container = entry.container if entry is not None else kind(self.type_of(range_expr))
        is_list = container == "list"
        if which == "key":
            size, suffix = (entry.key if entry else None), "@indices" if is_list else "@keys"
        elif which == "value":
            size, suffix = (entry.value if entry else None), "@items" if is_list else "@values"
        else:
            size, suffix = (entry.key if entry else None), "@keys"
            if is_list:
                size, suffix = (entry.value if entry else None), "@items"
        self.push(name, self.path(range_expr).append(suffix), size, None)


def _computed(node: _Node) -> Range:
    """sizeOrUnknown of an AstNode: the size CEL computed for it, else unknown."""
    return node.computed if node.computed is not None else UNKNOWN


#: the result sizes of the string/bytes conversions (a character is at most 4 bytes; quoting
#: escapes each character and adds 2 quotes)
_CONVERSIONS: dict[str, Callable[[Range], Range]] = {"string_to_bytes": lambda n: Range(n.min, n.max * 4 % _WRAP),
                "bytes_to_string": lambda n: Range(n.min // 4, n.max),
                "strings_quote": lambda n: Range((n.min + 2) % _WRAP, (n.max * 2 + 2) % _WRAP)}
_COMPARISONS = {"less_string", "greater_string", "less_equals_string", "greater_equals_string", "less_bytes",
                "greater_bytes", "less_equals_bytes", "greater_equals_bytes", "equals", "not_equals"}


def _literal_size(e: Expr) -> Range | None:
    """computeExprSize: a literal's size (a string's in code points), a list or map literal's
    number of entries."""
    which = e.WhichOneof("expr_kind")
    if which == "const_expr":
        constant = e.const_expr.WhichOneof("constant_kind")
        if constant == "string_value":
            return fixed(len(e.const_expr.string_value))
        if constant == "bytes_value":
            return fixed(len(e.const_expr.bytes_value))
        return ONE if constant is not None else None  # bool, int, uint, double, null
    if which == "list_expr":
        return fixed(len(e.list_expr.elements))
    if which == "struct_expr" and not e.struct_expr.message_name:
        return fixed(len(e.struct_expr.entries))
    return None


def _is_bind(e: Expr) -> bool:
    c = e.comprehension_expr
    condition = c.loop_condition
    return (c.iter_range.WhichOneof("expr_kind") == "list_expr" and not c.iter_range.list_expr.elements
            and condition.WhichOneof("expr_kind") == "const_expr"
            and condition.const_expr.WhichOneof("constant_kind") == "bool_value"
            and not condition.const_expr.bool_value and c.accu_var != _ACCUMULATOR)


class Estimate(NamedTuple):
    max: int  # cel.EstimateCost(...).Max
    costliest: Expr  # the innermost expression over `limit` (the whole one when none is)


def estimate(ast: CheckedAst, limit: int) -> Estimate:
    """The estimated worst-case cost of a checked selector, and the part that takes it over
    `limit` (for a finding to point at)."""
    coster = _Coster(ast)
    total = coster.cost(ast.root).max
    node = ast.root
    while True:
        over = [child for child in children(node) if coster.costs.get(child.id, ZERO).max > limit]
        if not over:
            break
        node = max(over, key=lambda child: coster.costs[child.id].max)
    return Estimate(total, node)
