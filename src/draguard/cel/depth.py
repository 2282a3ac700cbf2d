"""How deep cel-go's parser finds an expression, against its recursion limit of 250
(parser.MaxRecursionDepth: NewParser's default, which the API server's environment keeps).

cel-go refuses an expression in two places, with two messages, and draguard's engine
(cel-cpp, 32 levels) cannot tell them from its own, lower limit:

- its ANTLR listener counts the nesting of the grammar's `expr` rule (the whole expression,
  a parenthesized one, each call argument, list element, map key and value, index, and a
  conditional's else branch): past 250, "expression recursion limit exceeded: 250";
- its visitor (parser.go, checkAndIncrementRecursionDepth) counts, along a path of the
  tree, the conditionals, relations (`<`, `==`, `in`, ...), arithmetic operators, field
  selections, member calls and indexes it visits (`&&`, `||`, `!`, a negation and
  parentheses are not counted: parser.go unnest); past 250, "max recursion depth exceeded".

This module measures both on the expression's tokens, with the grammar's precedence
(CEL.g4), without building a tree: chains of operators and selections are loops, and the
recursion follows the `expr` nesting only, which stops past the limit."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

#: cel-go parser/parser.go NewParser: maxRecursionDepth defaults to 250 when not set, and
#: k8s.io/apiserver/pkg/cel/environment (the base environment of every API server CEL
#: expression, DRA's selectors included) sets no parser recursion limit of its own.
MAX_RECURSION_DEPTH = 250

LISTENER = f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}"
VISITOR = "max recursion depth exceeded"

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''
                |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[uU]?)
  | (?P<name>[_a-zA-Z][_a-zA-Z0-9]*|`[^`]*`)
  | (?P<op>\|\||&&|<=|>=|==|!=|[?:<>+\-*/%!.,()\[\]{}])
""", re.VERBOSE)

#: binary levels, loosest first: `||` and `&&` (balanced by cel-go, not counted), then the
#: relations and the two arithmetic levels (counted, one per operator along a path)
_LEVELS = (({"||"}, False), ({"&&"}, False), ({"<", "<=", ">=", ">", "==", "!=", "in"}, True),
           ({"+", "-"}, True), ({"*", "/", "%"}, True))


class _TooDeep(Exception):
    pass


class _Unparsed(Exception):
    """Not a CEL expression cel-go would parse: its syntax error is for the compiler to say."""


def recursion_error(expression: str) -> str | None:
    """cel-go's message when its parser refuses `expression` as nested too deeply, else None
    (also for an expression that does not parse: its syntax error is reported as such)."""
    if len(expression) < MAX_RECURSION_DEPTH:  # each level takes a character at least
        return None
    tokens = [m.group() for m in _TOKEN.finditer(expression) if m.lastgroup != "space"]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 16 * MAX_RECURSION_DEPTH + 2000))  # 12 frames per `expr` level at most
    try:
        depth = _Parser(tokens).start()
    except _TooDeep:
        return LISTENER
    except (_Unparsed, IndexError):
        return None
    finally:
        sys.setrecursionlimit(limit)
    return VISITOR if depth > MAX_RECURSION_DEPTH else None


class _Parser:
    """Recursive descent over the tokens; each method returns the visitor's count of its part."""

    def __init__(self, tokens: list[str]):
        self.tokens, self.at = tokens + ["<end>"], 0

    def peek(self, ahead: int = 0) -> str:
        return self.tokens[self.at + ahead]

    def take(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        if expected is not None and token != expected:
            raise _Unparsed(expected)
        self.at += 1
        return token

    def start(self) -> int:
        depth = self.expr(0)
        if self.peek() != "<end>":
            raise _Unparsed("end")
        return depth

    def expr(self, nesting: int) -> int:
        """The grammar's `expr`: one level for the listener; a conditional counts for the visitor."""
        nesting += 1
        if nesting > MAX_RECURSION_DEPTH:
            raise _TooDeep
        condition = self.binary(0, nesting)
        if self.peek() != "?":
            return condition
        self.take()
        then = self.binary(0, nesting)
        self.take(":")
        return 1 + max(condition, then, self.expr(nesting))

    def binary(self, level: int, nesting: int) -> int:
        if level == len(_LEVELS):
            return self.unary(nesting)
        operators, counted = _LEVELS[level]
        depth = self.binary(level + 1, nesting)
        while self.peek() in operators:
            self.take()
            right = self.binary(level + 1, nesting)
            depth = (1 + max(depth, right)) if counted else max(depth, right)
        return depth

    def unary(self, nesting: int) -> int:
        while self.peek() in ("!", "-"):
            self.take()
        return self.member(nesting)

    def member(self, nesting: int) -> int:
        depth = self.primary(nesting)
        while True:
            if self.peek() == ".":
                self.take()
                if self.peek() == "?":
                    self.take()
                self._name()
                if self.peek() == "(":
                    depth = 1 + max(depth, self.arguments(")", nesting))
                else:
                    depth += 1
            elif self.peek() == "[":
                self.take()
                if self.peek() == "?":
                    self.take()
                depth = 1 + max(depth, self.expr(nesting))
                self.take("]")
            elif self.peek() == "{":  # a message literal after a (qualified) type name
                depth = max(depth, self.entries("}", nesting, fields=True))
            else:
                return depth

    def primary(self, nesting: int) -> int:
        token = self.peek()
        if token == ".":
            self.take()
            token = self.peek()
        if token == "(":
            self.take()
            depth = self.expr(nesting)
            self.take(")")
            return depth
        if token == "[":
            self.take()
            return self.elements("]", nesting)
        if token == "{":
            self.take()
            return self.entries("}", nesting)
        self.take()
        if token[:1].isalpha() or token[:1] in "_`":
            if self.peek() == "(":  # a global call: not counted
                return self.arguments(")", nesting)
            return 0
        if token[:1].isdigit() or token[:1] in "\"'" or (token[:1] == "." and token[1:2].isdigit()) \
                or token[:1] in "rRbB":
            return 0
        raise _Unparsed(token)

    def _name(self) -> int:
        """An identifier (a field, a function, a message's field): no depth of its own."""
        token = self.take()
        if not (token[:1].isalpha() or token[:1] in "_`"):
            raise _Unparsed(token)
        return 0

    def arguments(self, closing: str, nesting: int) -> int:
        self.take("(")
        return self.elements(closing, nesting)

    def elements(self, closing: str, nesting: int) -> int:
        """Expressions separated by commas up to `closing`."""
        return self._separated(closing, lambda: self.expr(nesting))

    def entries(self, closing: str, nesting: int, fields: bool = False) -> int:
        """`key: value` pairs up to `closing`: a map's keys are expressions, a message's field
        names are not."""
        if fields:
            self.take("{")

        def entry() -> int:
            key = self._name() if fields else self.expr(nesting)
            self.take(":")
            return max(key, self.expr(nesting))

        return self._separated(closing, entry)

    def _separated(self, closing: str, item: Callable[[], int]) -> int:
        """Items separated by commas up to `closing` (a trailing comma allowed), each optionally
        marked `?` (optional syntax); the deepest item's count."""
        depth = 0
        while self.peek() != closing:
            if self.peek() == "?":
                self.take()
            depth = max(depth, item())
            if self.peek() != ",":
                break
            self.take()
        self.take(closing)
        return depth
