"""Extended resources backed by DRA (KEP-5004) on the real control plane: a pod that asks
for `example.com/gpu` on nodes without it in their allocatable gets a claim the real
scheduler makes, and that claim's requests are the ones dra.extended derives from the pod
(init containers reusing a sidecar's devices, the implicit class name), and it is allocated
from the fake driver's slices."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from draguard.dra.extended import is_extended_resource, special_claim_requests
from draguard.model.extended_resources import ClassRef, resolver
from support.cluster import extra_gpu_node, until

pytestmark = pytest.mark.cluster
NS = "smoke"
RESOURCE = "example.com/gpu"
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "extended-gpu"},
         "spec": {"extendedResourceName": RESOURCE,
                  "selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}


def _container(name: str, asks: dict, restart: str | None = None) -> dict:
    body = {"name": name, "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": asks, "limits": asks}}
    if restart:
        body["restartPolicy"] = restart
    return body


PODS = {
    "sidecar-and-init": {
        "initContainers": [_container("setup", {RESOURCE: "1"}), _container("proxy", {RESOURCE: "1"}, "Always")],
        "containers": [_container("server", {RESOURCE: "1"})]},
    "implicit-name": {
        "containers": [_container("server", {"deviceclass.resource.kubernetes.io/gpu.nvidia.com": "2"})]},
}


def _pod(name: str, spec: dict, node: str) -> dict:
    """The pod, kept to `node` (a node of its own: earlier tests may hold the shared nodes' GPUs)."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"terminationGracePeriodSeconds": 0, "affinity": affinity, **spec}}


def _raw(call, *args) -> dict:
    return json.loads(call(*args, _preload_content=False).data)


@pytest.fixture(scope="module")
def gpu_node(plane):
    """The DeviceClass that serves RESOURCE, and a node with two GPUs of its own."""
    plane.apply([CLASS])
    with extra_gpu_node(plane, {"model": "H100-80GB", "count": 2, "mig": "none"}, "extended") as node:
        yield node
    client.ResourceV1Api(plane.api()).delete_device_class(CLASS["metadata"]["name"])


@pytest.mark.parametrize("name", sorted(PODS))
def test_the_schedulers_claim_is_the_one_draguard_derives(plane, gpu_node, name):
    core, resource = client.CoreV1Api(plane.api()), client.ResourceV1Api(plane.api())
    classes = [ClassRef(c["metadata"]["name"], c["spec"].get("extendedResourceName"))
               for c in _raw(resource.list_device_class)["items"]]
    spec = PODS[name]
    plane.apply([_pod(name, spec, gpu_node)])
    try:
        status = until("the extended resource claim", lambda: (_raw(core.read_namespaced_pod, name, NS)["status"]
                                                              .get("extendedResourceClaimStatus")))
        claim = _raw(resource.read_namespaced_resource_claim, status["resourceClaimName"], NS)
        asked = {r for c in spec.get("initContainers", []) + spec["containers"] for r in c["resources"]["requests"]
                 if is_extended_resource(r)}
        assert claim["spec"]["devices"]["requests"] == special_claim_requests(spec, asked, resolver(classes))
        allocated = until("its allocation", lambda: _raw(resource.read_namespaced_resource_claim,
                                                         status["resourceClaimName"], NS)["status"].get("allocation"))
        assert len(allocated["devices"]["results"]) == sum(
            r["exactly"]["count"] for r in claim["spec"]["devices"]["requests"])
    finally:
        core.delete_namespaced_pod(name, NS, grace_period_seconds=0)
        until("the pod gone", lambda: name not in {p.metadata.name for p in core.list_namespaced_pod(NS).items})
