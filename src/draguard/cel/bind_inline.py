"""`cel.bind(x, init, body)` evaluated as `body` with `(init)` in place of each read of `x`.

cel-cpp evaluates a bind lazily, in a slot a comprehension that stopped early (`exists` once
true, `all` once false) may have left its last value in: the bind then reads that value
instead of its own (a wrong answer, or an error). CEL is pure, so substituting the initializer
keeps the meaning, errors included (an initializer no read reaches is never evaluated, as in
cel-go). Only the evaluated program is substituted; checks, diagnostics and the cost estimate
read the expression as written. A bind whose initializer reads a name some comprehension in
its body binds again is left as written (the substitution would capture it), and so are the
binds sortBy's expansion makes (they have no text of their own)."""

from __future__ import annotations

import re
from typing import Callable

from .checked import CheckedAst, Expr, children, walk
from .rewrite import Spans, spans

_WRITTEN = re.compile(r"cel\s*\.\s*bind\s*\Z")  # before the macro's `(`, where its span starts
MAX_BINDS = 32  # substituted one at a time, each needing a new check


def inlined(ast: CheckedAst, code: str, check: Callable[[str], CheckedAst]) -> tuple[CheckedAst, str]:
    """(checked AST, code) with every written bind substituted, innermost first."""
    for _ in range(MAX_BINDS):
        found = _innermost_bind(ast, code)
        if found is None:
            break
        code = found
        ast = check(code)
    return ast, code


def _innermost_bind(ast: CheckedAst, code: str) -> str | None:
    """`code` with one written bind (none nested in it) substituted, or None if none can be."""
    span_of = spans(ast, code)
    for expr, _ in ast.nodes:
        bind_start = _written_start(expr, code, span_of)
        if bind_start is None or any(
                _written_start(inner, code, span_of) is not None for inner, _ in list(walk(expr))[1:]):
            continue
        reads = _reads(expr)
        if reads is None:
            continue
        c = expr.comprehension_expr
        init = "(" + code[slice(*span_of[c.accu_init.id])] + ")"
        body_start, body_end = span_of[c.result.id]
        out: list[str] = []
        cursor = body_start
        for start, end in sorted(span_of[read.id] for read in reads):
            out.append(code[cursor:start] + init)
            cursor = end
        return code[:bind_start] + "(" + "".join(out) + code[cursor:body_end] + ")" + code[span_of[expr.id][1]:]
    return None


def _written_start(expr: Expr, code: str, span_of: Spans) -> int | None:
    """Where `cel.bind` starts, for a bind written as such; else None."""
    if not expr.HasField("comprehension_expr") or expr.id not in span_of:
        return None
    c = expr.comprehension_expr
    empty_range = c.iter_range.HasField("list_expr") and not c.iter_range.list_expr.elements
    never = c.loop_condition.HasField("const_expr") and c.loop_condition.const_expr.HasField("bool_value") \
        and not c.loop_condition.const_expr.bool_value
    written = _WRITTEN.search(code, 0, span_of[expr.id][0]) if empty_range and never else None
    return written.start() if written else None


def _reads(bind: Expr) -> list[Expr] | None:
    """The body's reads of the bound name, or None when a comprehension around one binds a
    name the initializer reads (or the bound name is read nowhere it can be replaced)."""
    c = bind.comprehension_expr
    needed = {e.ident_expr.name for e, _ in walk(c.accu_init) if e.HasField("ident_expr")}
    found: list[Expr] = []

    def visit(expr: Expr, bound: frozenset[str]) -> bool:
        if expr.HasField("ident_expr"):
            if expr.ident_expr.name == c.accu_var and c.accu_var not in bound:
                if bound & needed:
                    return False
                found.append(expr)
            return True
        if expr.HasField("comprehension_expr"):
            inner = expr.comprehension_expr
            loop = bound | {inner.iter_var, inner.iter_var2, inner.accu_var} - {""}
            return (visit(inner.iter_range, bound) and visit(inner.accu_init, bound)
                    and visit(inner.loop_condition, loop) and visit(inner.loop_step, loop)
                    and visit(inner.result, bound | {inner.accu_var}))
        return all(visit(child, bound) for child in children(expr))

    return found if visit(c.result, frozenset()) else None
