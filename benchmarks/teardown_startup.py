"""Start-up of draguard-teardown, which runs inside a preStop hook (target: under 100 ms):
median wall time and peak RSS of the installed console script for each command, each a fresh
process, beside the anchors: a bare interpreter (`python -c pass`, the floor) and `draguard
--version` (the lint CLI's lightest command).

    python benchmarks/teardown_startup.py [--runs 20]"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def measure(argv: list[str], runs: int) -> tuple[float, float]:
    """(median wall seconds, median peak RSS MiB) of `argv`, run `runs` times."""
    walls, peaks = [], []
    for _ in range(runs):
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)
        walls.append(time.perf_counter() - start)
        peaks.append(usage.ru_maxrss / 1024)
    return statistics.median(walls), statistics.median(peaks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    helper = shutil.which("draguard-teardown", path=str(BIN))
    with tempfile.TemporaryDirectory() as empty:
        commands = {
            "python -c pass (floor)": [sys.executable, "-c", "pass"],
            "draguard --version": [shutil.which("draguard", path=str(BIN)), "--version"],
            "teardown --help": [helper, "--help"],
            "teardown servers": [helper, "servers"],
            "teardown drain (nothing to do)": [helper, "drain", "--deadline", "1", "--proc", empty],
            "teardown verify (no baseline)": [helper, "verify", "--timeout", "1", "--state", f"{empty}/none"],
            "teardown baseline (NVML load)": [helper, "baseline", "--state", f"{empty}/b.json"],
        }
        print(f"{'command':<32} {'wall ms (median)':>17} {'peak MiB':>9}")
        for name, argv in commands.items():
            wall, peak = measure(argv, args.runs)
            print(f"{name:<32} {wall * 1000:>17.1f} {peak:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
