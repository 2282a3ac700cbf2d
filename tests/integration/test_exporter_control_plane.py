"""`draguard exporter` against the real control plane (issue #45): claims are created, allocated
by the real scheduler from the fake driver's ResourceSlices, leaked (an allocation written by
hand that nobody reserves; a deleted claim held by a foreign finalizer) and deleted, and the
served /metrics must follow each change within a bounded delay (polled, never slept on).

The exporter runs as a process of its own, as in a pod, with `claim-stuck-deleting`'s
threshold lowered to 2 s in its config so that the stuck deletion is reported within the
test's time (it is found by the 10 s tick that judges time-dependent claims again)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from kubernetes import client
from prometheus_client.parser import text_string_to_metric_families

from draguard.dra.generate import generate

from support.cluster import FakeKubelet, free_port, until

pytestmark = pytest.mark.cluster
NS = "exporter"
DELAY = 5.0  # seconds an event may take to show in /metrics (the issue asks for 1 s; a loaded CI machine)


@pytest.fixture(scope="module")
def exporter_plane(tmp_path_factory):
    """Two GPU nodes of the fake driver (two whole GPUs each) with the fake kubelet."""
    from .conftest import _started

    with _started(tmp_path_factory, "exporter-control-plane") as plane:
        objects = generate({"nodes": [{"namePrefix": "gpu-node", "count": 2, "labels": {"karpenter.sh/nodepool": "h100"},
                                       "gpus": {"model": "H100-80GB", "count": 2, "mig": "none"}}]})
        kubelet = FakeKubelet(plane, [o for o in objects if o["kind"] == "Node"])
        kubelet.register_nodes()
        plane.apply([o for o in objects if o["kind"] == "ResourceSlice"])
        plane.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
                      "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}},
                     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
        kubelet.start()
        try:
            yield plane
        finally:
            kubelet.stopping.set()


@pytest.fixture(scope="module")
def exporter(exporter_plane, tmp_path_factory):
    folder = tmp_path_factory.mktemp("exporter")
    config = folder / ".draguard.yaml"
    config.write_text("rules:\n  claim-stuck-deleting: {after: 2}\n")
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "draguard", "exporter", "--kubeconfig",
                                str(exporter_plane.kubeconfig), "--config", str(config), "--listen",
                                f"127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the exporter exited: {process.stderr.read()[-2000:]}")
        try:
            return urllib.request.urlopen(f"{base}/readyz", timeout=2).status == 200
        except (urllib.error.URLError, ConnectionError):
            return False

    until("the exporter to be ready", ready, timeout=60, every=0.2)
    yield base
    process.kill()
    process.wait()


def scrape(base: str) -> dict:
    text = urllib.request.urlopen(f"{base}/metrics", timeout=5).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def total(metrics: dict, name: str, **labels) -> float:
    return sum(v for (n, ls), v in metrics.items() if n == name and set(labels.items()) <= set(ls))


def follows(base: str, what: str, check, timeout: float = DELAY) -> float:
    """Poll /metrics until `check(metrics)`; the seconds it took (AssertionError past `timeout`)."""
    start = time.monotonic()
    while True:
        metrics = scrape(base)
        if check(metrics):
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise AssertionError(f"/metrics did not show {what} within {timeout} s")
        time.sleep(0.1)


def claim(name: str, **metadata) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": NS, **metadata},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}


def pod(name: str, claim_name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}],
                     "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "gpu"}]}}]}}


def test_the_served_metrics_follow_claims_through_their_life(exporter_plane, exporter):
    base = exporter
    core, res = client.CoreV1Api(exporter_plane.api()), client.ResourceV1Api(exporter_plane.api())
    start = scrape(base)
    assert total(start, "draguard_node_devices", node_pool="h100") == 4
    assert total(start, "draguard_node_devices", state="allocated") == 0
    delays = []

    exporter_plane.apply([claim("train")])
    delays.append(follows(base, "a pending claim", lambda m: total(
        m, "draguard_claims", namespace=NS, phase="pending") == 1))

    exporter_plane.apply([pod("trainer", "train")])  # the real scheduler allocates and reserves it
    until("the pod to run", lambda: core.read_namespaced_pod("trainer", NS).status.phase == "Running", timeout=60)
    delays.append(follows(base, "the claim allocated and reserved", lambda m: (
        total(m, "draguard_claims", namespace=NS, phase="reserved") == 1
        and total(m, "draguard_node_devices", state="allocated") == 1
        and total(m, "draguard_allocated_devices", namespace=NS, device_class="gpu.nvidia.com") == 1)))

    # a leak: an allocation written by hand that no pod reserves (the controller leaves it)
    exporter_plane.apply([claim("leaked")])
    free = next(d for d in ("gpu-0", "gpu-1") if d not in {
        r.device for c in res.list_namespaced_resource_claim(NS).items if c.status and c.status.allocation
        for r in c.status.allocation.devices.results})
    res.patch_namespaced_resource_claim_status("leaked", NS, {"status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-node-1", "device": free}]}}}})
    delays.append(follows(base, "the leaked allocation", lambda m: (
        total(m, "draguard_findings", rule="claim-allocated-unreserved") == 1
        and total(m, "draguard_claims", namespace=NS, phase="allocated-unreserved") == 1
        and total(m, "draguard_node_devices", node="gpu-node-1", state="allocated") >= 1)))

    # a claim deleted but held by a foreign finalizer: deleting at once, stuck once past 2 s
    exporter_plane.apply([claim("held", finalizers=["example.com/backup-hold"])])
    follows(base, "the held claim", lambda m: total(m, "draguard_claims", namespace=NS, phase="pending") == 1)
    res.delete_namespaced_resource_claim("held", NS)
    delays.append(follows(base, "the deleting claim", lambda m: total(
        m, "draguard_claims", namespace=NS, phase="deleting") == 1))
    follows(base, "the stuck deletion", lambda m: total(m, "draguard_findings", rule="claim-stuck-deleting") == 1,
            timeout=20)

    # everything deleted: the metrics go back to where they started
    res.patch_namespaced_resource_claim("held", NS, {"metadata": {"finalizers": None}})
    res.delete_namespaced_resource_claim("leaked", NS)
    core.delete_namespaced_pod("trainer", NS, grace_period_seconds=0)
    until("the pod to go", lambda: not core.list_namespaced_pod(NS).items, timeout=60)
    res.delete_namespaced_resource_claim("train", NS)
    delays.append(follows(base, "every claim gone", lambda m: (
        total(m, "draguard_claims", namespace=NS) == 0
        and total(m, "draguard_node_devices", state="allocated") == 0
        and total(m, "draguard_findings") == 0), timeout=30))
    final = scrape(base)
    assert total(final, "draguard_exporter_events_total", resource="resourceclaims.resource.k8s.io") >= 8
    assert total(final, "draguard_exporter_watch_restarts_total") == 0
    print(f"event-to-metrics delays (s): {[round(d, 2) for d in delays]}")
