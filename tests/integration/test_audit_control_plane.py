"""`draguard audit` against the real control plane (issue: audit). Each fault is made for real
through the API (a node object deleted, a finalizer set by hand, a driver's slices withdrawn,
a pool published with a wrong resourceSliceCount, a status written by hand, the controller
manager stopped), then the live audit must report exactly that fault on the right object
and nothing else; a cluster running DRA workloads reports no finding.

Ages are judged with `--at` (a capture time ahead of the clock) instead of sleeping through
the thresholds; the last test stops kube-controller-manager, so it runs last in the module."""

from __future__ import annotations

import json
import textwrap
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest
import yaml
from kubernetes import client

from draguard.dra.generate import generate
from draguard.facts.gates import known_gates
from draguard.rules.cluster_examples import TEMPLATE
from draguard.rules.examples import COMPLIANT_DEPLOYMENT

from support.cluster import FakeKubelet, until

pytestmark = pytest.mark.cluster
NS = "audit"


@pytest.fixture(scope="module")
def audit_plane(tmp_path_factory):
    """A plane of its own: two GPU nodes of the fake driver, only the gpu.nvidia.com class,
    each node with a fake kubelet that can be stopped alone."""
    from .conftest import _started

    with _started(tmp_path_factory, "audit-control-plane") as plane:
        objects = generate({"nodes": [{"namePrefix": "gpu-node", "count": 2,
                                       "gpus": {"model": "H100-80GB", "count": 2, "mig": "none"}}]})
        nodes = [o for o in objects if o["kind"] == "Node"]
        kubelets = {n["metadata"]["name"]: FakeKubelet(plane, [n]) for n in nodes}
        for kubelet in kubelets.values():
            kubelet.register_nodes()
        plane.apply([o for o in objects if o["kind"] == "ResourceSlice"])
        plane.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
                      "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}},
                     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
        for kubelet in kubelets.values():
            kubelet.start()
        plane.kubelets = kubelets
        try:
            yield plane
        finally:
            for kubelet in kubelets.values():
                kubelet.stopping.set()


def later(seconds: int = 900) -> str:
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def audit(cli, plane, *args) -> dict:
    done = cli("audit", "--kubeconfig", plane.kubeconfig, "--no-config", "-f", "json", *args)
    assert done.code in (0, 1), done.err
    return done.json


def found(report) -> set:
    return {(f["rule"], f["object"]["kind"], f["object"]["name"]) for f in report["findings"]}


def _objects(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(textwrap.dedent(text)) if d]


def workload(name: str, replicas: int) -> list[dict]:
    """A compliant GPU Deployment (release-first rollout, PDB, preStop) and its claim template."""
    deployment = _objects(COMPLIANT_DEPLOYMENT.replace("inference", name).replace("mig-1g", f"{name}-gpu")
                          .replace("replicas: 2", f"replicas: {replicas}"))
    template = _objects(TEMPLATE.replace("one-gpu", f"{name}-gpu"))
    objects = [o for o in deployment if o["kind"] != "ResourceClaimTemplate"] + template
    for o in objects:
        o["metadata"]["namespace"] = NS
        o["metadata"].pop("uid", None)
    return objects


def hand_claim(name: str, **metadata) -> dict:
    """A lint-clean ResourceClaim made by hand (one whole GPU of at least 80 GiB)."""
    selector = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": NS, **metadata},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": selector}}]}}]}}}


def running_pods(plane, app: str) -> list:
    pods = client.CoreV1Api(plane.api()).list_namespaced_pod(NS, label_selector=f"app={app}").items
    return [p for p in pods if p.status.phase == "Running" and p.metadata.deletion_timestamp is None]


def delete_all(plane, objects: list[dict]) -> None:
    from kubernetes import dynamic

    dyn = dynamic.DynamicClient(plane.api())
    for o in objects:
        resource = dyn.resources.get(api_version=o["apiVersion"], kind=o["kind"])
        try:
            resource.delete(name=o["metadata"]["name"], namespace=o["metadata"].get("namespace"))
        except client.exceptions.ApiException as exc:
            if exc.status != 404:
                raise


def settled(plane, force: bool = False) -> None:
    """Nothing left of earlier tests: no pod, no claim in the namespace. `force`: pods still
    there are deleted at once (their 10 s preStop is no test's subject; 10 s a test)."""
    core, res = client.CoreV1Api(plane.api()), client.ResourceV1Api(plane.api())

    def empty() -> bool:
        pods = core.list_namespaced_pod(NS).items
        for pod in pods if force else ():
            try:
                core.delete_namespaced_pod(pod.metadata.name, NS, grace_period_seconds=0)
            except client.exceptions.ApiException as exc:
                if exc.status != 404:
                    raise
        return not pods and not res.list_namespaced_resource_claim(NS).items
    until("the namespace to be empty", empty, timeout=90)


@pytest.fixture
def healthy(audit_plane):
    objects = workload("infer", 2)
    audit_plane.apply(objects)
    until("2 running pods", lambda: len(running_pods(audit_plane, "infer")) == 2, timeout=90)
    yield objects
    delete_all(audit_plane, objects)
    settled(audit_plane, force=True)


def test_a_cluster_running_dra_workloads_has_no_finding(cli, audit_plane, healthy):
    report = audit(cli, audit_plane, "--at", later())
    assert report["findings"] == []
    assert report["summary"]["score"] == 100.0
    cluster = report["pools"]["cluster"]
    assert cluster["devices"] == {"total": 4, "allocated": 2, "free": 2, "tainted": 0}
    assert report["snapshot"]["serverVersion"].startswith("v1.37")


def test_a_deleted_node_leaves_stale_slices(cli, audit_plane):
    core = client.CoreV1Api(audit_plane.api())
    node = core.read_node("gpu-node-1")
    core.delete_node("gpu-node-1")
    try:
        report = audit(cli, audit_plane)
        assert found(report) == {("slice-node-missing", "ResourceSlice", "gpu-node-1-gpu.nvidia.com")}
    finally:
        body = client.ApiClient().sanitize_for_serialization(node)
        body["metadata"] = {"name": "gpu-node-1", "labels": body["metadata"].get("labels", {})}
        core.create_node(body)
        core.patch_node_status("gpu-node-1", {"status": {"conditions": [
            {"type": "Ready", "status": "True", "reason": "FakeKubelet", "message": "ready"}]}})


def test_a_driver_gone_leaves_its_pods_stuck_terminating(cli, audit_plane, healthy):
    """The driver's slices are withdrawn and the node's kubelet stops: the claim is allocated
    where nothing publishes, and a deleted pod cannot finish."""
    res, core = client.ResourceV1Api(audit_plane.api()), client.CoreV1Api(audit_plane.api())
    pod = next(p for p in running_pods(audit_plane, "infer"))
    node = pod.spec.node_name
    slices = [s for s in res.list_resource_slice().items if s.spec.node_name == node]
    kubelet = audit_plane.kubelets[node]
    kubelet.stopping.set()
    kubelet.join()
    saved = [client.ApiClient().sanitize_for_serialization(s) for s in slices]
    for s in slices:
        res.delete_resource_slice(s.metadata.name)
    core.delete_namespaced_pod(pod.metadata.name, NS, grace_period_seconds=5)
    try:
        claim = pod.status.resource_claim_statuses[0].resource_claim_name
        report = audit(cli, audit_plane, "--at", later())
        assert found(report) == {("pod-stuck-terminating", "Pod", pod.metadata.name),
                                 ("node-driver-slices-missing", "ResourceClaim", claim)}
        stuck = next(f for f in report["findings"] if f["rule"] == "pod-stuck-terminating")
        assert f"driver gpu.nvidia.com publishes nothing on {node}" in stuck["message"]
    finally:
        for s in saved:
            s["metadata"] = {"name": s["metadata"]["name"]}
            res.create_resource_slice(s)
        restarted = audit_plane.kubelets[node] = FakeKubelet(audit_plane, kubelet.nodes)
        restarted.start()


def test_a_foreign_finalizer_keeps_a_deleted_claim(cli, audit_plane):
    res = client.ResourceV1Api(audit_plane.api())
    audit_plane.apply([hand_claim("held", finalizers=["example.com/backup-hold"])])
    res.delete_namespaced_resource_claim("held", NS)
    try:
        report = audit(cli, audit_plane, "--at", later())
        assert found(report) == {("claim-stuck-deleting", "ResourceClaim", "held")}
        assert "finalizer(s) no DRA component removes: example.com/backup-hold" in report["findings"][0]["message"]
    finally:
        res.patch_namespaced_resource_claim("held", NS, {"metadata": {"finalizers": None}})


def test_a_claim_whose_finalizer_was_removed_by_hand_leaves_its_pod_running_without_it(cli, audit_plane, healthy):
    """The claim goes; the resourceclaim controller may create it again under the same name,
    unallocated: either way the pod runs on devices no claim holds for it."""
    res = client.ResourceV1Api(audit_plane.api())
    pod = running_pods(audit_plane, "infer")[0]
    claim = pod.status.resource_claim_statuses[0].resource_claim_name
    res.delete_namespaced_resource_claim(claim, NS)
    res.patch_namespaced_resource_claim(claim, NS, {"metadata": {"finalizers": None}})
    until("the claim to be gone", lambda: claim not in {c.metadata.name for c in
                                                         res.list_namespaced_resource_claim(NS).items})
    expected = {("pod-claim-gone", "Pod", pod.metadata.name)}
    try:
        until("the audit to see the pod without its claim", lambda: found(audit(cli, audit_plane)) == expected,
              timeout=20, every=2)
    except AssertionError:
        now = client.CoreV1Api(audit_plane.api()).read_namespaced_pod(pod.metadata.name, NS)
        raise AssertionError((found(audit(cli, audit_plane)), now.status.phase, now.metadata.deletion_timestamp,
                              now.status.resource_claim_statuses,
                              [c.metadata.name for c in res.list_namespaced_resource_claim(NS).items])) from None


def test_two_claims_allocated_one_device(cli, audit_plane, healthy):
    """A second claim's status written by hand with a device another claim holds (as a
    restored backup or an external allocator would)."""
    res = client.ResourceV1Api(audit_plane.api())
    pod = running_pods(audit_plane, "infer")[0]
    held = res.read_namespaced_resource_claim(pod.status.resource_claim_statuses[0].resource_claim_name, NS)
    result = held.status.allocation.devices.results[0]
    audit_plane.apply([hand_claim("copy")])
    try:
        res.patch_namespaced_resource_claim_status("copy", NS, {"status": {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": result.driver, "pool": result.pool, "device": result.device}]}}}})
        report = audit(cli, audit_plane)
        assert found(report) == {("device-double-allocated", "ResourceClaim", "copy"),
                                 ("device-double-allocated", "ResourceClaim", held.metadata.name),
                                 ("claim-allocated-unreserved", "ResourceClaim", "copy")}
    finally:
        res.delete_namespaced_resource_claim("copy", NS)


def test_a_pool_published_with_a_wrong_slice_count(cli, audit_plane):
    res = client.ResourceV1Api(audit_plane.api())
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "partial"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-node-0",
                     "pool": {"name": "partial-pool", "generation": 1, "resourceSliceCount": 2},
                     "devices": [{"name": "extra-0", "attributes": {"type": {"string": "gpu"}}}]}}
    res.create_resource_slice(body)
    try:
        report = audit(cli, audit_plane)
        assert found(report) == {("pool-incomplete", "ResourceSlice", "partial")}
    finally:
        res.delete_resource_slice("partial")


def test_a_republished_pool_without_an_allocated_device(cli, audit_plane, healthy):
    """The driver restarts and publishes its pool again (a new generation) without the device
    a running pod's claim holds."""
    res = client.ResourceV1Api(audit_plane.api())
    pod = running_pods(audit_plane, "infer")[0]
    claim = res.read_namespaced_resource_claim(pod.status.resource_claim_statuses[0].resource_claim_name, NS)
    device = claim.status.allocation.devices.results[0]
    current = next(s for s in res.list_resource_slice().items if s.spec.pool.name == device.pool
                   and any(d.name == device.device for d in s.spec.devices))
    saved = client.ApiClient().sanitize_for_serialization(current)
    republished = json.loads(json.dumps(saved))
    republished["spec"]["devices"] = [d for d in republished["spec"]["devices"] if d["name"] != device.device]
    republished["spec"]["pool"]["generation"] += 1
    res.replace_resource_slice(current.metadata.name, republished)
    try:
        report = audit(cli, audit_plane)
        assert found(report) == {("claim-device-missing", "ResourceClaim", claim.metadata.name)}
    finally:
        restored = res.read_resource_slice(current.metadata.name)
        saved["metadata"] = {"name": saved["metadata"]["name"], "resourceVersion": restored.metadata.resource_version}
        saved["spec"]["pool"]["generation"] = republished["spec"]["pool"]["generation"] + 1
        res.replace_resource_slice(current.metadata.name, saved)


def test_a_gpu_and_its_mig_devices_published_without_counters(cli, audit_plane):
    res = client.ResourceV1Api(audit_plane.api())
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "overlap"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-node-0",
                     "pool": {"name": "overlap-pool", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-9", "attributes": {"uuid": {"string": "GPU-9"}}},
                                 {"name": "gpu-9-mig-0", "attributes": {"uuid": {"string": "MIG-9-0"},
                                                                        "parentUUID": {"string": "GPU-9"}}}]}}
    res.create_resource_slice(body)
    try:
        report = audit(cli, audit_plane)
        assert found(report) == {("pool-mig-overlap-unguarded", "ResourceSlice", "overlap")}
    finally:
        res.delete_resource_slice("overlap")


def test_a_class_whose_selector_fails_at_runtime_and_a_quota_on_a_missing_class(cli, audit_plane):
    broken = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "mig-3g"},
              "spec": {"selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}}]}}
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpus", "namespace": NS},
             "spec": {"hard": {"gpu.example.com.deviceclass.resource.k8s.io/devices": "4"}}}
    audit_plane.apply([broken, quota])
    try:
        report = audit(cli, audit_plane)
        assert found(report) == {("device-class-matches-nothing", "DeviceClass", "mig-3g"),
                                 ("quota-device-class-unknown", "ResourceQuota", "gpus")}
    finally:
        delete_all(audit_plane, [broken, quota])


def test_a_pending_pod_is_explained_per_request(cli, audit_plane, healthy):
    """Two GPUs are taken by the healthy workload; a pod asking for three cannot fit."""
    big = workload("big", 1)
    template = next(o for o in big if o["kind"] == "ResourceClaimTemplate")
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 3
    audit_plane.apply(big)
    try:
        until("the big pod to be Pending", lambda: client.CoreV1Api(audit_plane.api()).list_namespaced_pod(
            NS, label_selector="app=big").items)
        time.sleep(2)
        report = audit(cli, audit_plane, "--at", later())
        pending = [f for f in report["findings"] if f["rule"] == "pod-pending-unallocatable"]
        # the template can never fit one node of two GPUs: the lint rule says so on the template
        assert {(r, k) for r, k, _ in found(report)} == {("pod-pending-unallocatable", "Pod"),
                                                         ("request-unsatisfiable", "ResourceClaimTemplate")}
        assert "request 'gpu' (3 devices)" in pending[0]["message"]
        assert "only 2 matching devices are free across all nodes, it needs 3" in pending[0]["message"]
    finally:
        delete_all(audit_plane, big)


def test_device_plugin_gpus_in_use(cli, audit_plane):
    core = client.CoreV1Api(audit_plane.api())
    core.patch_node_status("gpu-node-1", {"status": {"capacity": {"nvidia.com/gpu": "8"},
                                                      "allocatable": {"nvidia.com/gpu": "8"}}})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "legacy", "namespace": NS},
           "spec": {"nodeName": "gpu-node-1", "containers": [{"name": "c", "image": "vllm/vllm-openai",
                                                               "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    audit_plane.apply([pod])
    try:
        until("the legacy pod to run", lambda: core.read_namespaced_pod("legacy", NS).status.phase == "Running")
        report = audit(cli, audit_plane)
        rules = {r for r, _, _ in found(report)}
        assert ("node-legacy-gpu-in-use", "Node", "gpu-node-1") in found(report)
        assert "legacy-gpu-resource" in rules  # the bare pod is its own source: the lint rules judge it
        assert rules <= {"node-legacy-gpu-in-use", "legacy-gpu-resource", "teardown-prestop", "teardown-grace",
                         "legacy-scheduling-leftover"}
    finally:
        core.delete_namespaced_pod("legacy", NS, grace_period_seconds=0)
        core.patch_node_status("gpu-node-1", {"status": {"capacity": {"nvidia.com/gpu": None},
                                                          "allocatable": {"nvidia.com/gpu": None}}})
        settled(audit_plane)


def test_an_auditor_with_the_shipped_role_only_reads_and_a_partial_one_says_what_it_missed(cli, audit_plane,
                                                                                         tmp_path):
    token = audit_plane.users["auditor"]
    rbac = client.RbacAuthorizationV1Api(audit_plane.api())
    role = yaml.safe_load(open("deploy/audit/clusterrole.yaml"))
    rbac.create_cluster_role(role)
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "draguard-audit"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "draguard-audit"},
               "subjects": [{"kind": "User", "name": "auditor", "apiGroup": "rbac.authorization.k8s.io"}]}
    rbac.create_cluster_role_binding(binding)
    kubeconfig = audit_plane.kubeconfig_for("auditor", token, tmp_path)
    try:
        until("the binding to apply", lambda: cli("audit", "--kubeconfig", kubeconfig, "--no-config").code == 0)
        report = json.loads(cli("audit", "--kubeconfig", kubeconfig, "--no-config", "-f", "json").out)
        assert report["snapshot"]["unreadable"] == {}
        # the API server's own /metrics: the gates it runs with (the plane sets DRAConsumableCapacity;
        # DRADeviceCompatibilityGroups is alpha and off)
        gates = report["snapshot"]["featureGates"]
        assert gates["DRAConsumableCapacity"] is True and gates["DRADeviceCompatibilityGroups"] is False
        assert set(gates) == set(known_gates())
        rbac.patch_cluster_role("draguard-audit", {"rules": [r for r in role["rules"] if "nonResourceURLs" not in r]})
        until("/metrics to be forbidden", lambda: "feature gates" in cli(
            "audit", "--kubeconfig", kubeconfig, "--no-config").out)
        assert "not read: feature gates: GET /metrics: 403" in cli("audit", "--kubeconfig", kubeconfig, "--no-config").out
        rbac.patch_cluster_role("draguard-audit", {"rules": [r for r in role["rules"]
                                                             if r.get("apiGroups") != ["apps"]]})
        until("apps to be forbidden", lambda: "deployments" in cli(
            "audit", "--kubeconfig", kubeconfig, "--no-config").out)
        partial = cli("audit", "--kubeconfig", kubeconfig, "--no-config")
        assert partial.code == 0
        assert "not read: deployments.apps: forbidden (RBAC)" in partial.out
        rbac.patch_cluster_role("draguard-audit", {"rules": [r for r in role["rules"] if r.get("apiGroups") != [""]]})
        until("pods to be forbidden", lambda: cli("audit", "--kubeconfig", kubeconfig, "--no-config").code == 2)
        refused = cli("audit", "--kubeconfig", kubeconfig, "--no-config")
        assert refused.err.startswith("draguard: cannot read pods (forbidden (RBAC)") and "Traceback" not in refused.err
    finally:
        rbac.delete_cluster_role_binding("draguard-audit")
        rbac.delete_cluster_role("draguard-audit")


def test_save_dump_replays_to_the_same_audit(cli, audit_plane, healthy, tmp_path):
    at = later()
    live = audit(cli, audit_plane, "--at", at, "--save-dump", tmp_path / "dump")
    replay = cli("audit", "--from", tmp_path / "dump", "--at", at, "--no-config", "-f", "json").json
    assert replay["pools"] == live["pools"] and replay["findings"] == live["findings"]
    assert replay["summary"] == live["summary"]
    assert sorted(p.name for p in (tmp_path / "dump").iterdir())[0:2] == ["daemonsets.apps.json", "deployments.apps.json"]


def test_no_cluster_and_bad_credentials_are_one_line_errors(cli, audit_plane, tmp_path):
    nowhere = audit_plane.kubeconfig_for("admin", audit_plane.token, tmp_path, server="https://127.0.0.1:1")
    done = cli("audit", "--kubeconfig", nowhere, "--no-config")
    assert done.code == 2 and done.err.startswith("draguard: cannot reach the cluster at https://127.0.0.1:1")
    expired = audit_plane.kubeconfig_for("admin", "not-a-token", tmp_path)
    done = cli("audit", "--kubeconfig", expired, "--no-config")
    assert done.code == 2 and "rejected the credentials" in done.err and len(done.err.splitlines()) == 1
    done = cli("audit", "--kubeconfig", tmp_path / "missing", "--no-config")
    assert done.code == 2 and "no kubeconfig at" in done.err


def test_a_generated_claim_without_its_pod(cli, audit_plane):
    """A claim marked as generated for a pod (as restoring a namespace backup without its pods
    leaves them) has no owner: the garbage collector never deletes it."""
    res = client.ResourceV1Api(audit_plane.api())
    audit_plane.apply([hand_claim("orphan", annotations={"resource.kubernetes.io/pod-claim-name": "gpu"})])
    try:
        time.sleep(2)  # the controllers get their chance to act on it first
        report = audit(cli, audit_plane)
        assert found(report) == {("claim-generated-orphan", "ResourceClaim", "orphan")}
    finally:
        res.delete_namespaced_resource_claim("orphan", NS)


def test_watch_prints_findings_as_they_appear_and_resolve(audit_plane):
    """`--watch` follows the watch streams: a fault made after it started is printed with `+`,
    and with `-` once it is repaired, without another LIST."""
    import queue
    import subprocess
    import sys
    import threading

    process = subprocess.Popen([sys.executable, "-m", "draguard", "audit", "--kubeconfig", str(audit_plane.kubeconfig),
                                "--no-config", "--watch", "--watch-for", "60"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()

    def next_line(containing: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if containing in line:
                return line
        raise AssertionError(f"no line with {containing!r} from --watch; stderr: {process.stderr.read()[:500]}")

    res = client.ResourceV1Api(audit_plane.api())
    try:
        assert next_line("watching").startswith("watching draguard (0 finding(s) now)")
        res.create_resource_slice({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                   "metadata": {"name": "watched"},
                                   "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-node-0",
                                            "pool": {"name": "watched", "generation": 1, "resourceSliceCount": 2},
                                            "devices": []}})
        appeared = next_line("[pool-incomplete]")
        assert appeared.startswith("+ ") and "ResourceSlice watched" in appeared
        res.delete_resource_slice("watched")
        resolved = next_line("[pool-incomplete]")
        assert resolved.startswith("- ")
    finally:
        process.kill()
        process.wait()


def test_zz_a_stopped_controller_manager_leaves_reservations_of_gone_pods(cli, audit_plane):
    """Runs last: kube-controller-manager is stopped for good, so the stale reservation the
    resourceclaim controller would remove at once stays."""
    name, process = next((n, p) for n, p in audit_plane.processes if n == "kube-controller-manager")
    process.terminate()
    process.wait(timeout=10)
    res = client.ResourceV1Api(audit_plane.api())
    audit_plane.apply([hand_claim("ghostly")])
    gone = str(uuid.uuid4())
    res.patch_namespaced_resource_claim_status("ghostly", NS, {"status": {
        "allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-node-0",
                                                 "device": "gpu-1"}]}},
        "reservedFor": [{"resource": "pods", "name": "ghost", "uid": gone}]}})
    report = audit(cli, audit_plane)
    assert found(report) == {("claim-reserved-for-gone-pod", "ResourceClaim", "ghostly")}
    assert f"pod ghost (uid {gone}) does not exist" in report["findings"][0]["message"]
