"""The bundled example on the real control plane: the Deployment of examples/dra-inference,
with its draguard-teardown native sidecar, runs on a MIG node of the fake driver; one pod is
deleted and goes through the termination timeline draguard predicts (the kubelet's order:
every preStop at once, the sidecar's verify returning once the server stopped, the sidecar's
SIGTERM after the server's). Meanwhile its generated claim stays allocated and reserved for
it, so the replacement pod (maxSurge 0, a full pool) only gets the slice after the pod is
gone, from the real resourceclaim controller and scheduler."""

from __future__ import annotations

import time

import pytest
import yaml
from kubernetes import client

from draguard.model.teardown import pod_gone_after
from support.cluster import extra_gpu_node, until
from support.paths import EXAMPLES

pytestmark = pytest.mark.cluster
NS = "inference"  # the example's namespace


@pytest.fixture
def mig_node(plane):
    """One H100 with two 3g.40gb MIG devices: the example's two replicas fill it."""
    gpus = {"model": "H100-80GB", "count": 1, "mig": "static", "layout": ["3g.40gb", "3g.40gb"]}
    with extra_gpu_node(plane, gpus, "mig-node") as name:
        yield name
        # the harness runs no namespace controller: remove what the example created, one by one
        core, apps = client.CoreV1Api(plane.api()), client.AppsV1Api(plane.api())
        apps.delete_collection_namespaced_deployment(NS)
        apps.delete_collection_namespaced_replica_set(NS)
        core.delete_collection_namespaced_pod(NS, grace_period_seconds=0)
        until("the example's pods to go", lambda: not core.list_namespaced_pod(NS).items)


def test_example_pods_release_their_mig_slice_on_the_predicted_timeline(plane, mig_node):
    documents = [d for d in yaml.safe_load_all((EXAMPLES / "dra-inference" / "inference.yaml").read_text()) if d]
    plane.apply(documents)
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    predicted = pod_gone_after(spec["terminationGracePeriodSeconds"], spec)
    assert predicted == 5.0  # the server's 5 s preStop; the sidecar's verify returns with it

    core, resource = client.CoreV1Api(plane.api()), client.ResourceV1Api(plane.api())

    def running():
        return [p for p in core.list_namespaced_pod(NS, label_selector="app=llm-server").items
                if p.status.phase == "Running" and p.metadata.deletion_timestamp is None]
    first = until("both replicas running", lambda: (pods := running()) and len(pods) == 2 and pods)
    assert {p.spec.node_name for p in first} == {mig_node}

    victim = first[0]
    claim_name = victim.status.resource_claim_statuses[0].resource_claim_name
    deleted_at = time.time()
    core.delete_namespaced_pod(victim.metadata.name, NS)

    # while it terminates, its claim stays allocated and reserved for it
    time.sleep(2)
    claim = resource.read_namespaced_resource_claim(claim_name, NS)
    assert claim.status.allocation is not None
    assert [r.name for r in claim.status.reserved_for] == [victim.metadata.name]
    assert len(running()) == 1  # the replacement waits: the pool is full

    def victim_gone():
        names = {p.metadata.name for p in core.list_namespaced_pod(NS).items}
        return victim.metadata.name not in names and time.time()
    gone_at = until("the deleted pod to go", victim_gone) - deleted_at
    # the deletion timestamp has whole seconds, and the fake kubelet looks every 0.3 s
    assert predicted - 1.5 <= gone_at <= predicted + 5, gone_at

    replacement = until("the replacement running", lambda: (pods := running()) and len(pods) == 2 and
                        [p for p in pods if p.metadata.name != first[1].metadata.name])[0]
    new_claim = resource.read_namespaced_resource_claim(
        replacement.status.resource_claim_statuses[0].resource_claim_name, NS)
    old_device = claim.status.allocation.devices.results[0].device
    assert new_claim.status.allocation.devices.results[0].device == old_device  # the slice the victim freed
