"""Start-up of draguard-teardown, which runs inside a preStop hook (target: under 100 ms):
median wall time, range and peak RSS of the installed console script for each command, each
a whole process, run in turn with the anchors (benchmarks/_measure.py): a bare interpreter
(`python -c pass`, the floor) and `draguard --version` (the lint CLI's lightest command).

    python benchmarks/teardown_startup.py [--runs 20]"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from _measure import Command, compile_bytecode, figure, header, in_turn, ratio

import draguard as package

BIN = Path(sys.executable).parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    compile_bytecode(Path(package.__file__).parent)
    helper = shutil.which("draguard-teardown", path=str(BIN))
    with tempfile.TemporaryDirectory() as empty:
        commands = [
            Command("python -c pass (floor)", [sys.executable, "-c", "pass"]),
            Command("draguard --version", [shutil.which("draguard", path=str(BIN)), "--version"]),
            Command("teardown --help", [helper, "--help"]),
            Command("teardown servers", [helper, "servers"]),
            Command("teardown drain (nothing to do)", [helper, "drain", "--deadline", "1", "--proc", empty]),
            Command("teardown verify (no baseline)", [helper, "verify", "--timeout", "1", "--state", f"{empty}/none"],
                    ok=(3,)),  # 3: cannot verify
            Command("teardown baseline (NVML load)", [helper, "baseline", "--state", f"{empty}/b.json"],
                    ok=(0, 3)),  # 3: no NVML library here, said as cannot-verify
        ]
        floor, *results = in_turn(commands, args.runs)
    header(args.runs)
    figure(floor.command.name, floor.describe())
    for runs in results:
        goal = "< 100 ms" if runs.command.name.startswith("teardown") else None
        figure(runs.command.name, f"{runs.describe()}  {ratio(runs, floor)} the floor", goal)
    return 0


if __name__ == "__main__":
    sys.exit(main())
