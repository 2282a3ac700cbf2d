"""Whole-process timing shared by the scripts under benchmarks/: what a user waits for.

Every figure is a command as a user types it, timed from outside from its start to its exit
(start-up, imports and the report written included), with its peak memory from the operating
system's accounting of the finished child (os.wait4). The tool and its anchor run in turn
(A B A B ...) after a warm-up run of each that is not counted, so drift on a shared machine
lands on both sides; each figure is the median of the runs, printed with its range, and the
ratio is taken pair by pair. The goal is printed beside the figure. Work a benchmark does
that is not measured (building a tree, installing checkov) is printed apart by `setup`.

The child's standard output goes to a file, as a report written to disk does (a pipe nobody
reads would stall a large report; /dev/null would let a tool skip the writing)."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: runs counted after the warm-up unless a script is told otherwise (the issue: at least five)
RUNS = 5


@dataclass(frozen=True)
class Command:
    """One command line to time. `ok`: the exit codes that mean it did its work (lint exits 1
    when it finds something); any other stops the benchmark with the command's error output.
    `before`: run ahead of each run, untimed (a fresh copy for a command that writes in place).
    `timeout` (seconds) and `memory_mib` (address space) bound a run: one past either raises
    Stopped instead of ending the benchmark (the quadratic cases input_scaling guards against)."""

    name: str
    argv: list[str]
    ok: tuple[int, ...] = (0,)
    env: dict | None = None
    before: Callable[[], None] | None = None
    timeout: float | None = None
    memory_mib: int | None = None


class Stopped(Exception):
    """A bounded run (Command.timeout, Command.memory_mib) that went past its bound: how it
    ended, and the peak RSS in MiB it had reached."""

    def __init__(self, how: str, peak: float):
        super().__init__(how)
        self.how, self.peak = how, peak


@dataclass
class Runs:
    """The counted runs of one command: wall seconds, peak RSS in MiB and CPU seconds (user
    and system: steadier than the wall time where other work shares the cores), and the
    machine's 1-minute load average as each began (how much else wanted the cores), in run
    order."""

    command: Command
    walls: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def peak(self) -> float:
        return statistics.median(self.peaks)

    def describe(self) -> str:
        """`median s (min-max)  peak MiB  cpu median s`."""
        cpu = f"  cpu {statistics.median(self.cpus):.3f} s" if self.cpus else ""
        return (f"{self.wall:7.3f} s ({min(self.walls):.3f}-{max(self.walls):.3f})  "
                f"peak {self.peak:6.0f} MiB{cpu}")


def once(command: Command) -> tuple[float, float, float]:
    """Run `command` once as a fresh process: (wall seconds, peak RSS MiB, CPU seconds)."""
    env = dict(os.environ, **(command.env or {}))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tool has its bytecode; compiling is not its run
    if command.before:
        command.before()
    limit = _address_space(command.memory_mib) if command.memory_mib else None
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(command.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                                 preexec_fn=limit)
        stopped = threading.Event()
        timer = threading.Timer(command.timeout, lambda: (stopped.set(), child.kill())) if command.timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(child.pid, 0)  # blocking: the wall time is the exit's, not a poll's
        wall = time.perf_counter() - start
        if timer:
            timer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        if stopped.is_set():
            raise Stopped(f"stopped after {command.timeout:g} s", usage.ru_maxrss / 1024)
        if child.returncode not in command.ok and command.memory_mib:
            raise Stopped(f"exit {child.returncode} (over {command.memory_mib} MiB?)", usage.ru_maxrss / 1024)
        if child.returncode not in command.ok:
            err.seek(0)
            sys.exit(f"{command.name}: exit {child.returncode}, expected {command.ok}: "
                     f"{err.read().decode(errors='replace')[-2000:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _address_space(mib: int) -> Callable[[], None]:
    """Run in the child before it starts: its address space bounded to `mib` MiB."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
    return limit


def in_turn(commands: list[Command], runs: int = RUNS, warmup: int = 1, settle: float = 0.0) -> list[Runs]:
    """Each command `warmup` times uncounted, then all of them in turn `runs` times. With
    `settle`, the machine idles that many seconds before every run, whichever command: on a
    virtual machine a process that starts right after half a minute of full load runs slower
    (docs/performance.md, "The fourteenth round measured in a quiet spell": the same lint took
    1.265 s after a 30 s busy loop against 1.078 s), so a short command timed after a long one
    pays the long one's load unless both start from rest."""
    if runs < 1:
        raise SystemExit("--runs must be at least 1")
    results = [Runs(c) for c in commands]
    for _ in range(warmup):
        for command in commands:
            _rest(settle)
            once(command)
    for _ in range(runs):
        for result in results:
            _rest(settle)
            result.loads.append(os.getloadavg()[0])
            wall, peak, cpu = once(result.command)
            result.walls.append(wall)
            result.peaks.append(peak)
            result.cpus.append(cpu)
    return results


def _rest(seconds: float) -> None:
    if seconds > 0:
        time.sleep(seconds)


def ratio(a: Runs, b: Runs, cpu: bool = False) -> str:
    """A/B wall time (or, with `cpu`, CPU time: steadier on a shared machine), taken pair by
    pair (run i of A with run i of B): `median (min-max)`."""
    mine, theirs = (a.cpus, b.cpus) if cpu else (a.walls, b.walls)
    pairs = sorted(x / y for x, y in zip(mine, theirs) if y)
    return f"{statistics.median(pairs):.2f}x ({pairs[0]:.2f}-{pairs[-1]:.2f})"


def ratio_of_medians(a: Runs, b: Runs, cpu: bool = False) -> str:
    """A's median wall (or CPU) time over B's: printed beside `ratio`, whose pairs cancel the
    drift that moves both medians, so that a gap between the two says the sitting was not steady."""
    mine, theirs = (a.cpus, b.cpus) if cpu else (a.walls, b.walls)
    return f"{statistics.median(mine) / statistics.median(theirs):.2f}x"


def load(results: list[Runs]) -> str:
    """The 1-minute load average as the runs of `results` began: `median (min-max)`, beside
    the figures it moves (the machine's own runs count in it too)."""
    loads = sorted(x for r in results for x in r.loads)
    return f"{statistics.median(loads):.1f} ({loads[0]:.1f}-{loads[-1]:.1f})"


def figure(label: str, value: str, goal: str | None = None) -> None:
    """One measured figure, with its goal beside it."""
    print(f"{label:<40} {value}" + (f"   goal: {goal}" if goal else ""))


def header(runs: int) -> None:
    """Say how the figures below were taken and on what machine. A child's peak cannot read
    below this process's own size when it started it (Linux counts the forked copy)."""
    import resource

    cores = len(os.sched_getaffinity(0))
    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"whole processes, run in turn; median (min-max) of {runs} runs after 1 warm-up; "
          f"{cores} CPUs available; Python {sys.version.split()[0]}; a peak cannot read below {floor:.0f} MiB")


class setup:
    """A step the benchmark does that is not part of what it measures, timed and printed apart:

        with setup("build the 20,000-object tree"):
            ...
    """

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            print(f"setup (not measured): {self.what}: {time.perf_counter() - self.start:.1f} s", flush=True)
        return False


def baseline(command: Command, src: str) -> Command:
    """The same command run from another checkout's `src` (the code before a change), to be
    timed in turn with it: a before/after figure from one sitting."""
    return Command(f"{command.name} [baseline]", command.argv, command.ok,
                   dict(command.env or {}, PYTHONPATH=src), command.before)


def draguard(*args: str) -> list[str]:
    """`draguard ARGS` as a user runs it, with this interpreter (the checkout's draguard when
    PYTHONPATH names its src)."""
    return [sys.executable, "-m", "draguard", *args]


def compile_bytecode(root) -> None:
    """Compile draguard's modules as `pip install` does, so a run times the tool, not the
    compiler (PYTHONDONTWRITEBYTECODE in the environment would leave every run compiling)."""
    import compileall

    with setup("compile draguard's bytecode (as pip install does)"):
        compileall.compile_dir(str(root), quiet=1, workers=0)
