"""Device selectors compiled and evaluated with cel-expr-python (Google's cel-cpp), in the
environment kube-scheduler gives them (k8s.io/dynamic-resource-allocation/cel):

- `device.driver` (string), `device.attributes[domain][name]` (dyn: string, int, bool or
  semver), `device.capacity[domain][name]` (Quantity), `device.allowMultipleAllocations`;
- the libraries and language options of Kubernetes' base environment (cel.library) and
  the compile-time checks cel-cpp lacks (cel.compile_checks);
- a selector must evaluate to bool; it may be at most 10 KiB long
  (resourceapi.CELSelectorExpressionMaxLength);
- looking up an attribute or capacity domain a device does not have yields an empty map
  (upstream's newStringInterfaceMapWithDefault in cel/compile.go), so
  `device.attributes['other.com'].x` is a "no such key" runtime error rather than a domain
  error, exactly as upstream.

cel-cpp has no record type with map-of-map fields, so `device.<field>` is rewritten to the
variable `device_<field>` (same length, so every error column stays valid). Two known issues
of cel-expr-python 0.1.3 shape this module: reading a null result crashes Python 3.11 (the
result type is checked first), and each call into a Python-implemented function leaks its
arguments, so `quantity('40Gi')`-style literals are folded into constants and results are
memoized per distinct value of the attributes an expression reads."""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable, Generic, Protocol, TypeVar

from . import bind_device, bind_inline, optionals, reads, rewrite, goconvert
from .bind_device import OffsetMap
from .checked import CheckedAst, Expr, checked_ast, walk
from .cost import U64, estimate
from .reads import References
from .depth import recursion_error
from .rewrite import STRING_LITERAL, matching_end, without_strings
from .library import CelEnv, CelType, CelValue, python_functions_taking_values, quantity_message, runtime
from .compile_checks import first_problem
from .summary import MAX_COST as MAX_COST, CelDiagnostic as CelDiagnostic  # their home; named here too
from ..core.cached import kept
from ..core.quantity import QuantityError, is_quantity, parse_quantity_form

#: resourceapi.CELSelectorExpressionMaxLength (k8s.io/api/resource/v1 types.go), compared with
#: Go's len() of the string, its bytes (pkg/apis/resource/validation validateCELSelector)
MAX_EXPRESSION_LENGTH = 10 * 1024
DEVICE_FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")
MEMO_LIMIT = 1 << 16  # results kept per selector; a long-running process sees new devices forever


# --- the environment -----------------------------------------------------------------------

@lru_cache(maxsize=2)
def _variables(allow_multiple_allocations: bool = True) -> dict[str, CelType]:
    rt = runtime()
    T = rt.T
    return {
        "device_driver": T.STRING,
        "device_attributes": T.Map(T.STRING, T.Map(T.STRING, T.DYN)),
        "device_capacity": T.Map(T.STRING, T.Map(T.STRING, rt.QT)),
        **({"device_allowMultipleAllocations": T.BOOL} if allow_multiple_allocations else {}),
        "draguard_has": T.BOOL,  # has(device.<field>), rewritten (rewrite_device_fields)
        # slots for folded quantity literals, so a folded program needs no environment of its own
        **{_constant(i): rt.QT for i in range(CONSTANT_SLOTS)},
    }


CONSTANT_SLOTS = 32


def _constant(index: int) -> str:
    return f"draguard_q{index}"


@lru_cache(maxsize=4)
def _env(allow_multiple_allocations: bool = True, includes: bool = True) -> CelEnv:
    """The environment; as the API server compiles new selectors, without
    `device.allowMultipleAllocations` while DRAConsumableCapacity is off and without `includes`
    while DRAListTypeAttributes is off (its NewExpressions environment declares them only with
    their gates; the scheduler's stored-expressions one of 1.37 always does)."""
    return runtime().new_env(_variables(allow_multiple_allocations), includes=includes)


# --- source rewriting ----------------------------------------------------------------------

_DEVICE_FIELD = re.compile(r"\bdevice\s*\.\s*(" + "|".join(DEVICE_FIELDS) + r")\b")
_HAS_FIELD = re.compile(r"\bhas\s*\(\s*device\s*\.\s*(\w+)\s*\)")
_QUANTITY_LITERAL = re.compile(r"""\bquantity\(\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*\)""")


def _code_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of the parts of `text` outside string literals."""
    position = 0
    for literal in STRING_LITERAL.finditer(text):
        yield position, literal.start()
        position = literal.end()
    yield position, len(text)


def rewrite_device_fields(expression: str, allow_multiple_allocations: bool = True) -> str:
    """`device.attributes` -> `device_attributes` outside string literals (same length), and
    `has(device.attributes)` -> `draguard_has` (a bool variable that is always true: upstream's
    device always has its declared fields; reading it costs 1, as upstream's test does); only
    the declared fields (allowMultipleAllocations with DRAConsumableCapacity), so that the others
    are unknown fields of `device`."""
    fields = DEVICE_FIELDS if allow_multiple_allocations else DEVICE_FIELDS[:-1]
    out = []
    for start, end in _code_spans(expression):
        code = _HAS_FIELD.sub(lambda m: "draguard_has".ljust(len(m.group(0))) if m.group(1) in fields
                              else m.group(0), expression[start:end])
        out.append(_DEVICE_FIELD.sub(lambda m: "device_" + m.group(1).ljust(len(m.group(0)) - 7)
                                     if m.group(1) in fields else m.group(0), code))
        if end < len(expression):
            literal = STRING_LITERAL.match(expression, end)
            out.append(literal.group(0) if literal else "")
    return "".join(out)


def _fold_quantities(code: str) -> tuple[str, dict[str, object]]:
    """Replace `quantity('40Gi')` literals by constants bound once (no Python call per eval)."""
    constants: dict[str, object] = {}

    def replace(match: re.Match[str]) -> str:
        text = match.group(1) if match.group(1) is not None else match.group(2)
        try:
            value, form = parse_quantity_form(text, trim=False)
        except QuantityError:
            return match.group(0)  # left for the runtime to report, as upstream
        name = _constant(len(constants))
        constants[name] = quantity_message(value, form)
        return name

    return _QUANTITY_LITERAL.sub(replace, code), constants


# --- compilation ---------------------------------------------------------------------------

class CelRuntimeError(Exception):
    pass


class CelUnsupported(CelRuntimeError):
    """An evaluation draguard cannot do: a function the checker declares that
    cel-expr-python's runtime does not implement; upstream would evaluate it."""


_UNIMPLEMENTED = re.compile(r"No overload found in reference resolve step for (\S+)")
#: cel-cpp takes only bool, int, uint and string map keys; cel-go's map literals take any value
_MAP_KEY = re.compile(r"Invalid map key type: '(\w+)'")
#: a value draguard's Python functions would hand back to cel-cpp, which takes no datetime or
#: timedelta (a map whose keys repeat, transformMap: their values pass through Python)
_NOT_HANDED_BACK = re.compile(r"Non-CEL value type for .*: datetime\.(datetime|timedelta)")


_ERROR_AT = re.compile(r"<input>:(\d+):(\d+): (.*?)(?:\n|$)")
_SIZE_LITERAL = re.compile(r"(device\.(attributes|capacity)\[\s*(['\"])([^'\"]+)\3\s*\]\.(\w+))\s*"
                           r"(==|!=|>=|<=|>|<)\s*(\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|Pi|Ei|[kMGTPE])?\b|['\"][^'\"]*['\"])")
_CMP_TO = {"==": "== 0", "!=": "!= 0", ">=": ">= 0", "<=": "<= 0", ">": "> 0", "<": "< 0"}


def _offset(expression: str, line: int, column: int) -> int:
    lines = expression.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + column - 1


def suggest(expression: str) -> str | None:
    """A corrected expression for the classic mistake of comparing a size without quantity(),
    wherever such comparisons stand in the expression (every one is rewritten), in the quotes
    the expression uses there (so that the YAML scalar holding it needs no new escapes)."""
    def rewrite(match: re.Match[str]) -> str:
        _, field_name, quote, domain, name, operator, literal = match.groups()
        literal = literal.strip("'\"")
        if not is_quantity(literal) or (field_name == "attributes" and literal.isdigit()):
            return match.group(0)  # a plain number compared with an attribute is fine
        return (f"device.capacity[{quote}{domain}{quote}].{name}.compareTo(quantity({quote}{literal}{quote})) "
                f"{_CMP_TO[operator]}")

    fixed = _SIZE_LITERAL.sub(rewrite, expression)
    return fixed if fixed != expression else None


_Result = TypeVar("_Result")


@dataclass(frozen=True)
class Output(Generic[_Result]):
    """What an expression must evaluate to: `refusal(return type, checked AST)` is the compile
    error for a type it may not have (None: accepted), `convert(result)` the value, or the
    CelRuntimeError, of a result that is not an error."""

    refusal: Callable[[CelType, CheckedAst], str | None]
    convert: Callable[[CelValue], _Result | CelRuntimeError]


def _bool_refusal(returns: CelType, ast: CheckedAst) -> str | None:
    types = runtime().T
    return None if returns == types.BOOL or returns == types.DYN else \
        f"expression must evaluate to bool, not {returns.name().lower()}"


def _as_bool(result: CelValue) -> bool | CelRuntimeError:
    kind = result.type()
    if kind == runtime().T.BOOL:
        return bool(result.value())
    # never read the value of a null result (crashes cel-expr-python 0.1.3 on 3.11)
    return CelRuntimeError(f"expression must evaluate to bool, got {kind.name().lower()}")


SELECTOR: Output[bool] = Output(_bool_refusal, _as_bool)


class DeviceData(Protocol):
    """What an expression reads of a device (dra.devices.Device, a later layer)."""

    def memo_key(self, refs: References) -> Hashable: ...

    def cel_data(self, references: References) -> dict[str, object]: ...


@dataclass
class CompiledSelector(Generic[_Result]):
    """A compiled device expression: a selector, or another `output` (a derived attribute)."""

    expression: str
    error: CelDiagnostic | None = None
    references: References = field(default_factory=References)
    _program: Any = None  # a cel-expr-python Expression (no type information); None after an error
    _constants: dict[str, object] = field(default_factory=dict)
    _memo: dict[Hashable, _Result | CelRuntimeError] = field(default_factory=dict)
    #: (checked AST, source code as compiled, its offsets back to `expression`, the cost of
    #: the binds of `device` substituted out): what the cost is estimated on
    _checked: tuple[CheckedAst, str, OffsetMap, int] | None = None
    output: Output[_Result] = field(kw_only=True)

    @cached_property
    def _cost(self) -> tuple[int, int]:
        if self._checked is None:
            return 0, 0
        ast, code, offsets, overhead = self._checked
        cost = estimate(ast, MAX_COST - overhead)
        return min(cost.max + overhead, U64), offsets.original(rewrite.spans(ast, code)[cost.costliest.id][0])

    @property
    def guarded(self) -> set[reads.Name]:
        """(field, domain, name) of each name the expression tests with `has()` (cel.reads)."""
        return reads.guarded(self._checked[0]) if self._checked else set()

    @cached_property
    def compared(self) -> dict[tuple[str, ...], set[str]]:
        """What the expression compares with `==` (cel.reads.compared): ('driver',) ->
        the drivers it names, (field, domain, name) -> the strings."""
        return reads.compared(self._checked[0]) if self._checked else {}

    @property
    def max_cost(self) -> int:
        """The API server's compile-time estimate of the worst-case cost (cel.cost), made
        when first asked: evaluation never needs it."""
        return self._cost[0]

    @property
    def costliest(self) -> int:
        """Where the part that takes the estimate over MAX_COST starts."""
        return self._cost[1]

    @property
    def too_complex(self) -> bool:
        """Whether the API server refuses the selector as too complex (validateSelector in
        pkg/apis/resource/validation); kube-scheduler still runs one it finds stored."""
        return self.max_cost > MAX_COST

    def evaluate(self, device: DeviceData, multiple_allocations: bool = True) -> _Result:
        """Evaluate on a device (see dra.devices.Device): a selector's verdict, or the value
        of another output. Memoized by the values the expression reads. Raises
        CelRuntimeError as upstream aborts the allocation on one. Without
        `multiple_allocations` the device's allowMultipleAllocations reads false, as upstream's
        stable allocator builds the CEL device without the field (allocator_stable.go)."""
        key = (device.memo_key(self.references), multiple_allocations)
        found = self._memo.get(key)
        if found is None:
            found = kept(self._memo, key, self._evaluate(device, multiple_allocations), MEMO_LIMIT)
        if isinstance(found, CelRuntimeError):
            raise found
        return found

    def _evaluate(self, device: DeviceData, multiple_allocations: bool = True) -> _Result | CelRuntimeError:
        data = device.cel_data(self.references)
        if not multiple_allocations and data["device_allowMultipleAllocations"]:
            data = dict(data, device_allowMultipleAllocations=False)
        return self.run(data)

    def run(self, data: dict[str, object]) -> _Result | CelRuntimeError:
        """The program's result on `data` (a device's CEL variables; none for a constant), or
        the CelRuntimeError it ends with."""
        if self._constants:
            data = dict(data, **self._constants)
        try:
            result = self._program.eval(data=data)
        except RuntimeError as exc:
            if "budget" in str(exc).lower():
                return self._over_budget()
            return _runtime_error(str(exc))
        except ValueError as exc:  # a C++ exception inside cel-cpp: its fault, never the expression's
            return CelUnsupported(f"draguard's CEL engine (cel-cpp) failed on this expression ({exc}): not evaluated")
        if result.type() == runtime().T.ERROR:
            return _runtime_error(str(result.value()))
        try:
            return self.output.convert(result)
        except TypeError as exc:  # a value cel-expr-python cannot hand to Python (a string that is not UTF-8)
            return CelUnsupported(f"draguard's CEL engine cannot read this result ({str(exc).splitlines()[0]}): "
                                  "not evaluated")

    def _over_budget(self) -> CelUnsupported:
        """cel-cpp stops an evaluation after 10,000 comprehension iterations (not settable from
        cel-expr-python); upstream stops at an actual cost of MAX_COST, which the compile-time
        estimate bounds from above: under it, upstream finishes what draguard cannot."""
        stopped = "draguard's CEL engine (cel-cpp) stops after 10,000 comprehension iterations, which this needs"
        if self.max_cost <= MAX_COST:
            return CelUnsupported(f"{stopped}; upstream's would finish it (its cost is estimated at most "
                                  f"{self.max_cost:,}): not evaluated")
        return CelUnsupported(f"{stopped}; upstream's stops at an actual cost of {MAX_COST:,} (estimated at most "
                              f"{self.max_cost:,}), which it may or may not reach: not evaluated")


def _runtime_error(text: str) -> CelRuntimeError:
    missing = _UNIMPLEMENTED.search(text)
    if missing:  # the engine lacks it; upstream would evaluate it, so say so rather than blame the selector
        return CelUnsupported(f"draguard's CEL engine (cel-expr-python) does not implement "
                              f"{missing.group(1)!r}, which this expression needs")
    if goconvert.ZONE_LOST in text:
        return CelUnsupported(f"{text[text.index(goconvert.ZONE_LOST):]}: this expression is not evaluated")
    kind = _NOT_HANDED_BACK.search(text)
    if kind:
        return CelUnsupported(f"draguard's CEL engine cannot build a map holding a "
                              f"{'timestamp' if kind.group(1) == 'datetime' else 'duration'} here (a map literal "
                              "whose keys may repeat, transformMap): this expression is not evaluated")
    key = _MAP_KEY.search(text)
    if key:
        return CelUnsupported(f"draguard's CEL engine (cel-cpp) refuses a {key.group(1)} map key, which upstream's "
                              "(cel-go) accepts: this expression is not evaluated")
    return CelRuntimeError(text.replace("device_", "device."))


@lru_cache(maxsize=4096)
def compile_selector(expression: str, allow_multiple_allocations: bool = True,
                     includes: bool = True) -> CompiledSelector[bool]:
    """Compile and type-check one selector (cached by its text), in the scheduler's
    environment, or with `allow_multiple_allocations` or `includes` off as the API server does
    for a new object while DRAConsumableCapacity or DRAListTypeAttributes is off."""
    return compile_expression(expression, SELECTOR, allow_multiple_allocations, includes)


def compile_expression(expression: str, output: Output[_Result], allow_multiple_allocations: bool = True,
                       includes: bool = True, fold: bool = True) -> CompiledSelector[_Result]:
    """Compile and type-check a device expression that must give `output` (uncached); `fold`:
    refuse a constant conversion that fails, as upstream builds the program (see
    _failed_constant_conversion, whose own check of a conversion does not fold again)."""
    def refused(diagnostic: CelDiagnostic) -> CompiledSelector[_Result]:
        return CompiledSelector(expression, diagnostic, output=output)

    size = len(expression.encode("utf-8", "surrogatepass"))  # Go's len(): bytes, not characters
    if size > MAX_EXPRESSION_LENGTH:
        return refused(CelDiagnostic(
            f"expression is {size} bytes long; the limit is {MAX_EXPRESSION_LENGTH}",
            min(MAX_EXPRESSION_LENGTH, len(expression))))
    too_deep = recursion_error(expression)
    if too_deep is not None:  # cel-go's parser refuses it (position: none, as upstream's -1:0)
        return refused(CelDiagnostic(too_deep, 0))
    rt = runtime()
    reserved = _RESERVED.search(without_strings(expression))
    if reserved:  # names draguard's rewritten programs use; upstream has no such names
        return refused(CelDiagnostic(f"undeclared reference to '{reserved.group(0)}'",
                                                          reserved.start()))
    overflowing = _overflowing_double(expression)  # a parse error: before any of the checker's
    undeclared = _undeclared_upstream(expression)  # a checker error cel-cpp does not make
    substituted, offsets, binds = bind_device.substitute(expression)  # cel.bind(d, device, ...): its body
    code = rewrite_device_fields(substituted, allow_multiple_allocations)
    env = _env(allow_multiple_allocations, includes)
    try:
        checked = env.compile(code)
    except RuntimeError as exc:
        if _TOO_DEEP.search(str(exc)):  # cel-cpp's depth of 32; within cel-go's 250 (cel.depth), not judged
            return refused(CelDiagnostic(
                "draguard's CEL engine (cel-cpp) nests expressions at most 32 deep, upstream's (cel-go) 250: "
                "not judged", 0, unsupported=True))
        diagnostic = _diagnostic(substituted, str(exc))
        offset = offsets.original(diagnostic.offset)
        if overflowing is not None and (overflowing < offset or not diagnostic.message.startswith("Syntax error")):
            return refused(CelDiagnostic("invalid double literal", overflowing))
        if undeclared is not None and undeclared[1] < offset and not diagnostic.message.startswith("Syntax error"):
            return refused(CelDiagnostic(*undeclared))
        if diagnostic.message == "undeclared reference to 'device'":  # the only use left after the rewrites
            return refused(CelDiagnostic(_DEVICE_AS_A_VALUE, offset, unsupported=True))
        if _any_element_search(diagnostic.message):
            return refused(CelDiagnostic(_ELEMENT_SEARCH, offset, unsupported=True))
        return refused(CelDiagnostic(diagnostic.message, offset, suggest(expression)))
    if overflowing is not None:
        return refused(CelDiagnostic("invalid double literal", overflowing))
    if undeclared is not None:
        return refused(CelDiagnostic(*undeclared))
    ast = checked_ast(checked.serialize())
    problem = first_problem(ast, _converts)
    if problem:
        return refused(CelDiagnostic(problem.message.replace("device_", "device."),
                                                          offsets.original(problem.offset), suggest(expression)))
    refusal = output.refusal(checked.return_type(), ast)
    if refusal:
        return refused(CelDiagnostic(refusal, 0))
    try:
        failed = fold and _failed_constant_conversion(ast, code, allow_multiple_allocations, includes)
        if failed:
            return refused(CelDiagnostic(f"program instantiation failed: {failed[1]}",
                                                              offsets.original(failed[0])))
        program_ast, program_code = bind_inline.inlined(ast, code,
                                                      lambda text: checked_ast(env.compile(text).serialize()))
        evaluated = rewrite.rewrite(program_ast, program_code) or program_code  # cel-go's semantics (cel.rewrite)
        folded, constants = _fold_quantities(evaluated)
        program_env = rt.new_env(_variables(), constants) if len(constants) > CONSTANT_SLOTS else _env()
        program = program_env.compile(folded) if folded != code else checked
        if optionals.makes_optionals(ast) and optionals.hands_optional_to_python(
                checked_ast(program.serialize()) if program is not checked else ast,
                python_functions_taking_values()) is not None:
            return refused(CelDiagnostic(_OPTIONAL_TO_PYTHON, 0, unsupported=True))
    except RuntimeError as exc:  # the program draguard made of a valid expression: its engine's limit, said so
        return refused(CelDiagnostic(
            f"draguard's CEL engine (cel-cpp) cannot build the program for this expression "
            f"({str(exc).splitlines()[0]})", 0, unsupported=True))
    return CompiledSelector(expression, None, reads.references(ast), program, constants,
                            _checked=(ast, code, offsets, binds * bind_device.BIND_COST), output=output)


_OPTIONAL_TO_PYTHON = ("an optional value reaches one of draguard's own CEL functions, which its engine "
                       "(cel-expr-python) cannot hand one to: this expression is not evaluated")
_RESERVED = re.compile(r"\bdraguard_\w+")
#: cel-spec FLOAT_LIT, with a unary minus before it (which cel-go's parser folds into it)
_DOUBLE_LITERAL = re.compile(r"(?<![\w.])(?:(-)\s*)?(\d*\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)")
_UNARY_AFTER = set("([{,:?&|=<>!+-*/%") | {""}
#: names cel-cpp resolves and cel-go does not declare: the type name dyn (cel-go declares only
#: the function dyn()) and the Kubernetes library's and draguard's own message types
_UPSTREAM_UNDECLARED = re.compile(r"(?<![\w.])(?:dyn\b(?!\s*\()|(?:kubernetes|draguard)(?=\s*\.\s*[A-Z]))")
#: a comprehension macro (or cel.bind) whose variable, or one of whose two, is named dyn
_DYN_VARIABLE = re.compile(r"(?:\.\s*(?:all|exists|exists_one|existsOne|map|filter|transformList|transformMap|"
                           r"transformMapEntry)|\bcel\s*\.\s*bind)\s*(\()\s*(?:\w+\s*,\s*)?dyn\s*,")


def _undeclared_upstream(expression: str) -> tuple[str, int] | None:
    """(message, offset) of the first name cel-go's checker does not know where cel-cpp's does;
    `dyn` names a macro's variable inside that macro's arguments, and nothing outside them."""
    code = without_strings(expression)
    bound = [(match.start(1), matching_end(code, match.start(1))) for match in _DYN_VARIABLE.finditer(code)]
    for match in _UPSTREAM_UNDECLARED.finditer(code):
        if not (match.group(0) == "dyn" and any(start < match.start() < end for start, end in bound)):
            return f"undeclared reference to '{match.group(0)}'", match.start()
    return None


def _overflowing_double(expression: str) -> int | None:
    """The offset of the first double literal Go's strconv.ParseFloat refuses as out of range
    (cel-go's parser: "invalid double literal"; cel-cpp reads it as infinity): at its unary
    minus when it has one."""
    code = without_strings(expression)
    for match in _DOUBLE_LITERAL.finditer(code):
        if not math.isinf(float(match.group(2))):
            continue
        before = code[:match.start()].rstrip()[-1:]
        if match.group(1) and before in _UNARY_AFTER:
            return match.start()
        return match.start(2)
    return None


_TOO_DEEP = re.compile(r"Exceeded max recursion depth|Expression recursion limit exceeded")


_CONVERSIONS = frozenset({"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"})


def _failed_constant_conversion(ast: CheckedAst, code: str, allow_multiple_allocations: bool,
                                includes: bool) -> tuple[int, str] | None:
    """(offset, error) of the first type conversion of a constant that fails, innermost first:
    cel-go's OptOptimize folds those calls when it builds the program (decOptimize,
    maybeOptimizeConstUnary), and the API server and the scheduler report the failure as a
    compile error ("program instantiation failed"). Lists and maps of constants are constants."""
    span_of: rewrite.Spans | None = None
    for expr in sorted((e for e, _ in ast.nodes if _folded_conversion(e)), key=lambda e: _size(e)):
        span_of = span_of or rewrite.spans(ast, code)
        text = code[slice(*span_of[expr.id])]
        check = compile_expression(f"[{text}].size() == 1", SELECTOR, allow_multiple_allocations, includes,
                                   fold=False)
        result = check.run({}) if check.error is None else None
        if isinstance(result, CelRuntimeError) and not isinstance(result, CelUnsupported):
            return span_of[expr.id][0], str(result).split(": ", 1)[-1]
    return None


def _folded_conversion(expr: Expr) -> bool:
    call = expr.call_expr if expr.HasField("call_expr") else None
    return call is not None and call.function in _CONVERSIONS and not call.HasField("target") \
        and len(call.args) == 1 and _planned_constant(call.args[0])


def _planned_constant(expr: Expr) -> bool:
    """What cel-go's planner holds as a constant: a literal, a list or map of them, a folded conversion."""
    kind = expr.WhichOneof("expr_kind")
    if kind == "const_expr":
        return True
    if kind == "list_expr":
        return all(_planned_constant(e) for e in expr.list_expr.elements)
    if kind == "struct_expr":
        return not expr.struct_expr.message_name and all(
            _planned_constant(entry.map_key) and _planned_constant(entry.value) for entry in expr.struct_expr.entries)
    return _folded_conversion(expr)


def _size(expr: Expr) -> int:
    return sum(1 for _ in walk(expr))


@lru_cache(maxsize=1024)
def _converts(function: str, text: str) -> bool:
    """Whether `duration(text)` or `timestamp(text)` converts as Go parses them (time.ParseDuration,
    time.Parse(RFC3339) and cel-go's range; cel.goconvert): what upstream's literal validators
    ask of a constant argument."""
    try:
        (goconvert.to_duration if function == "duration" else goconvert.parse_timestamp)(text)
    except ValueError:
        return False
    return True


#: cel-cpp has no record type with map-of-map fields, so `device` is declared field by field
#: (rewrite_device_fields); upstream's is a kubernetes.DRADevice object, which may be listed
#: or compared (a bind whose body reads its fields is substituted: cel.bind_device)
_DEVICE_AS_A_VALUE = ("`device` used as a value ([device], device == ...): draguard's CEL engine has no type for "
                      "it, so this expression is not checked (upstream's may accept it)")

#: library.Lists declares indexOf and lastIndexOf for list(A), A of any A; draguard's engine
#: registers implementations by argument kind, one kind for all messages (quantities,
#: versions, IPs...) and none for optionals, so it declares them only for the other types
_ELEMENT_SEARCH_CALL = re.compile(r"found no matching overload for '(?:indexOf|lastIndexOf)' applied to "
                                  r"'\(list\((.+)\), (.+)\)'")
_ELEMENT_SEARCH = ("indexOf or lastIndexOf over a list of quantities, versions, IPs, CIDRs, URLs or optionals: "
                   "draguard's CEL engine has no overload for them, so this expression is not checked (upstream's "
                   "accepts it)")


def _any_element_search(message: str) -> bool:
    """Whether the checker refused indexOf or lastIndexOf whose element and item upstream unifies."""
    call = _ELEMENT_SEARCH_CALL.fullmatch(message)
    return call is not None and (call.group(1) == call.group(2) or "dyn" in (call.group(1), call.group(2)))


def _diagnostic(expression: str, text: str) -> CelDiagnostic:
    """cel-cpp's error nearest the start, as cel-go words and places it: cel-go sorts its
    errors by location, where cel-cpp lists them as it visits the tree (`[1].map(x)`: the
    argument's before the call's)."""
    errors = [_as_upstream(expression, match) for match in _ERROR_AT.finditer(text)]
    if not errors:
        return CelDiagnostic(text.splitlines()[0] if text else "", 0, suggest(expression))
    message, offset = min(errors, key=lambda error: error[1])
    return CelDiagnostic(message, max(0, min(offset, len(expression))), suggest(expression))


def _as_upstream(expression: str, match: re.Match[str]) -> tuple[str, int]:
    """(message, offset) of one of cel-cpp's errors as cel-go reports it."""
    message = match.group(3).replace("device_", "device.").replace(" (in container '')", "")  # cel-cpp's containers
    offset = _offset(expression, int(match.group(1)), int(match.group(2)))
    unknown = re.match(r"undeclared reference to 'device\.(\w+)'", message)
    if unknown:  # `device` is not a variable here, so cel-cpp cannot say "undefined field" itself
        dot = re.compile(r"device\s*(?:_|\.)").match(expression, offset)
        return f"undefined field '{unknown.group(1)}'", dot.end() - 1 if dot else offset  # upstream: the field's `.`
    dotted = re.match(r"undeclared reference to '(\w+)\.[\w.]+'", message)
    if dotted:  # a select chain on an undeclared name: cel-go names its root, where it is written
        roots = [m.start() for m in re.finditer(rf"(?<![\w.]){dotted.group(1)}\b", without_strings(expression))
                 if m.start() <= offset]
        if roots:
            return f"undeclared reference to '{dotted.group(1)}'", roots[-1]
    return message, offset
