"""Start-up, as a pre-commit hook or an editor meets it: `draguard --version`, `draguard rules`,
`draguard explain` and `draguard lint` of one small file (the example of a DRA inference
service: a claim template with a CEL selector, judged against the built-in GPU inventory, and
a Deployment) and of one ConfigMap (the rules of one kind only), each a whole process run in turn
with the floor, a bare interpreter (`python -c pass`); median wall time, its range and peak
memory, the goal beside each. A last column says which heavy libraries the command imported
(read in a separate run under `python -X importtime`, not timed).

    python benchmarks/startup.py [--runs 15] [--baseline-src OTHER/src]

`--baseline-src`: each command also run from another checkout's src (before a change), in turn.

Goals (issue #44): one small file end to end <= 150 ms, --version <= 60 ms."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import Command, baseline, compile_bytecode, draguard, figure, header, in_turn, ratio

import draguard as package

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "examples" / "dra-inference" / "inference.yaml"
HEAVY = ("cel_expr_python", "google.protobuf", "jsonschema_rs", "yaml", "draguard.dra.allocator")
COMMANDS = [  # (name, arguments, goal)
    ("--version", ["--version"], "<= 60 ms"),
    ("rules", ["rules"], None),
    ("explain host-ipc", ["explain", "host-ipc"], None),
    ("lint one small file", ["lint", "--no-config", str(SMALL)], "<= 150 ms"),
    ("lint one ConfigMap", ["lint", "--no-config", "CONFIG_MAP"], "<= 150 ms"),
]
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: team}\ndata: {mode: fast}\n"


def heavy(arguments: list[str]) -> str:
    """The heavy libraries a command imports, from `-X importtime` (its own run, untimed)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "draguard", *arguments],
                          capture_output=True, text=True)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    return ", ".join(h for h in HEAVY if h in imported) or "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline-src", metavar="DIR", help="also time each command from this src, in turn")
    args = parser.parse_args()
    compile_bytecode(Path(package.__file__).parent)
    if args.baseline_src:
        compile_bytecode(Path(args.baseline_src) / "draguard")
    workdir = tempfile.TemporaryDirectory(prefix="draguard-startup-")  # removed when the benchmark exits
    config_map = Path(workdir.name) / "settings.yaml"
    config_map.write_text(CONFIG_MAP)
    argvs = [[str(config_map) if a == "CONFIG_MAP" else a for a in argv] for _, argv, _ in COMMANDS]
    floor = Command("python -c pass (floor)", [sys.executable, "-c", "pass"])
    commands = [Command(f"draguard {name}", draguard(*argv), ok=(0, 1))
                for (name, _, _), argv in zip(COMMANDS, argvs)]
    before = [baseline(c, args.baseline_src) for c in commands] if args.baseline_src else []
    results = in_turn([floor, *commands, *before], args.runs)
    header(args.runs)
    figure(floor.name, results[0].describe())
    for index, ((name, _, goal), argv) in enumerate(zip(COMMANDS, argvs)):
        runs = results[1 + index]
        figure(runs.command.name, f"{runs.describe()}  {ratio(runs, results[0])} the floor", goal)
        if before:
            old = results[1 + len(commands) + index]
            figure(old.command.name, f"{old.describe()}  {ratio(old, results[0])} the floor")
            figure("  after / before", ratio(runs, old))
        print(f"{'':<40} imports: {heavy(argv)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
