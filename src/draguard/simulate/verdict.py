"""What a simulation concludes, and what it recorded: the verdict every command and report
shares, with the certificate when the steps cannot finish."""

from __future__ import annotations

from dataclasses import dataclass, field

from .world import World


@dataclass
class Verdict:
    kind: str  # completes, deadlock, livelock, stuck, horizon
    seconds: float | None  # completion time from the step's start; None otherwise
    chain: list[str] = field(default_factory=list)  # the wait-for chain that holds it
    remedy: str = ""  # the smallest change that completes, and in how long
    deadline_exceeded: float | None = None

    @property
    def ok(self) -> bool:
        return self.kind == "completes"

    @property
    def said(self) -> str:
        """The verdict in a line, as every report heads it."""
        return {"completes": f"completes in {self.seconds:.1f} s" if self.seconds is not None else "completes",
                "deadlock": "deadlock: nothing can happen any more",
                "livelock": "livelock: the evictions are refused for ever",
                "stuck": "stuck: pods wait for a DRA driver that is gone",
                "horizon": "still moving at the horizon"}[self.kind]


def remedy(changes, rerun, none: str, aside: str = "") -> str:
    """The first of `changes` ((what changes, the change), smallest first) that lets the
    simulation finish, proven by running it again (`rerun(change)`: the Verdict of that run),
    in the words every remedy uses; `none` when no change does."""
    for label, change in changes:
        verdict = rerun(change)
        if verdict.ok:
            return f"{label}: re-simulated, completes in {verdict.seconds:.0f} s{aside}"
    return none


def blocked(world: World, finished: bool, chain: list[str], **extra) -> Verdict:
    """The verdict on steps that did not complete: `stuck` when pods wait for a driver that
    is gone (whatever else waits on them), `deadlock` when nothing was left to happen,
    `horizon` when something still was."""
    stuck = world.stuck()
    if stuck and finished:
        chain = [_stuck(pods, phase) for phase, pods in (("Terminating", [p for p in stuck if p.phase != "Starting"]),
                                                          ("Starting", [p for p in stuck if p.phase == "Starting"]))
                 if pods] + chain
        return Verdict("stuck", None, chain, **extra)
    return Verdict("deadlock" if finished else "horizon", None, chain if finished else [], **extra)


def _stuck(pods: list, phase: str) -> str:
    nodes = ", ".join(sorted({p.node for p in pods}))
    if phase == "Terminating":
        return (f"{len(pods)} pod(s) stay Terminating on {nodes} ({pods[0].name}): the DRA driver is gone, so their "
                "devices are never unprepared and their claims stay allocated")
    return (f"{len(pods)} pod(s) stay ContainerCreating on {nodes} ({pods[0].name}): the DRA driver is gone, so "
            "their devices are never prepared (FailedPrepareDynamicResources)")


@dataclass
class Recorded:
    """What a simulation recorded from its start (the start state took the time before it)."""

    world: World
    start: float
    first_record: int  # the timeline's first record of the simulated steps

    def timeline(self) -> list:
        return [r.shifted(self.start) for r in self.world.timeline[self.first_record:]]

    def samples(self) -> list[dict]:
        return [dict(s, time=s["time"] - self.start) for s in self.world.samples if s["time"] >= self.start]
