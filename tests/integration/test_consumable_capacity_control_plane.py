"""Consumable capacity (DRAConsumableCapacity, KEP-5075) on the real control plane: the real
kube-scheduler shares one GPU that allows multiple allocations among claims, each consuming
what its request asks rounded by the device's request policy, and leaves the claim that no
longer fits unallocated. draguard's allocator, given the same slice and the claims in the
order the scheduler took them, gives each claim the same device, the same consumedCapacity
(as upstream prints it) and a shareID, and finds the last claim unallocatable too."""

from __future__ import annotations

import json
import time

import pytest
from kubernetes import client

from draguard.dra.inventory import Inventory
from draguard.dra.state import ClusterState
from draguard.dra.variants import variant_for
from draguard.dra.devices import claim_from
from draguard.model.manifest import Manifest
from draguard.sources.loader import Source
from support.cluster import FEATURE_GATES, FakeKubelet, until

pytestmark = pytest.mark.cluster
NS = "smoke"
NODE = "shared-gpu-node"
DRIVER = "shared.example.com"
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "shared-gpu"},
         "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}}
SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{NODE}-gpus"},
         "spec": {"driver": DRIVER, "nodeName": NODE, "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0", "allowMultipleAllocations": True, "capacity": {
                      "memory": {"value": "40Gi", "requestPolicy": {
                          "default": "8Gi", "validRange": {"min": "4Gi", "step": "4Gi"}}}}}]}}
#: (claim, memory asked or None for the policy's default): 10Gi -> 12Gi, 12.5Gi -> 16Gi, the
#: default 8Gi: 36Gi of 40Gi; then 5Gi rounds to 8Gi, which no longer fits
ASKED = [("share-a", "10Gi"), ("share-b", "12.5Gi"), ("share-c", None), ("share-d", "5Gi")]
SOURCE = Source("(test)", "")


def _claim(name: str, memory: str | None) -> dict:
    exactly = {"deviceClassName": CLASS["metadata"]["name"], "allocationMode": "ExactCount", "count": 1}
    if memory:
        exactly["capacity"] = {"requests": {"memory": memory}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": NS},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def _pod(claim: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": claim, "namespace": NS},
            "spec": {"terminationGracePeriodSeconds": 0, "nodeSelector": {"kubernetes.io/hostname": NODE},
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
                     "containers": [{"name": "server", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "gpu"}]}}]}}


def _raw(call, *args) -> dict:
    return json.loads(call(*args, _preload_content=False).data)


@pytest.fixture
def shared_gpu_node(plane):
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}}
    kubelet = FakeKubelet(plane, [node])
    kubelet.register_nodes()
    plane.apply([CLASS, SLICE])
    kubelet.start()
    core, resource = client.CoreV1Api(plane.api()), client.ResourceV1Api(plane.api())
    try:
        yield core, resource
    finally:
        kubelet.stopping.set()
        for name, _ in ASKED:
            core.delete_namespaced_pod(name, NS, grace_period_seconds=0, _preload_content=False)
        until("the pods gone", lambda: not {n for n, _ in ASKED} & {p.metadata.name for p in
                                                                   core.list_namespaced_pod(NS).items})
        for name, _ in ASKED:
            resource.delete_namespaced_resource_claim(name, NS, _preload_content=False)
        resource.delete_resource_slice(SLICE["metadata"]["name"])
        resource.delete_device_class(CLASS["metadata"]["name"])
        core.delete_node(NODE)


def _device(result: dict) -> tuple:
    return result["device"], result.get("consumedCapacity"), "shareID" in result


def test_the_real_scheduler_shares_a_gpu_as_draguard_does(plane, shared_gpu_node):
    core, resource = shared_gpu_node
    real = {}
    for name, memory in ASKED:  # one at a time: the order draguard replays
        plane.apply([_claim(name, memory), _pod(name)])
        if name == ASKED[-1][0]:
            time.sleep(5)  # the scheduler has tried it: it stays unallocated
            claim = _raw(resource.read_namespaced_resource_claim, name, NS)
            assert "allocation" not in claim.get("status", {}), claim["status"]
            pod = _raw(core.read_namespaced_pod, name, NS)
            assert not pod["spec"].get("nodeName")
            continue
        allocation = until(f"{name}'s allocation", lambda: _raw(resource.read_namespaced_resource_claim, name,
                                                                NS).get("status", {}).get("allocation"))
        real[name] = [_device(r) for r in allocation["devices"]["results"]]
    assert real == {"share-a": [("gpu-0", {"memory": "12Gi"}, True)], "share-b": [("gpu-0", {"memory": "16Gi"}, True)],
                    "share-c": [("gpu-0", {"memory": "8Gi"}, True)]}

    gates = {name: value == "true" for name, value in (gate.split("=") for gate in FEATURE_GATES.split(","))}
    features = variant_for("1.37", gates).features()
    state = ClusterState(Inventory.from_manifests([Manifest(SOURCE, i, o) for i, o in enumerate([CLASS, SLICE])]),
                         features)
    node = next(n for n in state.inventory.nodes if n.name == NODE)
    ours = {}
    for index, (name, memory) in enumerate(ASKED):
        outcome = state.attempt([claim_from(Manifest(SOURCE, index, _claim(name, memory)))], node)
        if name == ASKED[-1][0]:
            assert outcome.kind == "unschedulable"
            continue
        state.commit(f"{NS}/{name}", outcome.results[0])
        ours[name] = [_device(r.as_json()) for r in outcome.results[0].results]
    assert ours == real
