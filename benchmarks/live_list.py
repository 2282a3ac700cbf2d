"""Live-cluster input: `draguard lint` of a kubectl List of running pods and their generated
claims (~20 MiB of YAML for 4,800 pods), as a whole process run in turn with a bare parse of
the same file with PyYAML's C loader (json.load for --format json): median wall time, range
and peak RSS of 5 runs after a warm-up (benchmarks/_measure.py).

    python benchmarks/live_list.py [--pods 4800] [--format yaml|json] [--runs 5]

Anchor (before List items were split ahead of the limits, same machine): the 20 MiB List was
refused whole (input-limit) after 4.3 s at 675 MiB peak, with no object checked."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _measure import Command, compile_bytecode, draguard, figure, header, in_turn, ratio  # noqa: E402
from support.live import live_list  # noqa: E402

import draguard as package  # noqa: E402

#: the floor: the file read and parsed, nothing checked
PARSE = ("import sys, json, yaml\ntext = open(sys.argv[1], encoding='utf-8').read()\n"
         "json.loads(text) if sys.argv[1].endswith('.json') else list(yaml.load_all(text, Loader=yaml.CSafeLoader))")



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=4800)
    parser.add_argument("--format", choices=["yaml", "json"], default="yaml")
    parser.add_argument("--runs", type=int, default=5, help="runs of each command after the warm-up (median shown)")
    args = parser.parse_args()
    compile_bytecode(Path(package.__file__).parent)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"live.{args.format}"
        path.write_text(live_list(args.pods, args.format))
        size = path.stat().st_size / 2**20
        parse, lint = in_turn([
            Command("bare parse (floor)", [sys.executable, "-c", PARSE, str(path)]),
            Command("draguard lint -f json", draguard("lint", str(path), "--no-config", "-f", "json", "-o",
                                                      str(Path(tmp) / "report.json")), ok=(0, 1))], args.runs)
    header(args.runs)
    print(f"live List, {args.pods} pods + claims, {size:.1f} MiB {args.format}")
    figure(parse.command.name, parse.describe())
    figure(lint.command.name, lint.describe(), "anchor: refused whole after 4.3 s at 675 MiB")
    figure("  / bare parse", ratio(lint, parse))


if __name__ == "__main__":
    main()
