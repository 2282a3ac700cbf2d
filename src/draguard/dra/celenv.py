"""Device selectors compiled and evaluated with cel-expr-python (Google's cel-cpp), in the
environment kube-scheduler gives them (k8s.io/dynamic-resource-allocation/cel):

- `device.driver` (string), `device.attributes[domain][name]` (dyn: string, int, bool or
  semver), `device.capacity[domain][name]` (Quantity), `device.allowMultipleAllocations`;
- the Kubernetes quantity and semver libraries (member functions such as `compareTo`,
  `isGreaterThan`, `asInteger`), `find`/`findAll` of the regex library, strings v2, lists
  macros and `cel.bind`;
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

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from .quantity import QuantityError, is_quantity, parse_quantity

MAX_EXPRESSION_LENGTH = 10 * 1024
DEVICE_FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")
MEMO_LIMIT = 1 << 16  # results kept per selector; a long-running process sees new devices forever


# --- the engine, built on first use ------------------------------------------------------------

class _Runtime:
    """cel-expr-python, protobuf and semver, imported when the first selector is compiled:
    commands that compile none (`draguard rules`, `explain`) do not load them."""

    def __init__(self):
        import semver
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_strings
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        self.cel, self.semver = cel, semver
        self.extensions = (ext_strings, ext_bindings)
        proto = descriptor_pb2.FileDescriptorProto(name="draguard/dra_cel.proto", package="draguard",
                                                   syntax="proto3")
        for name in ("Quantity", "Semver"):
            message = proto.message_type.add(name=name)
            message.field.add(name="value", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                              label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        self.pool = descriptor_pool.DescriptorPool()
        self.pool.Add(proto)
        self.Quantity, self.Semver = (
            message_factory.GetMessageClass(self.pool.FindMessageTypeByName(f"draguard.{name}"))
            for name in ("Quantity", "Semver"))
        self.T = cel.Type
        self.QT, self.ST = cel.Type("draguard.Quantity"), cel.Type("draguard.Semver")
        self.functions = _function_table(self)
        self.variables = {
            "device_driver": self.T.STRING,
            "device_attributes": self.T.Map(self.T.STRING, self.T.Map(self.T.STRING, self.T.DYN)),
            "device_capacity": self.T.Map(self.T.STRING, self.T.Map(self.T.STRING, self.QT)),
            "device_allowMultipleAllocations": self.T.BOOL,
        }
        self.env = self.new_env()

    def new_env(self, constants: dict[str, object] | None = None):
        cel = self.cel
        declarations: dict[str, list] = {}
        for name, overload_id, returns, params, member, impl in self.functions:
            overload = (cel.Overload(overload_id, returns, params, is_member=member, impl=impl) if impl else
                        cel.Overload(overload_id, returns, params, is_member=member))
            declarations.setdefault(name, []).append(overload)
        variables = dict(self.variables)
        for name in constants or {}:
            variables[name] = self.QT
        ext_strings, ext_bindings = self.extensions
        return cel.NewEnv(self.pool, variables=variables,
                          extensions=[ext_strings.ExtStrings(version=2), ext_bindings.ExtBindings()],
                          functions=[cel.FunctionDecl(name, overloads) for name, overloads in declarations.items()])


_RUNTIME: _Runtime | None = None


def runtime() -> _Runtime:
    global _RUNTIME
    if _RUNTIME is None:
        _RUNTIME = _Runtime()
    return _RUNTIME


# --- value types ---------------------------------------------------------------------------

def quantity_message(value: Fraction) -> object:
    """A Quantity value for CEL. The exact fraction is the value, so `==` compares numbers."""
    return runtime().Quantity(value=f"{value.numerator}/{value.denominator}")


def _q(message) -> Fraction:
    return _fraction(message.value)


@lru_cache(maxsize=8192)
def _fraction(text: str) -> Fraction:
    return Fraction(text)


@lru_cache(maxsize=4096)
def _version(text: str):
    return runtime().semver.Version.parse(text)


def semver_message(text: str) -> object:
    return runtime().Semver(value=str(_version(text)))


def _normalize_semver(text: str) -> str:
    """k8s semver(s, true): drop a leading 'v', fill in missing minor/patch, drop leading zeros."""
    text = text[1:] if text.startswith("v") else text
    match = re.match(r"^(\d+(?:\.\d+)*)(.*)$", text)
    if not match:
        return text
    parts = [str(int(p)) for p in match.group(1).split(".")]
    return ".".join(parts + ["0"] * (3 - len(parts))) + match.group(2)


def _cmp(a, b) -> int:
    return (a > b) - (a < b)


def _compare(a, b) -> int:
    if isinstance(a, runtime().Semver):
        return _version(a.value).compare(_version(b.value))
    return _cmp(_q(a), _q(b))


def _as_integer(message) -> int:
    value = _q(message)
    if value.denominator != 1 or not -(2**63) <= value.numerator < 2**63:
        raise ValueError("cannot convert value to integer")
    return value.numerator


def _semver(text, normalize=False):
    try:
        return semver_message(_normalize_semver(text) if normalize else text)
    except ValueError as exc:
        raise ValueError(f"could not parse {text!r} as a semantic version: {exc}") from None


def _is_semver(text, normalize=False) -> bool:
    try:
        _semver(text, normalize)
    except ValueError:
        return False
    return True


def _quantity(text):
    try:
        return quantity_message(parse_quantity(text))
    except QuantityError as exc:
        raise ValueError(str(exc)) from None


def _find_all(text, pattern, limit=-1):
    found = re.findall(pattern, text)
    found = [m if isinstance(m, str) else m[0] for m in found]
    return found if limit < 0 else found[:limit]


def _find(text, pattern):
    match = re.search(pattern, text)
    return match.group(0) if match else ""


def _function_table(rt: _Runtime) -> list:
    """(name, overload id, return type, parameter types, is member, implementation): the
    Kubernetes quantity and semver libraries and the regex library's find/findAll."""
    T, QT, ST = rt.T, rt.QT, rt.ST
    return [
        ("quantity", "quantity_string", QT, [T.STRING], False, _quantity),
        ("isQuantity", "isQuantity_string", T.BOOL, [T.STRING], False, is_quantity),
        ("sign", "quantity_sign", T.INT, [QT], True, lambda q: _cmp(_q(q), 0)),
        ("isInteger", "quantity_isInteger", T.BOOL, [QT], True, lambda q: _q(q).denominator == 1),
        ("asInteger", "quantity_asInteger", T.INT, [QT], True, _as_integer),
        ("asApproximateFloat", "quantity_asApproximateFloat", T.DOUBLE, [QT], True, lambda q: float(_q(q))),
        ("add", "quantity_add", QT, [QT, QT], True, lambda a, b: quantity_message(_q(a) + _q(b))),
        ("add", "quantity_add_int", QT, [QT, T.INT], True, lambda a, b: quantity_message(_q(a) + b)),
        ("sub", "quantity_sub", QT, [QT, QT], True, lambda a, b: quantity_message(_q(a) - _q(b))),
        ("sub", "quantity_sub_int", QT, [QT, T.INT], True, lambda a, b: quantity_message(_q(a) - b)),
        # cel-cpp registers implementations by argument kind (message, message), so the Quantity
        # and Semver overloads of these three share one implementation that dispatches on type
        ("compareTo", "quantity_compareTo", T.INT, [QT, QT], True, lambda a, b: _compare(a, b)),
        ("isGreaterThan", "quantity_isGreaterThan", T.BOOL, [QT, QT], True, lambda a, b: _compare(a, b) > 0),
        ("isLessThan", "quantity_isLessThan", T.BOOL, [QT, QT], True, lambda a, b: _compare(a, b) < 0),
        ("semver", "semver_string", ST, [T.STRING], False, _semver),
        ("semver", "semver_string_bool", ST, [T.STRING, T.BOOL], False, _semver),
        ("isSemver", "isSemver_string", T.BOOL, [T.STRING], False, _is_semver),
        ("isSemver", "isSemver_string_bool", T.BOOL, [T.STRING, T.BOOL], False, _is_semver),
        ("major", "semver_major", T.INT, [ST], True, lambda s: _version(s.value).major),
        ("minor", "semver_minor", T.INT, [ST], True, lambda s: _version(s.value).minor),
        ("patch", "semver_patch", T.INT, [ST], True, lambda s: _version(s.value).patch),
        ("compareTo", "semver_compareTo", T.INT, [ST, ST], True, None),
        ("isGreaterThan", "semver_isGreaterThan", T.BOOL, [ST, ST], True, None),
        ("isLessThan", "semver_isLessThan", T.BOOL, [ST, ST], True, None),
        ("find", "string_find", T.STRING, [T.STRING, T.STRING], True, _find),
        ("findAll", "string_findAll", T.List(T.STRING), [T.STRING, T.STRING], True, _find_all),
        ("findAll", "string_findAll_int", T.List(T.STRING), [T.STRING, T.STRING, T.INT], True, _find_all),
    ]


# --- source rewriting ----------------------------------------------------------------------

_STRING = re.compile(r"""[rR]?(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")""", re.S)
_DEVICE_FIELD = re.compile(r"\bdevice\s*\.\s*(" + "|".join(DEVICE_FIELDS) + r")\b")
_QUANTITY_LITERAL = re.compile(r"""\bquantity\(\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*\)""")


def _code_spans(text: str):
    """(start, end) of the parts of `text` outside string literals."""
    position = 0
    for literal in _STRING.finditer(text):
        yield position, literal.start()
        position = literal.end()
    yield position, len(text)


def rewrite_device_fields(expression: str) -> str:
    """`device.attributes` -> `device_attributes` outside string literals (same length)."""
    out = []
    for start, end in _code_spans(expression):
        code = expression[start:end]
        out.append(_DEVICE_FIELD.sub(lambda m: "device_" + m.group(1) + " " * (len(m.group(0)) - 7 - len(m.group(1))),
                                     code))
        if end < len(expression):
            literal = _STRING.match(expression, end)
            out.append(literal.group(0) if literal else "")
    return "".join(out)


def _fold_quantities(code: str) -> tuple[str, dict[str, object]]:
    """Replace `quantity('40Gi')` literals by constants bound once (no Python call per eval)."""
    constants: dict[str, object] = {}

    def replace(match):
        text = match.group(1) if match.group(1) is not None else match.group(2)
        try:
            value = parse_quantity(text)
        except QuantityError:
            return match.group(0)  # left for the runtime to report, as upstream
        name = f"draguard_q{len(constants)}"
        constants[name] = quantity_message(value)
        return name

    return _QUANTITY_LITERAL.sub(replace, code), constants


# --- references (memo keys) ------------------------------------------------------------------

# `.name` after a domain subscript is an attribute, unless a call follows: `.size()`,
# `.exists(k, ...)` and other members of the domain map read the whole domain
_REF = re.compile(r"""device_(attributes|capacity)\s*\[\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*\]"""
                  r"""(?:\s*\.\s*([A-Za-z_]\w*)\b(?!\s*\()|\s*\[\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*\])?""")


@dataclass(frozen=True)
class References:
    """What of a device an expression can read: (field, domain, name or None for the whole
    domain); `everything` when it reads the device in a way we cannot see statically."""

    items: tuple = ()
    everything: bool = False

    def domains(self, field_name: str) -> set[str]:
        """Domains of `field_name` ('attributes' or 'capacity') the expression subscripts."""
        return {domain for kind, domain, _ in self.items if kind == field_name}


def _references(code: str) -> References:
    items, spans = [], []
    for m in _REF.finditer(code):
        domain = m.group(2) if m.group(2) is not None else m.group(3)
        name = m.group(4) or m.group(5) or m.group(6)
        items.append((m.group(1), domain, name))
        spans.append(m.start())
    all_uses = [m.start() for m in re.finditer(r"device_(attributes|capacity)\b", code)]
    opaque = bool(re.search(r"\bdevice\b(?!_)", code)) or len(all_uses) != len(spans)
    return References(tuple(dict.fromkeys(items)), opaque)


# --- compilation ---------------------------------------------------------------------------

@dataclass
class CelDiagnostic:
    message: str
    offset: int  # 0-based character offset into the expression
    suggestion: str | None = None


class CelRuntimeError(Exception):
    pass


_ERROR_AT = re.compile(r"<input>:(\d+):(\d+): (.*?)(?:\n|$)")
_SIZE_LITERAL = re.compile(r"(device\.(attributes|capacity)\[\s*(['\"])([^'\"]+)\3\s*\]\.(\w+))\s*"
                           r"(==|!=|>=|<=|>|<)\s*(\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|Pi|Ei|[kMGTPE])?\b|['\"][^'\"]*['\"])")
_CMP_TO = {"==": "== 0", "!=": "!= 0", ">=": ">= 0", "<=": "<= 0", ">": "> 0", "<": "< 0"}


def _offset(expression: str, line: int, column: int) -> int:
    lines = expression.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + column - 1


def suggest(expression: str) -> str | None:
    """A corrected expression for the classic mistake of comparing a size without quantity(),
    wherever such comparisons stand in the expression (every one is rewritten)."""
    def rewrite(match):
        _, field_name, _, domain, name, operator, literal = match.groups()
        literal = literal.strip("'\"")
        if not is_quantity(literal) or (field_name == "attributes" and literal.isdigit()):
            return match.group(0)  # a plain number compared with an attribute is fine
        return f"device.capacity['{domain}'].{name}.compareTo(quantity('{literal}')) {_CMP_TO[operator]}"

    fixed = _SIZE_LITERAL.sub(rewrite, expression)
    return fixed if fixed != expression else None


@dataclass
class CompiledSelector:
    expression: str
    error: CelDiagnostic | None = None
    references: References = field(default_factory=References)
    _program: object = None
    _constants: dict = field(default_factory=dict)
    _memo: dict = field(default_factory=dict)

    def matches(self, device) -> bool:
        """Evaluate on a device (see dra.devices.Device). Memoized by the values the expression
        reads. Raises CelRuntimeError as upstream aborts the allocation on one."""
        key = device.memo_key(self.references)
        found = self._memo.get(key)
        if found is None:
            if len(self._memo) >= MEMO_LIMIT:
                self._memo.clear()
            found = self._memo[key] = self._evaluate(device)
        if isinstance(found, CelRuntimeError):
            raise found
        return found

    def _evaluate(self, device):
        data = device.cel_data(self.references)
        if self._constants:
            data = dict(data, **self._constants)
        try:
            result = self._program.eval(data=data)
        except RuntimeError as exc:  # cel-cpp's own iteration budget: upstream's cost limit ends it the same way
            if "budget" in str(exc).lower():
                return CelRuntimeError("operation cancelled: actual cost limit exceeded")
            return CelRuntimeError(str(exc).replace("device_", "device."))
        kind = result.type()
        types = runtime().T
        if kind == types.BOOL:
            return bool(result.value())
        if kind == types.ERROR:
            return CelRuntimeError(str(result.value()).replace("device_", "device."))
        # never read the value of a null result (crashes cel-expr-python 0.1.3 on 3.11)
        return CelRuntimeError(f"expression must evaluate to bool, got {kind.name().lower()}")


@lru_cache(maxsize=4096)
def compile_selector(expression: str) -> CompiledSelector:
    """Compile and type-check one selector (cached by its text)."""
    if len(expression) > MAX_EXPRESSION_LENGTH:
        return CompiledSelector(expression, CelDiagnostic(
            f"expression is {len(expression)} characters long; the limit is {MAX_EXPRESSION_LENGTH}",
            MAX_EXPRESSION_LENGTH))
    code = rewrite_device_fields(expression)
    rt = runtime()
    try:
        checked = rt.env.compile(code)
    except RuntimeError as exc:
        return CompiledSelector(expression, _diagnostic(expression, str(exc)))
    returns = checked.return_type()
    if returns != rt.T.BOOL and returns != rt.T.DYN:
        return CompiledSelector(expression, CelDiagnostic(
            f"expression must evaluate to bool, not {returns.name().lower()}", 0))
    folded, constants = _fold_quantities(code)
    program = rt.new_env(constants).compile(folded) if constants else checked
    return CompiledSelector(expression, None, _references(code), program, constants)


def all_compile(expressions) -> bool:
    """Whether every expression compiles (cel-invalid reports those that do not: other rules
    leave such requests alone rather than report the same fault again)."""
    return all(compile_selector(expression).error is None for expression in expressions)


def _diagnostic(expression: str, text: str) -> CelDiagnostic:
    match = _ERROR_AT.search(text)
    message = (match.group(3) if match else text.splitlines()[0]).replace("device_", "device.")
    message = message.replace(" (in container '')", "")  # cel-cpp's, about its own containers
    offset = _offset(expression, int(match.group(1)), int(match.group(2))) if match else 0
    message = message.replace("draguard.Quantity", "Quantity").replace("draguard.Semver", "Semver")
    unknown = re.match(r"undeclared reference to 'device\.(\w+)'", message)
    if unknown:  # `device` is not a variable here, so cel-cpp cannot say "undefined field" itself
        message = (f"undefined field '{unknown.group(1)}' of device (it has "
                   f"{', '.join(DEVICE_FIELDS)})")
    return CelDiagnostic(message, max(0, min(offset, len(expression))), suggest(expression))
