"""`draguard simulate SCENARIO`: the manifests' workloads on an inventory, then steps one after
another, each started once the one before finished:

    apiVersion: draguard.io/v1alpha1
    kind: Scenario
    manifests: [deploy.yaml]          # paths relative to the scenario file
    inventory: [inventory.yaml]
    start: manifests                  # or `empty`, or {dump: PATH}: a cluster dump (draguard audit's)
    kubeVersion: "1.34"               # optional
    horizon: 3600                     # optional: seconds a step may run
    durations: {start: 2, ready: 5, shutdown: 1}   # optional (world.Durations: the defaults)
    workloadDurations: {llm: {ready: 90}}          # optional: a workload's own, over those
    steps:
    - update: {deployment: llm}       # its next revision (also `rollout`; or statefulset: NAME)
    - scale: {deployment: llm, replicas: 6}
    - create: {job: train}            # a workload of the manifests not running yet (wait: false:
                                      # on at once, else once it is whole or done)
    - wait: {seconds: 30}
    - drain: {node: gpu-0}
    - uncordon: {node: gpu-0}         # a node cordoned by a drain, or by spec.unschedulable
    - evict: {pod: llm-2-1}
    - deleteNode: {node: gpu-1}
    - driverStop: {node: gpu-2}       # driverStart, driverRestart {node, seconds}
    - deviceTaint: {node: gpu-3, key: gpu.example.com/unhealthy, effect: NoExecute}

A workload is named by its kind (`deployment`, `statefulset`, `job`). The start state runs
the manifests' Deployments and StatefulSets (a Job is started with `create`).

Every step that disturbs the cluster (drain, evict, deleteNode, the driver steps,
deviceTaint) then waits until every workload is whole again; its verdict says whether that
happens, and when.

`deleteNode` removes the node and its ResourceSlices at once (the kubelet makes the Node their
owner); its pods are removed by the pod garbage collector once the node has been gone for its
quarantine of 40 s (pkg/controller/podgc: quarantineTime 40 s, checked every 20 s, so 40 to 60
s upstream), and their controllers replace them elsewhere.

`deviceTaint` adds a DeviceTaintRule (KEP-5055) over the node's devices (or `driver`, `pool`,
`device`): new claims avoid the devices it taints with NoSchedule or NoExecute, and with
NoExecute the device taint eviction controller deletes the pods whose allocated devices
carry it untolerated, after the smallest tolerationSeconds of the tolerations that match it
(pkg/controller/devicetainteviction).

The scenario's verdict is its first step that does not complete (with that step's verdict and
certificate), else `completes` with the total time. A step naming what the scenario does not
hold is an error at its line and column."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..dra.devices import DeviceTaintRule, Taint
from ..dra.inventory import Inventory
from ..model.manifest import Manifest
from .adopt import dump_state
from .drain import NO_BUDGET_REMEDY, Drain, budget_changes, budget_of
from .taints import evict_tainted
from .rollout import NO_STRATEGY_REMEDY, rollout_verdict, strategy_changes
from .template import ScenarioError
from .verdict import Recorded, Verdict, blocked, remedy
from .workloads import KINDS, controller_of, start_state
from .world import Durations, Timings, World

POD_GC_QUARANTINE = 40.0  # pkg/controller/podgc quarantineTime
WORKLOAD_KEYS = {kind.lower(): kind for kind in KINDS}


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
    workloads: dict = field(default_factory=dict)  # (kind, name) -> its controller, as the run left it


@dataclass
class Context:
    """What the steps act on."""

    world: World
    running: dict  # (kind, name) -> its controller
    manifests: list[Manifest]
    timings: Timings
    horizon: float
    # steps (and manifests swapped) -> the scenario run again with them (None: no remedies are tried)
    again: Callable[..., ScenarioRun] | None = None
    done: list = field(default_factory=list)  # the steps that completed

    @property
    def budgets(self) -> list:
        controllers = list(self.running.values())
        return [budget_of(m, controllers) for m in self.manifests if m.kind == "PodDisruptionBudget"]

    def whole(self) -> bool:
        return all(c.complete() for c in self.running.values())


def run_scenario(manifests: list[Manifest], inventory: Inventory | None, steps: list[Step],
                 durations: Durations | Timings = Durations(), horizon: float = 3600.0,
                 kube_version: str | None = None, empty: bool = False, dump: list[Manifest] | None = None,
                 remedies: bool = True, gates: dict | None = None) -> ScenarioRun:
    """The steps from the start state: the manifests' workloads running on `inventory`,
    nothing (`empty`), or the cluster `dump` as it was (its own inventory; the manifests add
    templates, budgets and workloads to create), on a cluster of `kube_version` with feature
    `gates` set differently from its defaults. `remedies`: a step that cannot finish is
    tried again with the smallest change that lets it."""
    from ..core.versions import DEFAULT_KUBE_VERSION

    release = kube_version or DEFAULT_KUBE_VERSION
    timings = durations if isinstance(durations, Timings) else Timings(durations)

    def again(changed: list[Step], swaps: dict | None = None) -> ScenarioRun:
        """The scenario run again with `changed` steps and manifests swapped ({id: new})."""
        def swap(given: list[Manifest]) -> list[Manifest]:
            return [(swaps or {}).get(id(m), m) for m in given]

        return run_scenario(swap(manifests), inventory, changed, timings, horizon, kube_version, empty,
                            None if dump is None else swap(dump), remedies=False, gates=gates)

    if dump is not None:
        world, running = dump_state(dump, manifests, timings, horizon, release, gates)
        everything = dump + manifests
    elif inventory is None:
        raise ScenarioError("a scenario that does not start from a dump needs an inventory")
    else:
        world, running = start_state(manifests, inventory, timings, horizon, release, empty=empty, gates=gates)
        everything = manifests
    context = Context(world, dict(running), everything, timings, horizon, again if remedies else None)
    run = ScenarioRun(world, world.now, len(world.timeline), workloads=context.running)
    for step in steps:
        started = world.now
        world.log(f"step {step.kind}", detail=", ".join(f"{k}: {v}" for k, v in step.args.items()))
        verdict = _STEP[step.kind](step, context)
        run.results.append(StepResult(step, started - run.start, verdict))
        if not verdict.ok:
            run.verdict = verdict
            return run
        context.done.append(step)
    run.verdict = Verdict("completes", world.now - run.start)
    return run


def _named(step: Step) -> tuple[str, str]:
    """(kind, name) of the workload a step names."""
    given = [key for key in step.args if key in WORKLOAD_KEYS]
    if len(given) != 1:
        raise ScenarioError(f"{step.where}: {step.kind} names one workload: "
                            + " or ".join(f"{key}: NAME" for key in WORKLOAD_KEYS))
    return WORKLOAD_KEYS[given[0]], _name(step, given[0])


def _name(step: Step, key: str):
    """The object name a step's argument gives (None when it gives none)."""
    value = step.args.get(key)
    if value is not None and not isinstance(value, str):
        raise ScenarioError(f"{step.where}: {step.kind}: {key} is a name, not {value!r}")
    return value


def _workload(step: Step, context: Context):
    kind, name = _named(step)
    if (kind, name) not in context.running:
        held = sorted(f"{k} {n}" for k, n in context.running)
        raise ScenarioError(f"{step.where}: {step.kind} names {kind} {name!r}, which is not running "
                            f"(running: {', '.join(held) or 'none'})")
    return context.running[(kind, name)]


def _until_whole(context: Context, chain_of=None, settled=lambda: True) -> Verdict:
    """Run until every workload is whole again (and `settled()`): the verdict, with the pods
    left Pending."""
    world, started = context.world, context.world.now

    def done() -> bool:
        return settled() and context.whole()

    finished = world.run(started + context.horizon, until=done)
    if done():
        return Verdict("completes", world.now - started)
    pending = [p for p in world.pods.values() if p.phase == "Pending"]
    chain = [f"{len(pending)} pod(s) Pending ({pending[0].name}: {pending[0].why_pending})"] if pending else []
    return blocked(world, finished, (chain_of() if chain_of else []) + chain)


def _create(step: Step, context: Context) -> Verdict:
    kind, name = _named(step)
    if (kind, name) in context.running:
        raise ScenarioError(f"{step.where}: {kind} {name!r} is running already")
    found = [m for m in context.manifests if m.kind == kind and m.name == name]
    if not found:
        raise ScenarioError(f"{step.where}: create names {kind} {name!r}, which the manifests do not hold")
    controller = controller_of(found[0], context.manifests, context.timings.of(name), context.world)
    context.running[(kind, name)] = controller
    if step.args.get("wait", True) is False:  # on to the next step at once
        context.world.settle()
        return Verdict("completes", 0.0)
    return _until_whole(context, lambda: [f"Job {name} failed (BackoffLimitExceeded)"]
                        if getattr(controller, "failed_at", None) is not None else [])


def _wait(step: Step, context: Context) -> Verdict:
    """Time passes: `seconds` of the world running on its own."""
    seconds = step.args.get("seconds")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds <= 0:
        raise ScenarioError(f"{step.where}: wait needs seconds: a number > 0")
    world = context.world
    started = world.now
    world.run(started + seconds)
    world.now = started + seconds
    return Verdict("completes", float(seconds))


def _update(step: Step, context: Context) -> Verdict:
    current = _workload(step, context)
    if not hasattr(current, "next_revision"):
        raise ScenarioError(f"{step.where}: a Job's pod template cannot be updated (the API refuses it)")
    kind, name = _named(step)
    updated = context.running[(kind, name)] = current.next_revision()
    started = context.world.now
    if kind == "Deployment":
        finished = context.world.run(started + context.horizon, until=updated.complete)
        verdict = rollout_verdict(updated, finished, started)
        if verdict.kind == "deadlock":
            found = [m for m in context.manifests if m.kind == kind and m.name == name]
            changes = [(label, {id(found[0]): changed}) for label, changed in strategy_changes(found[0])]
            verdict.remedy = _first_that_completes(step, context, changes, NO_STRATEGY_REMEDY)
        return verdict
    return _until_whole(context)


def _first_that_completes(step: Step, context: Context, changes: list, none: str) -> str:
    """The first (what changes, manifests swapped) with which the scenario, run again up to
    this step, completes it; `none` when none does (or remedies are not tried)."""
    if context.again is None:
        return ""
    return remedy(changes, lambda swaps: context.again(context.done + [step], swaps).results[-1].verdict, none)


def _scale(step: Step, context: Context) -> Verdict:
    current = _workload(step, context)
    replicas = step.args.get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise ScenarioError(f"{step.where}: scale needs replicas: a whole number >= 0")
    current.scale(replicas)
    verdict = _until_whole(context)
    if verdict.kind == "deadlock" and context.again is not None:
        verdict.remedy = _fewer(step, context, replicas)
    return verdict


def _fewer(step: Step, context: Context, replicas: int) -> str:
    """The most replicas that fit, below the ones asked for: as many fewer as pods are left
    Pending, and then one at a time, each proven by running the scenario again."""
    again = context.again
    if again is None:
        return ""
    pending = sum(1 for p in context.world.pods.values() if p.phase == "Pending")
    changes = [(f"replicas: {fewer}", fewer) for fewer in range(replicas - max(pending, 1),
                                                                max(replicas - pending - 3, -1), -1)]
    return remedy(changes, lambda fewer: again(
        context.done + [Step(step.kind, dict(step.args, replicas=fewer), step.where)]).results[-1].verdict,
        "add capacity: fewer replicas did not complete either", " (or add capacity)")


def _node(step: Step, context: Context) -> str:
    node = _name(step, "node")
    if node not in {n.name for n in context.world.state.inventory.nodes}:
        raise ScenarioError(f"{step.where}: {step.kind} names node {node!r}, which is not in the inventory")
    return node


def _drain(step: Step, context: Context) -> Verdict:
    drain = Drain(context.world, context.budgets, node=_node(step, context))
    verdict = _evictions(drain, context)
    if verdict.kind == "livelock":
        changes = budget_changes(context.manifests, sorted(drain.refused_by), len(drain.evicting))
        verdict.remedy = _first_that_completes(step, context, changes, NO_BUDGET_REMEDY)
    return verdict


def _evict(step: Step, context: Context) -> Verdict:
    """One pod evicted through the eviction API as `kubectl drain` would (a 429 retried every
    5 s); then the workloads made whole again."""
    world, name = context.world, _name(step, "pod")
    pod = world.pods.get(name)
    if pod is None or pod.phase == "Gone":
        live = sorted(n for n, p in world.pods.items() if p.phase != "Gone")
        raise ScenarioError(f"{step.where}: evict names pod {name!r}, which does not exist (pods: "
                            f"{', '.join(live[:8]) or 'none'}{', ...' if len(live) > 8 else ''})")
    verdict = _evictions(Drain(world, context.budgets, pods=[pod]), context)
    return _until_whole(context) if verdict.ok else verdict


def _evictions(drain: Drain, context: Context) -> Verdict:
    """The drain's evictions run until its pods are gone or they are refused for ever."""
    drain.start()
    world, started = context.world, context.world.now
    finished = world.run(started + context.horizon, until=lambda: drain.done_at is not None or drain.livelock is not None)
    drain.stop()  # a later step's drain does not need this one checked at every moment
    return drain.verdict(finished, started)


def _uncordon(step: Step, context: Context) -> Verdict:
    """`kubectl uncordon`: the node takes new pods again."""
    node, world = _node(step, context), context.world
    world.state.uncordon(node)
    world.log("uncordoned", detail=node)
    world.wake_waiting()
    return _until_whole(context)


def _delete_node(step: Step, context: Context) -> Verdict:
    node, world = _node(step, context), context.world
    inventory = world.state.inventory
    world.state.invalidate(slices=[s for s in inventory.slices if s.node_name != node],
                           nodes=[n for n in inventory.nodes if n.name != node])
    world.log("node deleted", detail=f"{node} and its ResourceSlices")
    orphans = [p for p in world.pods.values() if p.node == node and p.phase != "Gone"]

    def collect() -> None:
        for pod in orphans:
            world.remove(pod, "removed by the pod garbage collector (its node is gone)")

    world.at(world.now + POD_GC_QUARANTINE, collect)
    return _until_whole(context, settled=lambda: all(p.phase == "Gone" for p in orphans))


def _driver_stop(step: Step, context: Context) -> Verdict:
    context.world.driver_stop(_node(step, context))
    return _until_whole(context)


def _driver_start(step: Step, context: Context) -> Verdict:
    node = _node(step, context)
    if node not in context.world.drivers_down:
        raise ScenarioError(f"{step.where}: the driver on {node} is running")
    context.world.driver_start(node)
    return _until_whole(context)


def _driver_restart(step: Step, context: Context) -> Verdict:
    """The driver away for `seconds` (a crash and its restart, or an upgrade's gap)."""
    node, seconds = _node(step, context), step.args.get("seconds", 10)
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
        raise ScenarioError(f"{step.where}: driverRestart seconds: a number >= 0")
    world = context.world
    world.driver_stop(node)
    world.at(world.now + seconds, world.driver_start, node)
    started = world.now
    verdict = _until_whole(context)
    if verdict.ok and world.now < started + seconds:  # whole all along: the step lasts the restart
        world.run(started + seconds)
        verdict = Verdict("completes", world.now - started)
    return verdict


def _device_taint(step: Step, context: Context) -> Verdict:
    world, args = context.world, step.args
    effect = args.get("effect")
    if effect not in ("NoSchedule", "NoExecute", "None") or not isinstance(args.get("key"), str):
        raise ScenarioError(f"{step.where}: deviceTaint needs key and effect (NoSchedule, NoExecute or None)")
    if not world.enabled("DRADeviceTaints"):
        raise ScenarioError(f"{step.where}: deviceTaint: DeviceTaintRules need the DRADeviceTaints feature gate, off "
                            f"in {world.kube_version} (set featureGates: {{DRADeviceTaints: true}} where the cluster "
                            "runs with it)")
    node = _node(step, context) if "node" in args else None
    slices = world.state.inventory.slices
    pools = {(s.driver, s.pool) for s in slices if node is None or s.node_name == node}
    taint = Taint(args["key"], str(args.get("value", "")), effect)
    rules = [DeviceTaintRule(f"scenario-{len(world.timeline)}-{driver}-{pool}", taint, args.get("driver", driver),
                             args.get("pool", pool), args.get("device")) for driver, pool in sorted(pools)]
    world.state.invalidate(taint_rules=world.state.inventory.taint_rules + rules)
    world.log("devices tainted", detail=f"{taint.key}={taint.value}:{effect} on {node or 'every node'}")
    doomed = evict_tainted(world) if effect == "NoExecute" else []
    return _until_whole(context, settled=lambda: all(p.phase not in ("Starting", "Running") for p in doomed))


_STEP = {"wait": _wait, "update": _update, "rollout": _update, "scale": _scale, "create": _create, "drain": _drain,
         "evict": _evict, "uncordon": _uncordon, "deleteNode": _delete_node, "driverStop": _driver_stop,
         "driverStart": _driver_start, "driverRestart": _driver_restart, "deviceTaint": _device_taint}
#: the steps a scenario may take
STEPS = tuple(_STEP)
