"""drain: the preStop step before the release can be verified. In order, each optional:
mark the pod not ready (a file its readiness probe tests, or an HTTP call), wait for the
endpoints to drop it, ask the server to drain (HTTP, or a signal to the serving processes),
and wait until those processes exit. Everything is bounded by one deadline, taken from the
grace period minus a margin, so the hook ends before the kubelet's SIGKILL does.

It never signals PID 1 unless told to: PID 1 is this container's main process (without a
shared PID namespace), and when it exits the container stops and this hook dies with it, so
nothing could verify the release afterwards (the guideline documents' `kill -SIGTERM 1 &&
while pgrep ...` waits for nothing). The kubelet sends that SIGTERM itself after the hook."""

from __future__ import annotations

import os
import signal as signals
import time
from dataclasses import dataclass, field

from . import procs

EXIT = {"drained": 0, "deadline": 1, "failed": 3}


@dataclass(frozen=True)
class Plan:
    deadline: float  # seconds from the start of the drain
    not_ready_file: str | None = None
    not_ready_url: str | None = None
    endpoint_wait: float = 0.0
    drain_url: str | None = None
    signal: str | None = None  # "TERM", "SIGINT", "15"
    process: str | None = None  # regex over the serving processes' command lines
    allow_pid1: bool = False
    interval: float = 0.5


@dataclass
class Outcome:
    verdict: str
    elapsed: float
    steps: list[dict] = field(default_factory=list)
    remaining: list[dict] = field(default_factory=list)
    reason: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT[self.verdict]

    def to_json(self) -> dict:
        out = {"step": "drain", "verdict": self.verdict, "elapsedSeconds": round(self.elapsed, 3), "steps": self.steps}
        if self.remaining:
            out["remaining"] = self.remaining
        if self.reason:
            out["reason"] = self.reason
        return out


def signal_number(name: str) -> int:
    """'TERM', 'SIGTERM' or '15' -> 15; ValueError for anything else."""
    if name.isascii() and name.isdigit():
        return int(name)
    upper = name.upper()
    member = getattr(signals.Signals, upper if upper.startswith("SIG") else "SIG" + upper, None)
    if member is None:
        raise ValueError(f"unknown signal {name!r}")
    return int(member)


def drain(plan: Plan, proc_root: str = "/proc", clock=time.monotonic, sleep=time.sleep, kill=os.kill,
          post=None) -> Outcome:
    post = post or http_post
    start = clock()
    outcome = Outcome("drained", 0.0)

    def left() -> float:
        return max(0.0, plan.deadline - (clock() - start))

    def finish(verdict: str, reason: str = "") -> Outcome:
        outcome.verdict, outcome.reason, outcome.elapsed = verdict, reason, clock() - start
        return outcome

    if plan.not_ready_file:
        with open(plan.not_ready_file, "a"):
            pass
        outcome.steps.append({"action": "not-ready-file", "path": plan.not_ready_file})
    if plan.not_ready_url:
        status = post(plan.not_ready_url, min(5.0, left()))
        outcome.steps.append({"action": "not-ready-url", "url": plan.not_ready_url, "status": status})
    if plan.endpoint_wait:
        waited = min(plan.endpoint_wait, left())
        sleep(waited)
        outcome.steps.append({"action": "endpoint-wait", "seconds": waited})
    if plan.drain_url:
        status = post(plan.drain_url, max(0.1, left()))
        outcome.steps.append({"action": "drain-url", "url": plan.drain_url, "status": status})
        if not isinstance(status, int) or status >= 400:
            return finish("failed", f"the drain endpoint answered {status}")
    if plan.signal and plan.process:
        targets = procs.find(plan.process, proc_root)
        if any(p.pid == 1 for p in targets) and not plan.allow_pid1:
            return finish("failed", "PID 1 matches: it is this container's main process, and signalling it "
                          "ends the container and this hook with it, so nothing can verify the release. "
                          "Run drain from a sidecar with shareProcessNamespace: true, use --drain-url, "
                          "or let the kubelet send SIGTERM after the hook (--allow-pid1 when nothing follows)")
        number = signal_number(plan.signal)
        for target in targets:
            try:
                kill(target.pid, number)
            except ProcessLookupError:
                pass  # exited since it was listed
        outcome.steps.append({"action": "signal", "signal": plan.signal, "pids": [p.pid for p in targets]})
        if not targets:
            outcome.steps[-1]["note"] = f"no process matched {plan.process!r}"
    if plan.process:
        while True:
            running = procs.find(plan.process, proc_root)
            if not running:
                outcome.steps.append({"action": "wait-exit", "process": plan.process})
                break
            if left() <= 0:
                outcome.remaining = [{"pid": p.pid, "cmdline": p.cmdline[:200]} for p in running]
                return finish("deadline", f"{len(running)} process(es) matching {plan.process!r} still "
                              f"run after {plan.deadline:g} s")
            sleep(min(plan.interval, left()))
    return finish("drained")


def http_post(url: str, timeout: float) -> int | str:
    """POST with an empty body; the status code, or the error in words. (urllib is imported
    here: it pulls in http.client and ssl, a third of the helper's start-up otherwise.)"""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=b"", method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError) as exc:
        return f"unreachable: {getattr(exc, 'reason', exc)}"
