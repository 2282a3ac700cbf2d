"""No parameter list over six in the engine and the command line (issue #40, item 1): what
travels together is one value (engine.lint.Reading, cli.simulate.Setting). The MCP tools are
left out: their parameters are the tool's arguments, the JSON schema its clients call with."""

from __future__ import annotations

import ast

from support.paths import ROOT

MOST = 6


def _decorators(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in node.decorator_list}


def _record_constructors(tree: ast.Module) -> set[ast.AST]:
    """The `__init__` of each core.value record: its parameters are the record's fields, one
    value (a dataclass's generated `__init__`, which it replaced to start faster, was never
    in the source to count)."""
    return {node for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)
            and {getattr(base, "id", "") for base in cls.bases} & {"Value", "Record"}
            for node in cls.body if isinstance(node, ast.FunctionDef) and node.name == "__init__"}


def _too_long(package: str) -> list[str]:
    found = []
    for path in sorted((ROOT / "src" / "draguard" / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        records = _record_constructors(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or "tool" in _decorators(node) \
                    or node in records:
                continue
            args = node.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            count = len(names) + bool(args.vararg) + bool(args.kwarg) - (names[:1] in (["self"], ["cls"]))
            if count > MOST:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({count})")
    return found


def test_no_parameter_list_over_six_in_the_engine_and_the_cli():
    assert _too_long("engine") + _too_long("cli") == []
