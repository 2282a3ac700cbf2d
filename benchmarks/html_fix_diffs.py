"""The CPU the HTML report spends on its fixes' diffs (`report.html._fix_diff`: each finding's
fix spliced on its document, then written as a diff), measured inside one process and split
into its parts: the splice (`fix.splice.splice_fixes`), of it the document composed again
(`document_node` as `fix.splice` calls it), and the diff (`fix.hunks.splice_diff`).

A component timing, on purpose: on the 2,125-file tree that work is most of what the HTML
report costs beyond the text report (0.6-0.7 s of CPU of about 0.8 s), and as whole processes
on a shared machine the two reports' CPU moves with the load by as much as a change to it
would. Here the lint runs once (as `lint --no-config --jobs 1`), then the same diffs are made
again, round after round, with the cyclic collector paused as `lint` renders its report; a
round's CPU is that work alone. The parts are added up in rounds of their own (their
wrappers cost a little), so they need not sum to the whole. The goal's own figure (the HTML
report at most 1.3x the text report) is `lint_throughput.py --formats html`'s.

    python benchmarks/html_fix_diffs.py [--objects 5000] [--tree DIR] [--runs 5] [--baseline-src OTHER/src]

`--runs`: rounds in each process after one uncounted round; each figure is the least and the
median of every round. `--baseline-src`: the same measure from another checkout's src (the
code before a change), the two processes in turn (A B A B, 3 pairs), with the ratio of each
pair's least rounds, the steadiest figure on a shared machine.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import compile_bytecode, figure, setup
from lint_throughput import build, count_objects, tree_arguments

#: pairs of processes (this checkout's, the baseline's) when --baseline-src is given
PAIRS = 3
#: the functions whose CPU a round adds up: (module, attribute, figure); the splice is
#: `splice_document` where the checkout has it (what the report calls since html9), else `splice_fixes`
PARTS = (("draguard.fix.splice", "splice_document|splice_fixes", "splice"),
         ("draguard.fix.splice", "document_node", "composing"), ("draguard.fix.hunks", "splice_diff", "diff"))


def measure(tree: str, rounds: int) -> dict:
    """Lint `tree` as `lint --no-config --jobs 1` does (one process), then make every fix's diff `rounds` + 1
    times: the CPU seconds of each counted round, whole and by part."""
    import importlib

    from draguard.core.collector import cyclic_gc_paused
    from draguard.engine import lint_paths
    from draguard.engine.config_file import load_config
    from draguard.report.html import _fix_diff
    from draguard.report.lines import SourceLines

    result = lint_paths([tree], load_config(None))
    fixed = [f for f in result.findings if f.fix]
    spent: dict[str, float] = {}

    def timed(function, name):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - start
        return wrapper

    rounds_seen: list[dict] = []
    for number in range(rounds + 1):
        lines = SourceLines(result.sources)  # nothing a round found is kept for the next
        gc.collect()
        spent.clear()
        with cyclic_gc_paused():  # as `lint` renders its report
            start = time.process_time()
            for f in fixed:
                _fix_diff(f, lines)
            whole = time.process_time() - start
        if number:  # the first round warms imports and the dumpers' tables, uncounted
            rounds_seen.append({"whole": whole})
    # the parts in rounds of their own: the wrappers' calls cost a little, not in `whole`
    originals = []
    for module_name, attributes, name in PARTS:
        module = importlib.import_module(module_name)
        attribute = next(a for a in attributes.split("|") if hasattr(module, a))
        originals.append((module, attribute, getattr(module, attribute)))
        setattr(module, attribute, timed(getattr(module, attribute), name))
    for number in range(rounds):
        lines = SourceLines(result.sources)
        gc.collect()
        spent.clear()
        with cyclic_gc_paused():
            for f in fixed:
                _fix_diff(f, lines)
        rounds_seen[number].update(spent)
    for module, attribute, function in reversed(originals):
        setattr(module, attribute, function)
    documents = len({(f.file, f.location.document) for f in fixed})
    return {"fixes": len(fixed), "documents": documents, "rounds": rounds_seen}


def child(src: str | None, tree: Path, rounds: int) -> dict:
    """`measure` in a process of its own, from `src` (this checkout's when None)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    done = subprocess.run([sys.executable, __file__, "--measure", str(tree), "--runs", str(rounds)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def summary(measured: list[dict], name: str) -> tuple[float, float]:
    """(least, median) over every counted round of the processes of `name`'s CPU seconds."""
    values = [r.get(name, 0.0) for m in measured for r in m["rounds"]]
    return min(values), statistics.median(values)


def main() -> int:
    parser = tree_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.set_defaults(objects=5_000)
    parser.add_argument("--baseline-src", metavar="DIR", help="also measure from this src, in turn")
    parser.add_argument("--measure", metavar="TREE", help=argparse.SUPPRESS)  # the child's side
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.runs)))
        return 0
    import draguard as package

    compile_bytecode(Path(package.__file__).parent)
    if args.baseline_src:
        compile_bytecode(Path(args.baseline_src) / "draguard")
    with tempfile.TemporaryDirectory(prefix="draguard-bench-") as tmp:
        tree = args.tree or Path(tmp) / "tree"
        if not tree.exists():
            build(tree, args.objects)
        objects, files, size = count_objects(tree)
        print(f"tree: {objects:,} objects in {files:,} files, {size / 1e6:.1f} MB ({tree}); {os.cpu_count()} CPUs; "
              f"Python {sys.version.split()[0]}")
        sources = [None, args.baseline_src] if args.baseline_src else [None]
        measured: dict[str | None, list[dict]] = {src: [] for src in sources}
        with setup("lint the tree once in each process (not counted)"):
            for _ in range(PAIRS if args.baseline_src else 1):
                for src in sources:
                    measured[src].append(child(src, tree, args.runs))
    first = measured[None][0]
    print(f"in one process: {first['fixes']:,} fixes on {first['documents']:,} documents; CPU seconds of a "
          f"round, least / median of {args.runs} rounds a process")
    for src in sources:
        label = "" if src is None else " [baseline]"
        for name in ("whole", "splice", "composing", "diff"):
            least, middle = summary(measured[src], name)
            shown = "report.html._fix_diff" if name == "whole" else f"  of it: {name}"
            figure(shown + label, f"{least:.3f} s / {middle:.3f} s")
    if args.baseline_src:
        pairs = sorted(summary([mine], "whole")[0] / summary([theirs], "whole")[0]
                       for mine, theirs in zip(measured[None], measured[args.baseline_src]))
        figure("_fix_diff / baseline, least of each pair", f"{statistics.median(pairs):.2f}x "
               f"({pairs[0]:.2f}-{pairs[-1]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
