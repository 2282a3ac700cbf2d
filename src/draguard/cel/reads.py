"""What a device expression reads, from its checked AST (cel.checked): the one reading of it.
The selector's memo keys (which attributes and capacities a verdict depends on), the names it
guards with `has()`, the drivers it pins and the values it compares a name with all come from
here, never from the expression's text.

The AST is of the code cel.env compiles: `device.attributes` is the variable
`device_attributes` (cel.env.rewrite_device_fields), `device.driver` is `device_driver`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.value import Value

if TYPE_CHECKING:  # the checked AST is read, never built, here: its schema loads with the engine
    from .checked import CheckedAst, Expr

_INDEX = ("_[_]", "_[?_]")  # m[k], m[?k]
_OPTIONAL_SELECT = "_?._"  # m.?k
_FIELDS = {"device_attributes": "attributes", "device_capacity": "capacity"}

#: (field, domain, name): one name of a domain of the device's attributes or capacity
Name = tuple[str, str, str]


class References(Value):
    """What of a device an expression can read: (field, domain, name or None for the whole
    domain); `everything` when it reads the device in a way that names no domain (the map
    itself iterated, a key computed, `device` as a value)."""

    __slots__ = ("items", "everything", "driver_domains")

    def __init__(self, items: tuple[tuple[str, str, str | None], ...] = (), everything: bool = False,
                 driver_domains: tuple[str, ...] = ()):
        self.items = items
        self.everything = everything
        # (field, ...) of each map it indexes with the device's own driver as the domain
        # (`device.attributes[device.driver]`): a computed key, so not among `items`
        self.driver_domains = driver_domains

    def domains(self, field_name: str) -> set[str]:
        """Domains of `field_name` ('attributes' or 'capacity') the expression subscripts."""
        return {domain for kind, domain, _ in self.items if kind == field_name}


def _kind(expr: Expr) -> str:
    return expr.WhichOneof("expr_kind") or ""


def _string(expr: Expr) -> str | None:
    if _kind(expr) == "const_expr" and expr.const_expr.WhichOneof("constant_kind") == "string_value":
        return expr.const_expr.string_value
    return None


def _key(expr: Expr) -> tuple[Expr, str] | None:
    """(operand, key) of `m[k]`, `m[?k]`, `m.k`, `m.?k` and `has(m.k)` with a constant key."""
    kind = _kind(expr)
    if kind == "select_expr":
        return expr.select_expr.operand, expr.select_expr.field
    if kind == "call_expr" and expr.call_expr.function in (*_INDEX, _OPTIONAL_SELECT) and len(expr.call_expr.args) == 2:
        key = _string(expr.call_expr.args[1])
        return (expr.call_expr.args[0], key) if key is not None else None
    return None


def _field(expr: Expr) -> str | None:
    return _FIELDS.get(expr.ident_expr.name) if _kind(expr) == "ident_expr" else None


def _domain(expr: Expr) -> tuple[str, str] | None:
    """(field, domain) when `expr` is a domain of the device's attributes or capacity."""
    found = _key(expr)
    field_name = None if found is None else _field(found[0])
    return None if found is None or field_name is None else (field_name, found[1])


def _name(expr: Expr) -> Name | None:
    """(field, domain, name) when `expr` is one name of a domain."""
    found = _key(expr)
    if found is None:
        return None
    domain = _domain(found[0])
    return (*domain, found[1]) if domain is not None else None


def references(ast: CheckedAst) -> References:
    """Each domain and name the expression reads; `everything` when a use of the device's
    maps is none of those (or `device` itself is used)."""
    items: list[tuple[str, str, str | None]] = []
    subscripted: set[int] = set()
    for expr, ancestors in ast.nodes:
        name = _name(expr)
        if name is not None:
            items.append(name)
            continue
        key, domain = _key(expr), _domain(expr)
        if key is not None and domain is not None:
            subscripted.add(id(key[0]))
            if not ancestors or _name(ancestors[-1]) is None:  # the domain itself, not one of its names
                items.append((*domain, None))
    opaque = any((_field(expr) is not None and id(expr) not in subscripted)
                 or (_kind(expr) == "ident_expr" and expr.ident_expr.name == "device") for expr, _ in ast.nodes)
    return References(tuple(dict.fromkeys(items)), opaque, _driver_domains(ast))


def _driver_domains(ast: CheckedAst) -> tuple[str, ...]:
    """The fields ('attributes', 'capacity') the expression indexes with `device.driver`."""
    found = []
    for expr, _ in ast.nodes:
        if _kind(expr) == "call_expr" and expr.call_expr.function in _INDEX and len(expr.call_expr.args) == 2:
            operand, key = expr.call_expr.args
            field_name = _field(operand)
            if field_name is not None and _kind(key) == "ident_expr" and key.ident_expr.name == "device_driver":
                found.append(field_name)
    return tuple(dict.fromkeys(found))


def guarded(ast: CheckedAst) -> set[Name]:
    """(field, domain, name) of each name the expression tests with `has()`."""
    return {name for expr, _ in ast.nodes if _kind(expr) == "select_expr" and expr.select_expr.test_only
            and (name := _name(expr)) is not None}


def compared(ast: CheckedAst) -> dict[tuple[str, ...], set[str]]:
    """(field, domain, name) -> the strings the expression compares it with (`==`, not under
    a `!`), and ('driver',) -> the drivers `device.driver == '...'` names."""
    found: dict[tuple[str, ...], set[str]] = {}
    for expr, ancestors in ast.nodes:
        if _kind(expr) != "call_expr" or expr.call_expr.function != "_==_" or len(expr.call_expr.args) != 2:
            continue
        if any(_kind(a) == "call_expr" and a.call_expr.function == "!_" for a in ancestors):
            continue  # !(device.driver == 'x') selects every driver but x
        left, right = expr.call_expr.args
        for side, other in ((left, right), (right, left)):
            value = _string(other)
            if value is None:
                continue
            if _kind(side) == "ident_expr" and side.ident_expr.name == "device_driver":
                found.setdefault(("driver",), set()).add(value)
            elif (name := _name(side)) is not None:
                found.setdefault(name, set()).add(value)
    return found
