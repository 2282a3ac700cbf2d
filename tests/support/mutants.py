"""A mutation check of the rules' tests: small changes to the code of each rule module (a
comparison flipped, `and` for `or`, a `not` dropped, a number moved by one, a boolean
constant flipped), each judged by what the rules' golden tests hold (tests/rules and
tests/unit/rules/test_rule_examples.py): the failing example's findings (findings.json), the
text its fixes leave (fixed.yaml), and the passing example clean of the rule. A mutant is
killed when one of those differs, or when judging it raises or runs past a time limit; the
share of mutants killed says how much of the rules' behaviour those tests pin down.

Only code inside functions is changed (a rule's metadata is data, checked elsewhere), and a
mutant reaches the rules of its own module: it is executed as a fresh copy of that module,
whose rule classes stand in for the registered ones while it is judged.

    cd tests && python -m support.mutants [--sample 200] [--seed 1] [--module rules.legacy]
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import random
import signal
import sys
import time
import types
from contextlib import contextmanager
from dataclasses import dataclass

_FLIPPED = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
            ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


@dataclass(frozen=True)
class Mutant:
    module: str  # draguard.rules.<name>
    site: int  # the index of the changed node among the module's candidate nodes (ast.walk order)
    line: int
    what: str


def _candidates(tree: ast.Module) -> list[tuple[ast.AST, str]]:
    """(node, what changing it does) for every node inside a function that a mutation changes."""
    found, seen = [], set()
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(function):
            if id(node) in seen:
                continue  # a nested function's nodes are walked once
            seen.add(id(node))
            if isinstance(node, ast.Compare) and type(node.ops[0]) in _FLIPPED:
                found.append((node, f"{type(node.ops[0]).__name__} -> {_FLIPPED[type(node.ops[0])].__name__}"))
            elif isinstance(node, ast.BoolOp):
                found.append((node, "and -> or" if isinstance(node.op, ast.And) else "or -> and"))
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                found.append((node, "not dropped"))
            elif isinstance(node, ast.Constant) and type(node.value) is bool:
                found.append((node, f"{node.value} -> {not node.value}"))
            elif isinstance(node, ast.Constant) and type(node.value) is int:
                found.append((node, f"{node.value} -> {node.value + 1}"))
    return found


class _Apply(ast.NodeTransformer):
    def __init__(self, target: ast.AST):
        self.target = target

    def visit(self, node):
        if node is not self.target:
            return super().visit(node)
        if isinstance(node, ast.Compare):
            node.ops[0] = _FLIPPED[type(node.ops[0])]()
        elif isinstance(node, ast.BoolOp):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif isinstance(node, ast.UnaryOp):
            return node.operand
        elif type(node.value) is bool:
            node.value = not node.value
        else:
            node.value += 1
        return node


def rule_modules() -> list[str]:
    """The modules that define registered rules."""
    from draguard.rules import REGISTRY

    return sorted({type(rule).__module__ for rule in REGISTRY})


def mutants(modules: list[str]) -> list[Mutant]:
    out = []
    for name in modules:
        tree = ast.parse(_source(name))
        out += [Mutant(name, i, getattr(node, "lineno", 0), what) for i, (node, what) in enumerate(_candidates(tree))]
    return out


def _source(module: str) -> str:
    with open(importlib.import_module(module).__file__, encoding="utf-8") as handle:
        return handle.read()


def _mutated_module(mutant: Mutant) -> types.ModuleType:
    """A fresh copy of the mutant's module with its change, its `@register` left out (the
    registered rules stay; this copy's classes stand in for them: _standing_in)."""
    from draguard.rules import registry

    tree = ast.parse(_source(mutant.module))
    node, _ = _candidates(tree)[mutant.site]
    tree = ast.fix_missing_locations(_Apply(node).visit(tree))
    module = types.ModuleType(mutant.module)
    module.__package__ = mutant.module.rpartition(".")[0]
    module.__file__ = importlib.import_module(mutant.module).__file__
    saved = registry.register
    registry.register = lambda cls: cls
    try:
        exec(compile(tree, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own source, changed
    finally:
        registry.register = saved
    return module


@contextmanager
def _standing_in(module: types.ModuleType):
    """The module's rule classes in place of the registered ones of the same ids."""
    from draguard.rules import REGISTRY

    table = REGISTRY._rules
    saved = dict(table)
    for value in vars(module).values():
        if isinstance(value, type) and getattr(value, "id", None) in table and value.__module__ == module.__name__:
            table[value.id] = value()
    try:
        yield
    finally:
        table.clear()
        table.update(saved)


class _TooLong(Exception):
    pass


@contextmanager
def _time_limit(seconds: int):
    def expire(*_):
        raise _TooLong

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def held(rule) -> bool:
    """Whether the rule still does what its golden tests hold: its golden folder as
    expected (findings.json, fixed.yaml), and its passing example clean of it."""
    from support.goldens import GOLDENS, expected_files, judged

    folder = GOLDENS / rule.id
    if not folder.is_dir():
        return True
    expected = expected_files(rule)
    found = {p.name: p.read_text() for p in folder.iterdir()}
    if found != expected:
        return False
    passing = folder / "pass.yaml"
    return not passing.is_file() or not [f for f in judged(rule, passing) if f.rule == rule.id]


def killed(mutant: Mutant, seconds: int = 60) -> tuple[bool, str]:
    """(whether the rules' tests tell the mutant apart, how)."""
    from draguard.rules import REGISTRY

    try:
        module = _mutated_module(mutant)
    except Exception as exc:  # noqa: BLE001 - a mutant that cannot even load is told apart
        return True, f"does not load ({type(exc).__name__})"
    ids = [r.id for r in REGISTRY if type(r).__module__ == mutant.module]
    try:
        with _time_limit(seconds), _standing_in(module):
            for rule_id in ids:
                if not held(REGISTRY.get(rule_id)):
                    return True, f"{rule_id}'s goldens differ"
    except _TooLong:
        return True, f"runs past {seconds} s"
    except Exception as exc:  # noqa: BLE001 - a test that raises fails
        return True, f"raises {type(exc).__name__}"
    return False, "survives"


def score(sample: list[Mutant], progress=None) -> tuple[float, list[tuple[Mutant, bool, str]]]:
    results = []
    for mutant in sample:
        dead, how = killed(mutant)
        results.append((mutant, dead, how))
        if progress:
            progress(mutant, dead, how)
    return (sum(dead for _, dead, _ in results) / len(results) if results else 1.0), results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=200, help="mutants drawn (0: every one)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--module", action="append", help="only these modules (draguard.rules.<name>)")
    parser.add_argument("--json", help="write every mutant's verdict here")
    args = parser.parse_args(argv)
    every = mutants(args.module or rule_modules())
    sample = every if not args.sample or args.sample >= len(every) else \
        sorted(random.Random(args.seed).sample(every, args.sample), key=lambda m: (m.module, m.site))
    start = time.monotonic()

    def progress(mutant, dead, how):
        if not dead:
            print(f"survived: {mutant.module}:{mutant.line} {mutant.what}", flush=True)

    share, results = score(sample, progress)
    killed_count = sum(dead for _, dead, _ in results)
    print(f"mutants: {len(every)} in {len(args.module or rule_modules())} modules; sampled {len(sample)} "
          f"(seed {args.seed}); killed {killed_count}; score {share:.1%}; {time.monotonic() - start:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([{"module": m.module, "line": m.line, "mutation": m.what, "killed": dead, "how": how}
                       for m, dead, how in results], handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
