"""The code reads as core -> teardown -> sources -> facts -> model -> cel -> dra -> simulate -> rules -> engine -> fix
-> cluster -> admission -> report -> generate -> cli (shared/DESIGN.md's flow; simulate sits before rules because
rollout-deadlock's check is a simulation): a package imports only packages before it (lazy imports inside
functions included), only the cli imports the teardown helper, rule modules never import one another, and
module-level imports have no cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import draguard

PACKAGE = Path(draguard.__file__).parent
LAYERS = ["core", "teardown", "sources", "facts", "model", "cel", "dra", "simulate", "rules", "engine", "fix", "cluster",
          "admission", "report", "generate", "cli"]
#: modules of rules/ that category modules share; everything else there is one category
RULE_SUPPORT = {"base", "registry", "context", "examples", "cluster_examples", "admission", "input", "index"}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield path, parts


def _imports(path: Path, parts: tuple, top_level_only: bool):
    """(imported module parts under draguard, line) for every draguard import."""
    tree = ast.parse(path.read_text(), str(path))
    nodes = tree.body if top_level_only else ast.walk(tree)
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                target = base + tuple(node.module.split(".")) if node.module else base
            elif node.module and node.module.startswith("draguard"):
                target = tuple(node.module.split(".")[1:])
            else:
                continue
            for alias in node.names:  # `from . import x` imports the module x
                candidate = target + (alias.name,)
                full = candidate if (PACKAGE.joinpath(*candidate).with_suffix(".py").exists()
                                     or PACKAGE.joinpath(*candidate).is_dir()) else target
                yield full, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("draguard."):
                    yield tuple(alias.name.split(".")[1:]), node.lineno


def test_no_package_imports_a_later_layer():
    wrong = []
    for path, parts in _modules():
        if parts[0] not in LAYERS:
            continue
        rank = LAYERS.index(parts[0])
        for target, line in _imports(path, parts, top_level_only=False):
            if target and target[0] in LAYERS and LAYERS.index(target[0]) > rank:
                wrong.append(f"{'/'.join(parts)}.py:{line} imports {'.'.join(target)}")
    assert not wrong, wrong


def test_the_teardown_helper_needs_only_the_standard_library_and_nvml():
    """It runs in a preStop hook from a minimal install (`pip install --no-deps draguard
    nvidia-ml-py`): no third-party import but pynvml in its modules or in the core modules
    they read (the amounts and servers it shares with the rules)."""
    import sys

    wrong, seen = [], set()
    todo = [parts for _, parts in _modules() if parts[0] == "teardown"]
    while todo:
        parts = todo.pop()
        path = PACKAGE.joinpath(*parts).with_suffix(".py")
        if parts in seen or not path.exists():
            continue
        seen.add(parts)
        for target, line in _imports(path, parts, top_level_only=False):
            if target[0] not in ("teardown", "core"):
                wrong.append(f"{'/'.join(parts)}.py:{line} imports draguard.{'.'.join(target)}")
            todo.append(target)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and not node.level else []
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("pynvml", "__future__"):
                    wrong.append(f"{'/'.join(parts)}.py:{node.lineno} imports {name}")
    assert ("core", "amounts") in seen  # the walk follows the helper into core
    assert not wrong, wrong


def test_only_the_cli_imports_the_teardown_helper():
    wrong = [f"{'/'.join(parts)}.py:{line}" for path, parts in _modules() if parts[0] not in ("teardown", "cli")
             for target, line in _imports(path, parts, top_level_only=False) if target[:1] == ("teardown",)]
    assert not wrong, wrong


def test_rule_modules_do_not_import_each_other():
    wrong = []
    for path, parts in _modules():
        if parts[0] != "rules" or len(parts) != 2 or parts[1] in RULE_SUPPORT | {"__init__"}:
            continue
        for target, line in _imports(path, parts, top_level_only=False):
            if len(target) >= 2 and target[0] == "rules" and target[1] not in RULE_SUPPORT:
                wrong.append(f"{'/'.join(parts)}.py:{line} imports rules.{target[1]}")
    assert not wrong, wrong


def test_module_level_imports_have_no_cycle():
    graph = {}
    for path, parts in _modules():
        name = ".".join(p for p in parts if p != "__init__")
        graph[name] = {".".join(p for p in target if p != "__init__") for target, _ in
                       _imports(path, parts, top_level_only=True)} - {name}
    state, cycle = {}, []

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == "open":
                cycle.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    # a package's __init__ importing its own modules is not a cycle between modules
    real = [c for c in cycle if not all(n.startswith(c[0] + ".") or n == c[0] for n in c[1:])]
    assert not real, real
