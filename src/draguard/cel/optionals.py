"""Where a program would hand an optional value to one of draguard's Python functions.

cel-expr-python cannot convert an optional (`optional.of(x)`, `.?field`) to a Python value:
the process dies (a segmentation fault in cel-cpp's bindings), which for the webhook would be
an outage. Upstream evaluates such programs, so draguard refuses them as not evaluated, before
they run. Only arguments whose static type is, or may hide, an optional count: a dyn value
holds one only where an optional was made in the same program."""

from __future__ import annotations

from .checked import CheckedAst, Expr, children

_OPTIONAL = "optional_type"
_UNWRAPPING = ("value", "orValue")  # an optional's own value: a value, unless it hides one


def makes_optionals(ast: CheckedAst) -> bool:
    """Whether any part of the program is an optional (only then may a value hide one)."""
    return any(_OPTIONAL in ast.type_name(expr.id) for expr, _ in ast.nodes)


def hands_optional_to_python(ast: CheckedAst, python_functions: frozenset[str]) -> int | None:
    """The id of the first call of `python_functions` (those taking dyn values) with an
    argument that may hold an optional, or None; for a program that makes_optionals."""
    question = _Question(ast)
    for expr, _ in ast.nodes:
        if expr.HasField("call_expr") and expr.call_expr.function in python_functions \
                and any(question.may_hold(part) for part in children(expr)):
            return expr.id
    return None


class _Question:
    """Whether an expression may evaluate to an optional or to a list or map holding one."""

    def __init__(self, ast: CheckedAst):
        self.ast = ast
        self.asking: set[int] = set()
        self.ancestors = {expr.id: ancestors for expr, ancestors in ast.nodes}

    def may_hold(self, expr: Expr) -> bool:
        kind = self.ast.type_name(expr.id)
        if kind.startswith("type("):
            return False  # a type names optionals without holding one
        if _OPTIONAL in kind:
            return True
        if "dyn" not in kind:
            return False  # a value of a static type without optionals holds none
        if expr.HasField("ident_expr"):  # a comprehension's variable: what it takes its values from
            if expr.id in self.asking:
                return False  # an accumulator's own step: its other sources answer
            self.asking.add(expr.id)
            try:
                return any(self.may_hold(source) for source in self._sources(expr))
            finally:
                self.asking.discard(expr.id)
        if expr.HasField("call_expr") and expr.call_expr.function in _UNWRAPPING and expr.call_expr.HasField("target"):
            target = expr.call_expr.target
            inner = self.ast.type_name(target.id).removeprefix(f"{_OPTIONAL}(")
            return _OPTIONAL in inner or any(self.may_hold(part) for part in (*children(target), *expr.call_expr.args))
        return any(self.may_hold(part) for part in children(expr))

    def _sources(self, ident: Expr) -> tuple[Expr, ...]:
        """The innermost comprehension that binds the name: its range, or for its accumulator
        the initial value and the step (a variable bound by none is the device's: no optional)."""
        name = ident.ident_expr.name
        for ancestor in reversed(self.ancestors.get(ident.id, ())):
            if ancestor.HasField("comprehension_expr"):
                c = ancestor.comprehension_expr
                if name in (c.iter_var, c.iter_var2):
                    return (c.iter_range,)
                if name == c.accu_var:
                    return c.accu_init, c.loop_step
        return ()
