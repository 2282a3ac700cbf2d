"""Where `draguard fix --unsafe-fixes --diff --jobs 1` spends its CPU, stage by stage, in one
process: the rounds' re-lints (the first is the lint's own work: every file parsed and judged
by the rules that have fixes), the fixes applied to the documents in memory, the texts written
once (fix.rewrite: the splice), verified by one parse and read again, the diff, and the other
rules' judging when no fix is left (also the lint's own work).

A component timing, on purpose: the goal (`fix --diff` at most 2.5x `lint`, fix_throughput.py)
is a ratio of whole processes, which on a shared machine moves with the load by more than most
changes to one stage would; here each stage's CPU is summed where fix calls it
(`time.process_time`), so two checkouts can be compared stage by stage. The wrappers cost a
little; stages nest as shown by their indent, and "the rest" is the start-up, the files'
reading, the summary and the diff's writing.

    python benchmarks/fix_stages.py [--tree DIR]       # DIR: e.g. the replicated corpus of fix_throughput.py
    PYTHONPATH=OTHER/src python benchmarks/fix_stages.py --tree DIR   # the same stages of another checkout
"""

from __future__ import annotations

import argparse
import gc
import io
import sys
import time
from collections import defaultdict
from importlib import import_module

from _measure import figure

#: (label, module, attribute, indent): module.attribute is what fix calls the stage by
STAGES = [
    ("re-lint, round 1 (parse and judge)", "draguard.fix.relint", "Relinter.lint", 0),
    ("re-lint, later rounds", "draguard.fix.relint", "Relinter.lint", 0),
    ("fixes applied in memory", "draguard.fix.run", "_apply", 0),
    ("apply_edits", "draguard.fix.run", "fixed_documents", 1),
    ("paths given (positioned)", "draguard.fix.run", "positioned", 1),
    ("plan of each round", "draguard.fix.run", "_plan", 0),
    ("texts written and verified", "draguard.fix.run", "_settle", 0),
    ("edits found and spliced (rewritten)", "draguard.fix.run", "rewritten", 1),
    ("the splice (splice_fixes)", "draguard.fix.rewrite", "splice_fixes", 2),
    ("the verifying parse", "draguard.fix.run", "verified", 1),
    ("texts read again (Relinter.settle)", "draguard.fix.relint", "Relinter.settle", 1),
    ("the other rules (Relinter.complete)", "draguard.fix.relint", "Relinter.complete", 0),
    ("the diffs (steps_diff)", "draguard.fix.files", "steps_diff", 0),
]


def _timed(spent: dict, calls: dict, label, compute):
    """`compute` with its CPU added under `label` (a function: the label of this call)."""
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return compute(*args, **kwargs)
        finally:
            name = label() if callable(label) else label
            spent[name] += time.process_time() - start
            calls[name] += 1
    return timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", required=True, help="the folder to fix (nothing is written: --diff)")
    args = parser.parse_args()

    spent: dict = defaultdict(float)
    calls: dict = defaultdict(int)
    linted = [False]

    def round_label() -> str:
        """The first re-lint's row, then the later rounds'."""
        label = STAGES[1][0] if linted[0] else STAGES[0][0]
        linted[0] = True
        return label
    for label, module_name, attribute, _ in STAGES:
        owner: object = import_module(module_name)
        *classes, name = attribute.split(".")
        for class_name in classes:
            owner = getattr(owner, class_name)
        if label == STAGES[1][0]:
            continue  # one wrapper for both rounds' rows
        setattr(owner, name, _timed(spent, calls, round_label if label == STAGES[0][0] else label,
                                    getattr(owner, name)))

    from draguard import cli

    gc.disable()  # as the draguard process runs fix (cli.program)
    shown, sys.stdout = sys.stdout, io.StringIO()
    start = time.process_time()
    try:
        status = cli.main(["fix", "--no-config", "--unsafe-fixes", "--diff", "--jobs", "1", args.tree])
    finally:
        total = time.process_time() - start
        sys.stdout = shown
    print(f"draguard fix --unsafe-fixes --diff --jobs 1 {args.tree}: exit {status}, CPU {total:.2f} s")
    top = 0.0
    for label, _, _, indent in STAGES:
        top += spent[label] if indent == 0 else 0.0
        count = calls[label]
        figure("  " * indent + label, f"{spent[label]:7.2f} s  {100 * spent[label] / total:4.1f}%  "
                                      f"({count:,} call{'' if count == 1 else 's'})")
    figure("the rest", f"{total - top:7.2f} s  {100 * (total - top) / total:4.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
