"""`draguard simulate drain` against the real control plane (issue: simulate, fidelity): a
Deployment with a PodDisruptionBudget on a fake-driver MIG node, drained as `kubectl drain`
does it (cordon, an eviction per pod retried every 5 s on 429) against the real eviction API
and disruption controller. With a second MIG node the drain completes, as simulated, within
10% or 5 s; with none the replacements stay Pending and the evictions are refused for ever,
which the simulator proves a livelock. The start state is the same in both: the pods all on
the first node (the only one with the slices when they were scheduled; first-fit by name in
the simulator)."""

from __future__ import annotations

import time
from contextlib import ExitStack

import pytest
from kubernetes import client

from draguard.dra.generate import generate
from draguard.dra.inventory import Inventory
from draguard.model.manifest import Manifest
from draguard.simulate.drain import DRAIN_RETRY, simulate_drain

from support.cluster import extra_gpu_node, until
from support.simulate import claim_template
from .test_simulate_fidelity import GPUS, PHASES, START, deployment

pytestmark = pytest.mark.cluster
BUDGET = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "llm"},
          "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "llm"}}}}
RELEASE_FIRST = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


def _objects(ns: str) -> list[dict]:
    template = claim_template("3g.20gb", ns)
    workload = deployment(RELEASE_FIRST)
    workload["metadata"]["namespace"] = ns
    return [template, workload, dict(BUDGET, metadata=dict(BUDGET["metadata"], namespace=ns))]


def simulated(nodes: list[str], ns: str):
    objects = generate({"nodes": [{"namePrefix": prefix, "count": 1, "gpus": GPUS} for prefix in nodes]})
    inventory = Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(objects)])
    return simulate_drain(f"{nodes[0]}-0", [Manifest.from_data(o) for o in _objects(ns)], inventory, PHASES).verdict


def drain_on_the_plane(plane, second_node: bool, wait: float, ns: str) -> tuple[str, float | None]:
    """The scenario in a namespace of its own (a deleted one lingers while its claims go)."""
    core, apps = client.CoreV1Api(plane.api()), client.AppsV1Api(plane.api())
    policy = client.PolicyV1Api(plane.api())
    with ExitStack() as stack:
        node = stack.enter_context(extra_gpu_node(plane, GPUS, "drain-a", start_seconds=START))
        core.create_namespace({"metadata": {"name": ns}})
        try:
            template, workload, budget = _objects(ns)
            client.ResourceV1Api(plane.api()).create_namespaced_resource_claim_template(ns, template)
            apps.create_namespaced_deployment(ns, workload)
            policy.create_namespaced_pod_disruption_budget(ns, budget)
            until("four pods available", lambda: (apps.read_namespaced_deployment_status("llm", ns).status
                                                  .available_replicas or 0) == 4, timeout=60)
            until("the budget observed", lambda: policy.read_namespaced_pod_disruption_budget_status(
                "llm", ns).status.disruptions_allowed == 1, timeout=30)
            if second_node:
                stack.enter_context(extra_gpu_node(plane, GPUS, "drain-b", start_seconds=START))
            return _drain(core, node, wait, ns)
        finally:
            apps.delete_namespaced_deployment("llm", ns)
            until("the drained pods gone", lambda: not core.list_namespaced_pod(ns).items, timeout=90)
            core.delete_namespace(ns)


def _drain(core, node: str, wait: float, ns: str) -> tuple[str, float | None]:
    """kubectl drain: cordon, evict each pod, retry a refused one every 5 s, wait for them to go."""
    started = time.monotonic()
    core.patch_node(node, {"spec": {"unschedulable": True}})
    on_node = {p.metadata.name for p in core.list_namespaced_pod(ns).items if p.spec.node_name == node}
    next_try = {name: 0.0 for name in on_node}
    last_change, remaining = time.monotonic(), set(on_node)
    while time.monotonic() - last_change < wait:
        now = time.monotonic() - started
        for name, due in list(next_try.items()):
            if due > now:
                continue
            try:
                core.create_namespaced_pod_eviction(name, ns, {"apiVersion": "policy/v1", "kind": "Eviction",
                                                               "metadata": {"name": name, "namespace": ns}})
                del next_try[name]
            except client.exceptions.ApiException as exc:
                if exc.status != 429:
                    raise
                next_try[name] = now + DRAIN_RETRY
        present = {p.metadata.name for p in core.list_namespaced_pod(ns).items}
        if remaining - present:
            remaining &= present
            last_change = time.monotonic()
        if not remaining:
            return "completes", time.monotonic() - started
        time.sleep(0.2)
    return "livelock", None


@pytest.mark.parametrize("second_node", [True, False], ids=["a second node takes the pods", "a full pool"])
def test_the_drain_simulator_agrees_with_the_eviction_api(plane, second_node):
    ns = f"fidelity-drain-{'two' if second_node else 'one'}"
    verdict = simulated(["drain-a", "drain-b"] if second_node else ["drain-a"], ns)
    kind, seconds = drain_on_the_plane(plane, second_node, 15, ns)
    print(f"second node {second_node}: simulated {verdict.kind} {verdict.seconds}, real {kind} {seconds}")
    assert kind == verdict.kind
    if kind == "completes":
        assert abs(seconds - verdict.seconds) <= max(5.0, 0.1 * seconds), (seconds, verdict.seconds)
