"""Start-up of commands that should not load what they do not use: wall time and peak RSS of
`draguard rules`, `draguard explain`, `draguard --version` and `draguard lint` of one small file,
each as a fresh process, and which heavy libraries each imported.

    python benchmarks/startup.py [--runs 15]

Anchor (before the command registry and lazy imports, same machine, farm-bench median of 10):
`draguard rules` 0.193 s wall, 42.2 MiB peak."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("cel_expr_python", "google.protobuf", "jsonschema_rs", "semver", "yaml")
PROBE = """
import json, resource, sys, time, io, contextlib
start = time.perf_counter()
from draguard.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
loaded = sorted(h for h in {heavy} if h in sys.modules)
print(json.dumps({{"seconds": time.perf_counter() - start,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "heavy": loaded}}))
"""
COMMANDS = {
    "rules": ["rules"],
    "explain": ["explain", "host-ipc"],
    "--version": ["--version"],
    "lint one file": ["lint", "--no-config", str(ROOT / "examples" / "dra-inference" / "inference.yaml")],
}


def measure(args: list[str]) -> dict:
    """One fresh interpreter; the whole process is timed from outside too."""
    import time

    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=repr(HEAVY)), *args],
                          capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    return dict(json.loads(done.stdout.strip().splitlines()[-1]), wall=wall)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(f"{'command':<15} {'wall s (median)':>16} {'in-process s':>13} {'peak MiB':>9}  heavy libraries loaded")
    for name, argv in COMMANDS.items():
        runs = [measure(argv) for _ in range(args.runs)]
        wall = statistics.median(r["wall"] for r in runs)
        inner = statistics.median(r["seconds"] for r in runs)
        peak = statistics.median(r["maxrss_kb"] for r in runs) / 1024
        print(f"{name:<15} {wall:>16.3f} {inner:>13.3f} {peak:>9.1f}  {', '.join(runs[-1]['heavy']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
