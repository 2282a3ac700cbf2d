"""The workloads of the manifests under their simulated controllers: a Deployment
(simulate.deployment), a StatefulSet (simulate.statefulset) or a Job (simulate.job), each
reconciled at every moment of the world; and the start state they run from."""

from __future__ import annotations

from ..dra.inventory import Inventory
from ..model.manifest import Manifest
from .job import Job, job_of
from .rollout import steady_set
from .statefulset import StatefulSet, statefulset_of
from .template import ScenarioError, template_of
from .world import Durations, Timings, World

#: the kinds a scenario can run, and the ones the manifests' start state runs (a Job is
#: created by a step: in a start state it would have finished)
KINDS = ("Deployment", "StatefulSet", "Job")
RUNNING_KINDS = ("Deployment", "StatefulSet")


def controller_of(workload: Manifest, manifests: list[Manifest], durations: Durations, world: World):
    """The workload under its controller, reconciled by `world` from now on."""
    templates = templates_for(manifests, workload.namespace)
    if workload.kind == "Deployment":
        return steady_set(workload, templates, durations, world)
    template = template_of(workload, templates, durations, world)
    controller: StatefulSet | Job
    if workload.kind == "StatefulSet":
        controller = statefulset_of(workload, template, world)
    elif workload.kind == "Job":
        controller = job_of(workload, template, world)
    else:
        raise ScenarioError(f"{workload.kind} '{workload.name}': only {', '.join(KINDS)} are simulated")
    world.on_change.append(controller.reconcile)
    return controller


def start_state(manifests: list[Manifest], inventory: Inventory, timings: Timings, horizon: float,
                kube_version: str, empty: bool = False, gates: dict | None = None) -> tuple[World, dict]:
    """The manifests' Deployments and StatefulSets running on the inventory (ScenarioError
    when one does not fit), each under its controller: the world, and each by (kind, name).
    `empty`: nothing runs yet; `gates`: feature gates set differently from the release's."""
    world = World.on(inventory, kube_version, gates)
    running = {} if empty else {(m.kind, m.name): controller_of(m, manifests, timings.of(m.name), world)
                                for m in manifests if m.kind in RUNNING_KINDS}
    world.run(horizon)
    for controller in running.values():
        problem = controller.fitted()
        if problem:
            raise ScenarioError(world.misfit(problem))
    return world, running


def templates_for(manifests: list[Manifest], namespace: str | None) -> dict[str, Manifest]:
    """The ResourceClaimTemplates of `namespace` among `manifests`, by name."""
    return {m.name: m for m in manifests if m.kind == "ResourceClaimTemplate"
            and (m.namespace or None) == (namespace or None)}
