"""The serving processes, found by command line in /proc: what `drain` signals and waits for.

Only this PID namespace is visible: the helper sees another container's processes when the
pod sets `shareProcessNamespace: true` (then PID 1 is the pod's pause process), and its own
container's otherwise (then PID 1 is that container's main process)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Process:
    pid: int
    cmdline: str


def find(pattern: str, proc_root: str = "/proc") -> list[Process]:
    """Processes whose command line matches `pattern`, except this helper and its ancestors
    (the hook's own shell matches a pattern given on its command line)."""
    regex, spared = re.compile(pattern), _self_and_ancestors(proc_root) - {1}  # PID 1 is judged by the caller
    found = []
    for entry in os.listdir(proc_root):
        if not entry.isdigit() or int(entry) in spared:
            continue
        cmdline = _cmdline(proc_root, entry)
        if cmdline and regex.search(cmdline):
            found.append(Process(int(entry), cmdline))
    return sorted(found, key=lambda p: p.pid)


def _cmdline(proc_root: str, pid: str) -> str:
    try:
        with open(os.path.join(proc_root, pid, "cmdline"), "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""  # gone since the listing, or a kernel thread's empty line


def _self_and_ancestors(proc_root: str) -> set[int]:
    """This process and its ancestors, from /proc/PID/stat's ppid field."""
    pids, pid = set(), os.getpid()
    while pid > 0 and pid not in pids:
        pids.add(pid)
        try:
            with open(os.path.join(proc_root, str(pid), "stat")) as handle:
                stat = handle.read()
        except OSError:
            break
        # the command may hold spaces and parentheses: fields follow the last ')'
        pid = int(stat[stat.rindex(")") + 2:].split()[1])
    return pids
