"""`draguard simulate rollout`: a Deployment whose pods claim devices from templates, running
at its current revision on an inventory, rolled out to a new one; the verdict, with a
certificate when it cannot finish.

The start state is the Deployment's replicas all running (scheduled first-fit, ready). The
rollout then runs until nothing is left to happen: `completes` (with the time), or
`deadlock` with the wait-for chain that holds it (new pods Pending for want of a device, old
pods kept by maxUnavailable, the new pods not available) and the smallest change to the
strategy that lets it finish, proven by simulating it again. `horizon` when it is still
moving at the horizon."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.versions import DEFAULT_KUBE_VERSION
from ..dra.inventory import Inventory
from ..model.manifest import Manifest
from ..model.rollout import Strategy
from .deployment import DEFAULT_PROGRESS_DEADLINE, ReplicaSet, Rollout
from .template import ScenarioError, template_of
from .verdict import Recorded, Verdict, blocked, remedy
from .world import Durations, World



@dataclass
class Simulation(Recorded):
    deployment: str = ""
    replicas: int = 0
    strategy: Strategy | None = None
    verdict: Verdict | None = None


def simulate_rollout(deployment: Manifest, templates: dict[str, Manifest], inventory: Inventory,
                     durations: Durations = Durations(), horizon: float = 3600.0, remedies: bool = True,
                     kube_version: str = DEFAULT_KUBE_VERSION, progress=None, image: str | None = None,
                     gates: dict | None = None) -> Simulation:
    """The rollout on a cluster of `kube_version` with feature `gates` set differently from its
    defaults (to `image`, when given: said in the timeline); a deadlock comes with the
    smallest strategy change that completes; `progress(stage, total)` -> advance(n), for a
    progress bar."""
    world = World.on(inventory, kube_version, gates)
    steady = steady_set(deployment, templates, durations, world)
    world.run(horizon)
    problem = steady.fitted()
    if problem:
        raise ScenarioError(world.misfit(problem))
    start, first_record = world.now, len(world.timeline)
    world.log("rollout started", detail=f"revision 2 of {deployment.name}" + (f", image {image}" if image else ""))
    rollout = steady.next_revision(advance=progress("rolling out", steady.replicas) if progress else None)
    finished = world.run(start + horizon)
    verdict = rollout_verdict(rollout, finished, start)
    simulation = Simulation(world, start, first_record, deployment.name, steady.replicas, steady.strategy, verdict)
    if remedies and verdict.kind == "deadlock":
        verdict.remedy = _remedy(deployment, templates, inventory, durations, horizon, kube_version, gates)
    return simulation


def steady_set(deployment: Manifest, templates: dict[str, Manifest], durations: Durations, world: World) -> Rollout:
    """The Deployment at its current revision (one ReplicaSet at full scale), reconciled at
    every moment of `world` from now on (`fitted` once the world has run)."""
    if deployment.kind != "Deployment":
        raise ScenarioError(f"{deployment.kind} '{deployment.name}' is not a Deployment")
    template = template_of(deployment, templates, durations, world)
    strategy = Strategy.of(deployment)
    try:
        strategy.fenceposts()
    except ValueError as exc:
        raise ScenarioError(f"Deployment '{deployment.name}': rollout strategy: {exc}") from None
    replicas = deployment.spec.get("replicas", 1)
    current = ReplicaSet(f"{deployment.name}-1", 1, replicas, template)
    deadline = float(deployment.spec.get("progressDeadlineSeconds", DEFAULT_PROGRESS_DEADLINE))
    steady = Rollout(deployment.name, replicas, strategy, template.min_ready, math.inf, [], current, world, deadline)
    world.on_change.append(steady.reconcile)
    if "podReplacementPolicy" in deployment.spec:
        # KEP-5882: alpha at most, behind DeploymentPodReplacementPolicy, off by default
        world.log("ignored", detail=f"Deployment {deployment.name}: spec.podReplacementPolicy is alpha (KEP-5882, "
                                    "off by default): the API server drops it, so replacements start at once")
    return steady


def rollout_verdict(rollout: Rollout, finished: bool, start: float) -> Verdict:
    """The verdict on a rollout run from `start` (`finished`: nothing was left to happen)."""
    if rollout.completed_at is not None:
        return Verdict("completes", rollout.completed_at - start, deadline_exceeded=_since(rollout, start))
    return blocked(rollout.world, finished, deadlock_chain(rollout) if finished else [],
                   deadline_exceeded=_since(rollout, start))


def _since(rollout: Rollout, start: float) -> float | None:
    return None if rollout.deadline_exceeded_at is None else rollout.deadline_exceeded_at - start


def deadlock_chain(rollout: Rollout) -> list[str]:
    """Why nothing moves, each link waiting on the next."""
    world, new = rollout.world, rollout.new
    surge, unavailable = rollout.strategy.fenceposts()
    pending = [p for p in new.pods if p.phase == "Pending"]
    held = len(world.state.held)
    chain = []
    if pending:
        chain.append(f"{len(pending)} new pod(s) Pending ({pending[0].name}: {pending[0].why_pending}; {held} "
                     "device(s) held)")
    available = sum(rs.available(world, rollout.min_ready) for rs in rollout.sets)
    min_available = rollout.replicas - unavailable
    old_left = sum(len(rs.active(world)) for rs in rollout.old)
    if old_left:
        chain.append(f"{old_left} old pod(s) cannot be removed: {available} pod(s) available must stay >= "
                     f"{min_available} (replicas {rollout.replicas} - maxUnavailable {unavailable})")
    new_unavailable = new.replicas - new.available(world, rollout.min_ready)
    if new_unavailable:
        chain.append(f"{new_unavailable} new pod(s) not available: they wait for devices the old pods hold")
    if rollout.strategy.type == "Recreate" and pending:
        chain = [f"{len(pending)} new pod(s) Pending with no old pod left: the new revision does not fit the "
                 f"inventory ({pending[0].why_pending})"]
    return chain


#: strategy changes to try, smallest first
RELEASE_FIRST = "strategy maxSurge: 0, maxUnavailable: 1"  # how a remedy that is a release-first update begins
_REMEDIES = ((RELEASE_FIRST, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}),
             ("strategy type: Recreate", {"type": "Recreate"}))


def strategy_changes(deployment: Manifest) -> list[tuple[str, Manifest]]:
    """(what changes, the Deployment with it) for each strategy to try, smallest first."""
    return [(label, with_strategy(deployment, strategy)) for label, strategy in _REMEDIES
            if deployment.spec.get("strategy") != strategy]


def with_strategy(deployment: Manifest, strategy: dict) -> Manifest:
    return Manifest.from_data(dict(deployment.data, spec=dict(deployment.spec, strategy=strategy)),
                              display=deployment.source.display, positions=False)


NO_STRATEGY_REMEDY = "no strategy change completes: the new revision does not fit the inventory"


def _remedy(deployment, templates, inventory, durations, horizon, kube_version, gates) -> str:
    return remedy(strategy_changes(deployment), lambda changed: simulate_rollout(
        changed, templates, inventory, durations, horizon, remedies=False, kube_version=kube_version,
        gates=gates).verdict,
        NO_STRATEGY_REMEDY)
