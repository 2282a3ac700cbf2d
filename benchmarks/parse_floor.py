"""draguard's positioned parse (sources.yamlpos.parse_stream: block-style documents read by
sources.blockyaml, the rest by libyaml) of every file of the replicated corpus tree, against
the floor lint_throughput measures lint by (a bare `yaml.load_all` with PyYAML's C loader)
and against the same parse with every document left to libyaml (yamlpos.FAST off, the path
before blockyaml). Whole processes, each reading and parsing every file, in turn; the CPU
ratio is the steadier figure on a shared machine.

    python benchmarks/parse_floor.py [--tree DIR] [--objects 20000] [--runs 5]

Goal (issue #44, item 2): the positioned parse at most half the floor's CPU, so that lint
(parse, judging, report) can reach the floor on two cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _measure import Command, compile_bytecode, figure, in_turn, ratio
from lint_throughput import PARSE, replicated_tree, tree_arguments

import draguard as package

#: the positioned parse of every file, as the loader reads them (utf-8, a BOM dropped)
POSITIONED = """
import sys, pathlib
from draguard.sources import yamlpos
yamlpos.FAST = sys.argv[2] == "fast"
for name in sorted(str(p) for p in pathlib.Path(sys.argv[1]).rglob("*.y*ml")):
    with open(name, "rb") as handle:
        yamlpos.parse_stream(handle.read().decode("utf-8-sig"))
"""


def main() -> int:
    args = tree_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0])).parse_args()
    compile_bytecode(Path(package.__file__).parent)
    with tempfile.TemporaryDirectory(prefix="draguard-bench-") as tmp:
        tree, _ = replicated_tree(args, Path(tmp))
        floor, fast, libyaml = in_turn([
            Command("bare C parse (floor)", [sys.executable, "-c", PARSE, str(tree)]),
            Command("positioned parse", [sys.executable, "-c", POSITIONED, str(tree), "fast"]),
            Command("positioned parse, libyaml only", [sys.executable, "-c", POSITIONED, str(tree), "libyaml"]),
        ], args.runs)
        for runs in (floor, fast, libyaml):
            figure(runs.command.name, runs.describe())
        figure("positioned / floor: CPU", ratio(fast, floor, cpu=True), "<= 0.5x")
        figure("positioned / floor: wall", ratio(fast, floor))
        figure("positioned / libyaml only: CPU", ratio(fast, libyaml, cpu=True))
        figure("libyaml only / floor: CPU", ratio(libyaml, floor, cpu=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
