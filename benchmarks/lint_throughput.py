"""`draguard lint` of the corpus (tests/support/data/corpus) replicated to >= 20,000 objects
(fix_throughput.replicate: each copy in a namespace of its own), timed as whole processes
against a bare parse of the same files with PyYAML's C loader in a process of its own (the
floor: reading and parsing, nothing checked), in turn, with peak memory.

`--vs-checkov` also times checkov's Kubernetes framework against `draguard lint` on a smaller
tree, both as whole processes in turn, both writing JSON; checkov is installed once into a
cached virtualenv (~/.cache/draguard/bench/checkov, printed as a setup step). Each of those
runs, either side, starts after `--settle` seconds idle: on this project's virtual machines a
process started right after half a minute of full load (checkov's run) takes ~17% more CPU.

    python benchmarks/lint_throughput.py [--objects 20000] [--runs 5] [--tree DIR] [--jobs N ...]
                                         [--format json] [--vs-checkov] [--checkov-objects 4000] [--baseline-src OTHER/src]

`--baseline-src`: `draguard lint` also run from another checkout's src (before a change), in turn.

`--formats sarif junit github html` times `draguard lint -f F` for each F beside `-f text` on
the same tree, each F right after a text run of its own (text F text F ...), and prints each
report's cost as a ratio to the text report's, in CPU and in wall time (the issue's bound:
1.3x), pair by pair (median and range) beside the ratio of the medians, and the load as the
runs began; only those (and from `--baseline-src` too). `--objects 5000` makes a tree of
about 2,000 files.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from _measure import (Command, baseline, compile_bytecode, draguard, figure, header, in_turn, load, ratio,
                      ratio_of_medians, setup)
from fix_throughput import replicate

import draguard as package

#: the floor: every file of the tree read and parsed by libyaml, in one process
PARSE = """
import sys, pathlib, yaml
for name in sorted(str(p) for p in pathlib.Path(sys.argv[1]).rglob("*.y*ml")):
    with open(name, "rb") as handle:
        for _ in yaml.load_all(handle.read().decode("utf-8-sig"), Loader=yaml.CSafeLoader):
            pass
"""
#: seconds idle before each run of the checkov comparison (--settle)
SETTLE = 20.0
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "draguard" / "bench"


def count_objects(tree: Path) -> tuple[int, int, int]:
    """(objects, files, bytes) of a tree: the documents that are mappings with a kind."""
    objects = files = size = 0
    for path in tree.rglob("*.y*ml"):
        text = path.read_bytes()
        files, size = files + 1, size + len(text)
        objects += sum(isinstance(d, dict) and bool(d.get("kind"))
                       for d in yaml.load_all(text, Loader=yaml.CSafeLoader))
    return objects, files, size


def build(tree: Path, wanted: int) -> None:
    tree.mkdir(parents=True)
    with setup(f"replicate the corpus to >= {wanted:,} objects under {tree}"):
        replicate(tree, wanted)


def tree_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of a benchmark over the replicated tree: its size, the runs, an existing tree."""
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5, help="runs of each command after the warm-up (median shown)")
    parser.add_argument("--tree", type=Path, help="an existing replicated tree (built there when absent)")
    return parser


def replicated_tree(args, tmp: Path) -> tuple[Path, int]:
    """(the tree, its objects): `--tree`, or one built under `tmp`, built when absent, its
    size printed under the run's header."""
    tree = args.tree or tmp / "tree"
    if not tree.exists():
        build(tree, args.objects)
    objects, files, size = count_objects(tree)
    header(args.runs)
    print(f"tree: {objects:,} objects in {files:,} files, {size / 1e6:.1f} MB ({tree})")
    return tree, objects


def checkov() -> Path:
    """checkov's executable in a cached virtualenv, installed on first use."""
    venv = CACHE / "checkov"
    binary = venv / "bin" / "checkov"
    if not binary.exists():
        with setup(f"install checkov into {venv} (once; cached)"):
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "checkov"], check=True)
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    print(f"checkov {version} from {venv}")
    return binary


def formats(tree: Path, report: str, args) -> None:
    """Each report format's cost against the text report's, on the same tree (and from
    `--baseline-src` too when given). Each format runs right after a text run of its own,
    A B A B, so each pair shares its moment's load; the tree is in the page cache before
    the first run (count_objects read it), and every report is written to a file of its
    format's (`report` with the format as its suffix): a run that replaced another format's
    report would free that one's pages on its own time."""
    def command(fmt: str, src: str | None = None) -> Command:
        written = str(Path(report).with_suffix(f".{fmt}"))
        made = Command(f"draguard lint -f {fmt}",
                       draguard("lint", "--no-config", "-f", fmt, "-o", written, str(tree)), ok=(0, 1))
        return baseline(made, src) if src else made

    sources = [None, args.baseline_src] if args.baseline_src else [None]
    commands = [made for src in sources for fmt in args.formats for made in (command("text", src), command(fmt, src))]
    timed = in_turn(commands, args.runs)
    for text, other in zip(timed[::2], timed[1::2]):
        figure(text.command.name, text.describe())
        figure(other.command.name, other.describe())
        for kind, cpu in (("CPU", True), ("wall", False)):
            figure(f"  / -f text: {kind}, pair by pair", f"{ratio(other, text, cpu)}  "
                   f"of medians {ratio_of_medians(other, text, cpu)}", "<= 1.3x")
    figure("1-minute load as each run began", load(timed))


def main() -> int:
    parser = tree_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--jobs", nargs="*", default=[], metavar="N",
                        help="also time `lint --jobs N` for each N (the default run uses lint's own default)")
    parser.add_argument("--format", "-f", choices=("text", "json"), default="text",
                        help="the report every `draguard lint` writes (json: the -f json report)")
    parser.add_argument("--vs-checkov", action="store_true")
    parser.add_argument("--checkov-objects", type=int, default=4_000)
    parser.add_argument("--settle", type=float, default=SETTLE, metavar="SECONDS",
                        help="idle before each run of the checkov comparison, either side (default %(default)g)")
    parser.add_argument("--baseline-src", metavar="DIR", help="also time `draguard lint` from this src, in turn")
    parser.add_argument("--formats", nargs="*", default=[], metavar="F",
                        help="also time `lint -f F` for each F and give its ratio to `-f text`")
    args = parser.parse_args()
    compile_bytecode(Path(package.__file__).parent)
    if args.baseline_src:
        compile_bytecode(Path(args.baseline_src) / "draguard")
    with tempfile.TemporaryDirectory(prefix="draguard-bench-") as tmp:
        tree, objects = replicated_tree(args, Path(tmp))
        report = str(Path(tmp) / "report.txt")
        if args.formats:
            formats(tree, report, args)
            return 0
        shown = "" if args.format == "text" else f" -f {args.format}"
        lint = ["lint", "--no-config", "-f", args.format, "-o", report]
        commands = [Command("bare C parse (floor)", [sys.executable, "-c", PARSE, str(tree)]),
                    Command(f"draguard lint{shown}", draguard(*lint, str(tree)), ok=(0, 1))]
        commands += [Command(f"draguard lint{shown} --jobs {n}", draguard(*lint, "--jobs", n, str(tree)), ok=(0, 1))
                     for n in args.jobs]
        if args.baseline_src:
            commands.append(baseline(commands[1], args.baseline_src))
        parse, *lints = in_turn(commands, args.runs)
        figure(parse.command.name, parse.describe())
        for lint in lints:
            jobs_one = lint.command.name.removesuffix(" [baseline]").endswith("--jobs 1")  # the baseline runs the default jobs
            figure(lint.command.name, f"{lint.describe()}  {objects / lint.wall:,.0f} objects/s",
                   "peak <= 300 MiB with the report")
            figure("  / bare parse", ratio(lint, parse), "<= 1.3x" if jobs_one else "<= 1.0x (--jobs 1: <= 1.3x)")
        if args.vs_checkov:
            small = Path(tmp) / "small"
            build(small, args.checkov_objects)
            small_objects = count_objects(small)[0]
            binary = checkov()
            print(f"checkov tree: {small_objects:,} objects ({small}); each run, either side, "
                  f"after {args.settle:g} s idle (a run right after checkov's load runs slower)")
            theirs, ours = in_turn([
                Command("checkov -d --framework kubernetes", [str(binary), "-d", str(small), "--framework", "kubernetes",
                                                              "--quiet", "--compact", "-o", "json"], ok=(0, 1)),
                Command("draguard lint -f json", draguard("lint", "--no-config", "-f", "json", "-o", report, str(small)),
                        ok=(0, 1))], args.runs, settle=args.settle)
            figure(theirs.command.name, f"{theirs.describe()}  {small_objects / theirs.wall:,.0f} objects/s")
            figure(ours.command.name, f"{ours.describe()}  {small_objects / ours.wall:,.0f} objects/s")
            figure("  checkov / draguard", ratio(theirs, ours), ">= 30x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
