"""`draguard simulate rollout` against the real control plane (issue: simulate, fidelity): the
same Deployment on the same MIG node (the fake driver's slices, the fake kubelet starting pods
2 s after it sees them and removing them as draguard's termination model says), rolled out by
the real kube-controller-manager and kube-scheduler. The verdicts must agree, and a completion
time be within 10% or 5 s of the simulated one. The simulator runs with the fake kubelet's
durations (2 s start-up; readiness, shutdown and release: none); the scheduler's queue is the
simulator's own model."""

from __future__ import annotations

import copy
import time

import pytest
from kubernetes import client

from draguard.dra.generate import generate
from draguard.dra.inventory import Inventory
from draguard.model.manifest import Manifest
from draguard.simulate.rollout import simulate_rollout
from draguard.simulate.world import Durations

from support.cluster import extra_gpu_node, until
from support.simulate import claim_template

pytestmark = pytest.mark.cluster
NS = "fidelity"
GPUS = {"model": "A100-40GB", "count": 2, "mig": "static", "layout": ["3g.20gb", "3g.20gb"]}
START = 2.0  # the fake kubelet's start-up: Running and Ready this long after it sees a pod
PHASES = Durations(pull=0, start=START, ready=0, shutdown=0, unprepare=0)
TEMPLATE = claim_template("3g.20gb", NS)


def deployment(strategy: dict) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "llm", "namespace": NS},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "llm"}}, "strategy": strategy,
                     "template": {"metadata": {"labels": {"app": "llm"}}, "spec": {
                         "terminationGracePeriodSeconds": 30,
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "slice"}],
                         "containers": [{"name": "server", "image": "vllm/vllm-openai:v0.18.0",
                                         "resources": {"claims": [{"name": "gpu"}]}}]}}}}


@pytest.fixture(scope="module")
def mig_node(plane):
    core = client.CoreV1Api(plane.api())
    core.create_namespace({"metadata": {"name": NS}})
    client.ResourceV1Api(plane.api()).create_namespaced_resource_claim_template(NS, TEMPLATE)
    with extra_gpu_node(plane, GPUS, "sim-node", start_seconds=START) as node:
        objects = generate({"nodes": [{"namePrefix": "sim-node", "count": 1, "gpus": GPUS}]})
        inventory = Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(objects)])
        try:
            yield plane, node, inventory
        finally:
            core.delete_namespace(NS)
            until("the test's pods gone", lambda: not core.list_namespaced_pod(NS).items, timeout=60)


def _status(apps, name="llm"):
    return apps.read_namespaced_deployment_status(name, NS).status


def _complete(apps, generation: int) -> bool:
    status = _status(apps)
    return (status.observed_generation or 0) >= generation and status.updated_replicas == 4 \
        and status.available_replicas == 4 and status.replicas == 4


def run_on_the_plane(plane, strategy: dict, wait: float) -> tuple[str, float | None]:
    """('completes', seconds) or ('deadlock', None) when nothing moved for `wait` seconds."""
    apps = client.AppsV1Api(plane.api())
    apps.create_namespaced_deployment(NS, deployment(strategy))
    try:
        until("revision 1 running", lambda: _complete(apps, 1), timeout=60)
        started = time.monotonic()
        patched = apps.patch_namespaced_deployment("llm", NS, {"spec": {"template": {"metadata": {
            "annotations": {"draguard.io/revision": "2"}}}}})
        generation = patched.metadata.generation
        last, moved = None, time.monotonic()
        while time.monotonic() - moved < wait:
            if _complete(apps, generation):
                return "completes", time.monotonic() - started
            status = _status(apps)
            now = (status.updated_replicas, status.available_replicas, status.replicas)
            if now != last:
                last, moved = now, time.monotonic()
            time.sleep(0.2)
        return "deadlock", None
    finally:
        apps.delete_namespaced_deployment("llm", NS)
        core = client.CoreV1Api(plane.api())
        until("the pods gone", lambda: not core.list_namespaced_pod(NS).items, timeout=60)


def simulated(strategy: dict, inventory: Inventory):
    return simulate_rollout(Manifest.from_data(deployment(strategy)),
                            {"slice": Manifest.from_data(copy.deepcopy(TEMPLATE))}, inventory, PHASES,
                            remedies=False).verdict


SCENARIOS = {
    "release-first": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
    "surge-first on a full pool": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    "recreate": {"type": "Recreate"},
    "half at a time": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "50%"}},
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_simulator_agrees_with_the_real_controllers(mig_node, name):
    plane, _, inventory = mig_node
    strategy = SCENARIOS[name]
    verdict = simulated(strategy, inventory)
    kind, seconds = run_on_the_plane(plane, strategy, wait=12)
    print(f"{name}: simulated {verdict.kind} {verdict.seconds}, real {kind} {seconds}")
    assert kind == verdict.kind
    if kind == "completes":
        assert abs(seconds - verdict.seconds) <= max(5.0, 0.1 * seconds), (seconds, verdict.seconds)
