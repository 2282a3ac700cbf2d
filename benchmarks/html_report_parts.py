"""Where the HTML report's CPU goes beside the text report's, part by part, inside one process:
the whole page (`report.html.render`) and the text report's (`report.text.render`), and of the
page: the fixes' diffs (`_fix_diff`, fix.splice and fix.hunks: benchmarks/html_fix_diffs.py
splits them further), the source excerpts, the rest of the findings' sections (their
sentences, escaping, headings), the page joined, its pieces crossing from a `lint --jobs`
part (pickled and read back, as engine.parallel sends them) and the page written to a file.

A component timing, on purpose: the whole processes' ratio (`lint_throughput.py --formats
html`) says how much more the HTML report costs, not where; on a shared machine a part of a
tenth of a second is lost in the whole processes' noise. The lint runs once (as `lint
--no-config --jobs 1`), then each part is made again, round after round, with the cyclic
collector paused as `lint` renders its report.

    python benchmarks/html_report_parts.py [--objects 5000] [--tree DIR] [--runs 5]

Each figure is the least and the median CPU seconds of `--runs` rounds after one uncounted.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _measure import compile_bytecode, figure, setup
from lint_throughput import build, count_objects, tree_arguments


def rounds(work: Callable[[], object], count: int) -> str:
    """`least s / median s` of the CPU seconds of `count` rounds of `work` after one uncounted."""
    from draguard.core.collector import cyclic_gc_paused

    spent = []
    for _ in range(count + 1):
        with cyclic_gc_paused():  # as `lint` renders its report
            start = time.process_time()
            work()
            spent.append(time.process_time() - start)
    return f"{min(spent[1:]):.3f} s / {statistics.median(spent[1:]):.3f} s"


def main() -> int:
    parser = tree_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.set_defaults(objects=5_000)
    args = parser.parse_args()
    import draguard as package
    from draguard.engine import lint_paths
    from draguard.engine.config_file import load_config
    from draguard.report import html, text
    from draguard.report.lines import SourceLines

    compile_bytecode(Path(package.__file__).parent)
    with tempfile.TemporaryDirectory(prefix="draguard-bench-") as tmp:
        tree = args.tree or Path(tmp) / "tree"
        if not tree.exists():
            build(tree, args.objects)
        objects, files, size = count_objects(tree)
        with setup("lint the tree once (not counted)"):
            result = lint_paths([str(tree)], load_config(None))
        fixed = [f for f in result.findings if f.fix]
        print(f"tree: {objects:,} objects in {files:,} files, {size / 1e6:.1f} MB ({tree}); {len(result.findings):,} "
              f"findings, {len(fixed):,} with a fix; load {os.getloadavg()[0]:.1f}; CPU seconds of a round, least / "
              f"median of {args.runs} rounds")
        page = html.render(result)
        sections = {"HTML": [html._Piece(result.sources)(f, False) for f in result.findings],
                    "text": [text._Piece(result.sources, False)(f, False) for f in result.findings]}

        def diffs() -> list:
            lines = SourceLines(result.sources)
            return [html._fix_diff(f, lines) for f in fixed]

        def excerpts() -> list:
            lines = SourceLines(result.sources)
            return [html._excerpt(f, lines) for f in result.findings]

        figure("text report (text.render)", rounds(lambda: text.render(result), args.runs))
        figure("HTML report (html.render)", rounds(lambda: html.render(result), args.runs))
        figure("  of it: the fixes' diffs", rounds(diffs, args.runs))
        figure("  of it: the excerpts", rounds(excerpts, args.runs))
        fix_diff, html._fix_diff = html._fix_diff, lambda f, lines: ""
        try:
            figure("  the page without the diffs", rounds(lambda: html.render(result), args.runs))
        finally:
            html._fix_diff = fix_diff
        figure("  of it: the page joined", rounds(lambda: "\n".join(sections["HTML"]) + "\n", args.runs))
        for name, made in sections.items():
            figure(f"{name} sections crossing (pickled, read)", rounds(lambda: pickle.loads(pickle.dumps(made)),
                                                                        args.runs))
        written = Path(tmp) / "report.html"
        figure("HTML page written", rounds(lambda: written.write_text(page, encoding="utf-8"), args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
