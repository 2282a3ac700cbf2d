"""`draguard simulate SCENARIO`: the manifests' Deployments running on an inventory, then steps
one after another, each started once the one before finished:

    apiVersion: draguard.io/v1alpha1
    kind: Scenario
    manifests: [deploy.yaml]          # paths relative to the scenario file
    inventory: [inventory.yaml]
    kubeVersion: "1.34"               # optional
    horizon: 3600                     # optional: seconds a step may run
    durations: {start: 2, ready: 5, shutdown: 1}   # optional
    steps:
    - rollout: {deployment: llm}      # its next revision
    - scale: {deployment: llm, replicas: 6}
    - drain: {node: gpu-0}
    - deleteNode: {node: gpu-1}

`deleteNode` removes the node and its ResourceSlices at once (the kubelet makes the Node their
owner); its pods are removed by the pod garbage collector once the node has been gone for its
quarantine of 40 s (pkg/controller/podgc: quarantineTime 40 s, checked every 20 s, so 40 to 60
s upstream), and their ReplicaSets replace them elsewhere.

The scenario's verdict is its first step that does not complete (with that step's verdict and
certificate), else `completes` with the total time. A step naming what the scenario does not
hold is an error at its line and column."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dra.inventory import Inventory
from ..model.manifest import Manifest
from .deployment import Rollout
from .drain import Drain, budget_of
from .rollout import Recorded, Verdict, rollout_verdict, start_state
from .template import ScenarioError
from .world import Durations


@dataclass(frozen=True)
class Step:
    kind: str
    args: dict
    where: str = ""  # file:line:column of the step, for errors


@dataclass
class StepResult:
    step: Step
    started: float
    verdict: Verdict


@dataclass
class ScenarioRun(Recorded):
    results: list[StepResult] = field(default_factory=list)
    verdict: Verdict | None = None


def run_scenario(manifests: list[Manifest], inventory: Inventory, steps: list[Step],
                 durations: Durations = Durations(), horizon: float = 3600.0,
                 kube_version: str | None = None) -> ScenarioRun:
    from ..core.versions import DEFAULT_KUBE_VERSION

    world, running = start_state(manifests, inventory, durations, horizon, kube_version or DEFAULT_KUBE_VERSION)
    budgets = [m for m in manifests if m.kind == "PodDisruptionBudget"]
    run = ScenarioRun(world, world.now, len(world.timeline))
    for step in steps:
        started = world.now
        world.log(f"step {step.kind}", detail=", ".join(f"{k}: {v}" for k, v in step.args.items()))
        verdict = _STEP[step.kind](step, world, running, manifests, budgets, horizon)
        run.results.append(StepResult(step, started - run.start, verdict))
        if not verdict.ok:
            run.verdict = verdict
            return run
    run.verdict = Verdict("completes", world.now - run.start)
    return run


def _deployment(step: Step, running: dict) -> Rollout:
    name = step.args.get("deployment")
    if name not in running:
        raise ScenarioError(f"{step.where}: {step.kind} names Deployment {name!r}, which the manifests do not hold "
                            f"(they hold: {', '.join(sorted(running)) or 'none'})")
    return running[name]


def _rollout(step, world, running, manifests, budgets, horizon) -> Verdict:
    rollout = running[step.args["deployment"]] = _deployment(step, running).next_revision()
    started = world.now
    return rollout_verdict(rollout, world.run(started + horizon, until=rollout.complete), started)


def _scale(step, world, running, manifests, budgets, horizon) -> Verdict:
    current = _deployment(step, running)
    replicas = step.args.get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise ScenarioError(f"{step.where}: scale needs replicas: a whole number >= 0")
    current.replicas = current.new.replicas = replicas
    started = world.now
    finished = world.run(started + horizon, until=current.complete)
    if current.complete():
        return Verdict("completes", world.now - started)
    pending = [p for p in current.new.pods if p.phase == "Pending"]
    chain = [f"{len(pending)} pod(s) Pending ({pending[0].name}: {pending[0].why_pending})"] if pending else []
    return Verdict("deadlock" if finished else "horizon", None, chain)


def _node(step: Step, world) -> str:
    node = step.args.get("node")
    if node not in {n.name for n in world.state.inventory.nodes}:
        raise ScenarioError(f"{step.where}: {step.kind} names node {node!r}, which is not in the inventory")
    return node


def _drain(step, world, running, manifests, budgets, horizon) -> Verdict:
    node = _node(step, world)
    drain = Drain(node, world, [budget_of(m, list(running.values())) for m in budgets])
    drain.start()
    started = world.now
    finished = world.run(started + horizon, until=lambda: drain.done_at is not None or drain.livelock is not None)
    return drain.verdict(finished, started)


def _delete_node(step, world, running, manifests, budgets, horizon) -> Verdict:
    node = _node(step, world)
    inventory = world.state.inventory
    world.state.invalidate(slices=[s for s in inventory.slices if s.node_name != node],
                           nodes=[n for n in inventory.nodes if n.name != node])
    world.log("node deleted", detail=f"{node} and its ResourceSlices")
    orphans = [p for p in world.pods.values() if p.node == node and p.phase != "Gone"]

    def collect() -> None:
        for pod in orphans:
            if pod.phase != "Gone":
                world.remove(pod, "removed by the pod garbage collector (its node is gone)")

    world.at(world.now + POD_GC_QUARANTINE, collect)
    started = world.now

    def recovered() -> bool:
        return all(p.phase == "Gone" for p in orphans) and all(d.complete() for d in running.values())

    finished = world.run(started + horizon, until=recovered)
    if recovered():
        return Verdict("completes", world.now - started)
    pending = [p for p in world.pods.values() if p.phase == "Pending"]
    chain = [f"{len(pending)} replacement pod(s) Pending ({pending[0].name}: {pending[0].why_pending})"] if pending else []
    return Verdict("deadlock" if finished else "horizon", None, chain)


POD_GC_QUARANTINE = 40.0  # pkg/controller/podgc quarantineTime
_STEP = {"rollout": _rollout, "scale": _scale, "drain": _drain, "deleteNode": _delete_node}
#: the steps a scenario may take
STEPS = tuple(_STEP)
