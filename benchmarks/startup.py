"""Start-up, as a pre-commit hook or an editor meets it: `draguard --version`, `draguard rules`,
`draguard explain` and `draguard lint` of one small file (the example of a DRA inference
service: a claim template with a CEL selector, judged against the built-in GPU inventory, and
a Deployment) and of one ConfigMap (the rules of one kind only), each a whole process run in turn
with the floor, a bare interpreter (`python -c pass`); median wall time, its range and peak
memory, the goal beside each. A last column says which heavy libraries the command imported
(read in a separate run under `python -X importtime`, not timed).

    python benchmarks/startup.py [--runs 15] [--baseline-src OTHER/src]

`--baseline-src`: each command also run from another checkout's src (before a change), in turn.

The per-user cache (core.usercache: the rule index, schemas, the built-in inventory, the
compile facts of selectors and their funnels against the built-in inventory) is filled by each
command's warm-up run, as a user's first run fills it; "cache empty" runs the small file with
an empty cache every time (the first lint after an install or upgrade), in its own folder.

Goals (issue #44): one small file end to end <= 150 ms, --version <= 60 ms."""

from __future__ import annotations

import argparse
import os
import shutil
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
    ("lint one small file, cache empty", ["lint", "--no-config", str(SMALL)], None),
    ("lint one ConfigMap", ["lint", "--no-config", "CONFIG_MAP"], "<= 150 ms"),
]
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: team}\ndata: {mode: fast}\n"


def heavy(command: Command) -> str:
    """The heavy libraries a command imports, from `-X importtime` (its own run, untimed, in
    the command's environment)."""
    if command.before:
        command.before()
    done = subprocess.run([sys.executable, "-X", "importtime", *command.argv[1:]], capture_output=True, text=True,
                          env=dict(os.environ, **(command.env or {})))
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    return ", ".join(h for h in HEAVY if h in imported) or "-"


def _cold(name: str, workdir: Path) -> dict:
    """For a "cache empty" command: its own per-user cache folder, emptied before each run."""
    if not name.endswith("cache empty"):
        return {}
    folder = workdir / "cache-empty"
    return {"env": {"DRAGUARD_CACHE_DIR": str(folder)}, "before": lambda: shutil.rmtree(folder, ignore_errors=True)}


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
    commands = [Command(f"draguard {name}", draguard(*argv), ok=(0, 1), **_cold(name, Path(workdir.name)))
                for (name, _, _), argv in zip(COMMANDS, argvs)]
    before = [baseline(c, args.baseline_src) for c in commands] if args.baseline_src else []
    results = in_turn([floor, *commands, *before], args.runs)
    header(args.runs)
    figure(floor.name, results[0].describe())
    for index, (name, _, goal) in enumerate(COMMANDS):
        runs = results[1 + index]
        figure(runs.command.name, f"{runs.describe()}  {ratio(runs, results[0])} the floor", goal)
        if before:
            old = results[1 + len(commands) + index]
            figure(old.command.name, f"{old.describe()}  {ratio(old, results[0])} the floor")
            figure("  after / before", ratio(runs, old))
        print(f"{'':<40} imports: {heavy(commands[index])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
