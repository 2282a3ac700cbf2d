"""Running `draguard` as a fresh process and reading its peak memory (the benchmarks' probe)."""

from __future__ import annotations

import subprocess
import sys
import time

#: runs the CLI with the given arguments, then prints the process's peak RSS (VmHWM, KiB)
_PROBE = ("import sys; from draguard.cli import main; main(sys.argv[1:]); "
          "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))")


def run_draguard(*args: str) -> tuple[int, float, float, str]:
    """(exit status, wall seconds, peak RSS in MiB, stderr) of `draguard ARGS` in a fresh process."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    peak = int(done.stdout.split()[-1]) / 1024 if done.stdout.split() else float("nan")
    return done.returncode, seconds, peak, done.stderr
