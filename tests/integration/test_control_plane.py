"""Smoke tests that prove the integration harness is a real control plane: the real
scheduler allocates claims from the fake driver's slices, a surge-first rollout on a full
GPU pool deadlocks while a release-first one completes, and admin-access allocations leave
devices free for later claims exactly as draguard's ClusterState predicts."""

from __future__ import annotations

import time

import pytest
from kubernetes import client

from draguard.dra.devices import claim_from
from draguard.dra.inventory import Inventory
from draguard.dra.state import ClusterState
from draguard.model.manifest import Manifest
from draguard.sources.loader import Source
from support.cluster import gpu_inventory, until

pytestmark = pytest.mark.cluster
NS = "smoke"  # created by the `plane` fixture (tests/integration/conftest.py)


def claim_template() -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": NS},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}}}}


def deployment(name: str, replicas: int, surge: int, unavailable: int) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "terminationGracePeriodSeconds": 2,
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                         "containers": [{"name": "server", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"claims": [{"name": "gpu"}]},
                                         "lifecycle": {"preStop": {"sleep": {"seconds": 1}}}}]}}}}


def pods(plane, app: str) -> list:
    return client.CoreV1Api(plane.api()).list_namespaced_pod(NS, label_selector=f"app={app}").items


def running(plane, app: str) -> list:
    return [p for p in pods(plane, app) if p.status.phase == "Running" and p.metadata.deletion_timestamp is None]


def test_scheduler_allocates_claims_from_the_driver_slices(plane):
    plane.apply([claim_template(), deployment("alloc", 2, 0, 1)])
    until("2 running pods", lambda: len(running(plane, "alloc")) == 2)
    resource = client.ResourceV1Api(plane.api())
    claims = [c for c in resource.list_namespaced_resource_claim(NS).items
              if any(r.name.startswith("alloc-") for r in (c.metadata.owner_references or []))]
    assert len(claims) == 2
    devices = set()
    for claim in claims:
        allocation = claim.status.allocation
        [result] = allocation.devices.results
        assert (result.driver, result.request) == ("gpu.nvidia.com", "gpu")
        devices.add((result.pool, result.device))
        terms = allocation.node_selector.node_selector_terms
        assert terms[0].match_fields[0].key == "metadata.name"
        assert [r.resource for r in claim.status.reserved_for] == ["pods"]
    assert len(devices) == 2
    client.AppsV1Api(plane.api()).delete_namespaced_deployment("alloc", NS)
    until("claims released", lambda: not [c for c in resource.list_namespaced_resource_claim(NS).items
                                          if c.metadata.name.startswith("alloc-")], timeout=60)


def rollout(plane, name: str) -> None:
    client.AppsV1Api(plane.api()).patch_namespaced_deployment(name, NS, {"spec": {"template": {"metadata": {
        "annotations": {"draguard.io/rollout": str(time.time())}}}}})


def test_surge_first_rollout_deadlocks_a_full_pool_and_release_first_completes(plane):
    apps = client.AppsV1Api(plane.api())
    core = client.CoreV1Api(plane.api())
    plane.apply([deployment("full", 4, 1, 0)])  # 2 nodes x 2 GPUs: the pool is full
    until("4 running pods", lambda: len(running(plane, "full")) == 4, timeout=90)

    rollout(plane, "full")
    def surge_pod_stuck():
        pending = [p for p in pods(plane, "full") if p.status.phase == "Pending"]
        for pod in pending:
            for condition in pod.status.conditions or []:
                if condition.type == "PodScheduled" and condition.status == "False" and \
                        "cannot allocate all claims" in (condition.message or ""):
                    return pod
        return None
    stuck = until("the surge pod to be unschedulable", surge_pod_stuck, timeout=60)
    time.sleep(5)  # the rollout makes no progress: the old pods keep all four GPUs
    assert len(running(plane, "full")) == 4
    assert core.read_namespaced_pod(stuck.metadata.name, NS).status.phase == "Pending"

    apps.patch_namespaced_deployment("full", NS, {"spec": {"strategy": {
        "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}}})

    def done():
        d = apps.read_namespaced_deployment("full", NS)
        status = d.status
        return (status.updated_replicas == 4 and status.available_replicas == 4 and
                (status.replicas or 0) == 4 and d.status.observed_generation == d.metadata.generation)
    until("the release-first rollout to complete", done, timeout=180)
    assert len(running(plane, "full")) == 4


ADMIN_NS = "gpu-monitoring"


def test_admin_access_results_are_not_in_use_for_later_claims_as_draguard_predicts(plane):
    """A monitoring pod holds every GPU of one node with adminAccess; tenants then ask for all
    four GPUs. The scheduler's allocated-devices tracker skips admin-access results, so the
    tenants get them all: the sequence draguard's ClusterState plays must end the same way."""
    apps, resource = client.AppsV1Api(plane.api()), client.ResourceV1Api(plane.api())
    for name in ("full", "alloc"):
        if any(d.metadata.name == name for d in apps.list_namespaced_deployment(NS).items):
            apps.delete_namespaced_deployment(name, NS)
    until("every GPU released", lambda: not [c for c in resource.list_namespaced_resource_claim(NS).items
                                             if c.status.allocation], timeout=120)
    nodes, driver_objects = gpu_inventory(nodes=2, gpus=2)
    monitor_claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": "all-gpus", "namespace": ADMIN_NS},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                         "deviceClassName": "gpu.nvidia.com", "allocationMode": "All", "adminAccess": True}}]}}}
    node_name = nodes[0]["metadata"]["name"]
    plane.apply([
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": ADMIN_NS, "labels": {"resource.kubernetes.io/admin-access": "true"}}},
        monitor_claim,
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "monitor", "namespace": ADMIN_NS},
         "spec": {"nodeSelector": {"kubernetes.io/hostname": node_name}, "terminationGracePeriodSeconds": 1,
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": "all-gpus"}],
                  "containers": [{"name": "dcgm", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"claims": [{"name": "gpu"}]}}]}}])
    admin = until("the admin claim allocated",
                  lambda: resource.read_namespaced_resource_claim("all-gpus", ADMIN_NS).status.allocation)
    assert all(r.admin_access for r in admin.devices.results) and len(admin.devices.results) == 2

    plane.apply([deployment("tenants", 4, 0, 1)])
    until("4 tenant pods running", lambda: len(running(plane, "tenants")) == 4, timeout=90)
    tenant_devices = {(r.pool, r.device) for c in resource.list_namespaced_resource_claim(NS).items
                      if c.metadata.name.startswith("tenants-") and c.status.allocation
                      for r in c.status.allocation.devices.results}
    assert {(r.pool, r.device) for r in admin.devices.results} <= tenant_devices

    predicted = predict_admin_then_tenants(nodes, driver_objects, monitor_claim, node_name, tenants=4)
    assert predicted == len(tenant_devices) == 4


def predict_admin_then_tenants(nodes, driver_objects, monitor_claim, node_name, tenants: int) -> int:
    """draguard's ClusterState on the same objects: commit the admin claim on its node, then
    place tenant claims one at a time; returns how many tenants get a GPU."""
    source = Source("(control plane)", "")
    manifests = [Manifest(source, i, o) for i, o in enumerate(driver_objects + nodes)]
    state = ClusterState(Inventory.from_manifests(manifests, with_builtin_classes=False))
    monitor = claim_from(Manifest(source, 0, monitor_claim))
    outcome = state.attempt([monitor], next(n for n in state.inventory.nodes if n.name == node_name))
    assert outcome.allocated, outcome
    state.commit("monitor", outcome.results[0])
    template = claim_from(Manifest(source, 0, claim_template()))
    placed = 0
    for index in range(tenants):
        node, outcome = state.place([template])
        if node is None:
            break
        state.commit(f"tenant-{index}", outcome.results[0])
        placed += 1
    return placed
