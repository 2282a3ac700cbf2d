"""The migration of shared GPUs proved on the real control plane (issue: real-world recall):
a Deployment on the device plugin's time-sliced nvidia.com/gpu replicas, with the plugin's
config beside it (kubeflow/trainer's hack/gpu-time-slicing.yml, tests/support/data/corpus/
SOURCES.tsv), is fixed with `--unsafe-fixes` into one ResourceClaim with NVIDIA's GpuConfig
that every pod references; created on the real kube-apiserver, the real scheduler allocates
that one claim on a fake-driver node of ONE GPU and places every replica there, the claim
reserved for each of them (upstream: a claim referenced by resourceClaimName is shared by
every pod that names it, up to ResourceClaimReservedForMaxSize = 256 consumers). KAI
Scheduler's own gpu-fraction pod (NVIDIA/KAI-Scheduler docs/gpu-sharing/gpu-sharing.yaml,
tests/support/data/precision/vendors/SOURCES.tsv), fixed the same way, is allocated its claim
by the real scheduler too."""

from __future__ import annotations

import pytest
import yaml
from kubernetes import client

from draguard.core.config import Config
from draguard.fix.run import Choice, FileText, fix_texts
from support.cluster import extra_gpu_node, until
from support.paths import DATA, corpus

pytestmark = pytest.mark.cluster

NAMESPACE = "shared-gpu-migration"
PLUGIN_CONFIG = corpus() / "legacy" / "kubeflow-trainer__hack__gpu-time-slicing.yml"
KAI_POD = DATA / "precision" / "vendors" / "kai-gpu-sharing.yaml"
REPLICAS = 3
#: GPU Feature Discovery's product label on nodes whose GPUs the plugin time-slices
TIME_SLICED = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: notebook, namespace: {NAMESPACE}}}
spec:
  replicas: {REPLICAS}
  strategy: {{type: Recreate}}
  selector: {{matchLabels: {{app: nb}}}}
  template:
    metadata: {{labels: {{app: nb}}}}
    spec:
      nodeSelector: {{nvidia.com/gpu.product: A100-SXM4-40GB-SHARED}}
      containers:
      - name: lab
        image: jupyter/base-notebook
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


def test_time_sliced_replicas_fixed_into_one_claim_all_run_on_one_gpu(plane):
    files = [FileText("plugin.yaml", PLUGIN_CONFIG.read_text()), FileText("deploy.yaml", TIME_SLICED)]
    fix_texts(files, Config(), Choice(unsafe=True))
    documents = [d for d in yaml.safe_load_all(files[1].text) if d]  # the other rules' fixes too (a PDB)
    [claim] = [d for d in documents if d["kind"] == "ResourceClaim"]
    assert "ResourceClaimTemplate" not in {d["kind"] for d in documents}
    claim_name = claim["metadata"]["name"]
    parameters = claim["spec"]["devices"]["config"][0]["opaque"]["parameters"]
    assert (parameters["kind"], parameters["sharing"]) == ("GpuConfig", {"strategy": "TimeSlicing"})
    plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
    core, resource = client.CoreV1Api(plane.api()), client.ResourceV1Api(plane.api())
    apps = client.AppsV1Api(plane.api())
    # the node GFD labels once the plugin no longer shares its GPU: the fixed selector's
    with extra_gpu_node(plane, {"model": "A100-40GB", "count": 1, "mig": "none"}, "shared",
                        labels={"nvidia.com/gpu.product": "A100-SXM4-40GB"}) as node:
        try:
            plane.apply(documents)
            running = until(f"{REPLICAS} replicas running on {node}", lambda: _running_on(core, node), timeout=90)
            status = resource.read_namespaced_resource_claim(claim_name, NAMESPACE).status
            [device] = status.allocation.devices.results  # one GPU for every pod
            assert (device.driver, device.request) == ("gpu.nvidia.com", "gpu")
            assert status.allocation.devices.config[0].opaque.parameters["sharing"] == {"strategy": "TimeSlicing"}
            assert {r.name for r in status.reserved_for} == {p.metadata.name for p in running}
        finally:
            apps.delete_collection_namespaced_deployment(NAMESPACE)
            apps.delete_collection_namespaced_replica_set(NAMESPACE)
            core.delete_collection_namespaced_pod(NAMESPACE, grace_period_seconds=0)
            until("the pods to go", lambda: not core.list_namespaced_pod(NAMESPACE).items)
            resource.delete_collection_namespaced_resource_claim(NAMESPACE)


def _running_on(core, node: str) -> list:
    """Every replica, once each runs on `node`; else nothing."""
    pods = core.list_namespaced_pod(NAMESPACE).items
    running = [p for p in pods if p.status.phase == "Running" and p.spec.node_name == node]
    return running if len(running) == REPLICAS == len(pods) else []


def test_kai_s_gpu_fraction_pod_fixed_into_a_time_sliced_claim_is_scheduled(plane):
    files = [FileText("pod.yaml", KAI_POD.read_text())]
    fix_texts(files, Config(), Choice(unsafe=True))
    documents = [d for d in yaml.safe_load_all(files[0].text) if d]
    [pod] = [d for d in documents if d["kind"] == "Pod"]
    [claim] = [d for d in documents if d["kind"] == "ResourceClaim"]
    assert "gpu-fraction" not in (pod["metadata"].get("annotations") or {})
    # the fix leaves schedulerName kai-scheduler (and says so); the harness runs no KAI: the
    # default scheduler, which allocates DRA claims, places it
    assert pod["spec"].pop("schedulerName") == "kai-scheduler"
    namespace = "kai-migration"
    plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    core, resource = client.CoreV1Api(plane.api()), client.ResourceV1Api(plane.api())
    # a GPU of its own: the plane's other GPUs may be held by the claims of tests before it
    with extra_gpu_node(plane, {"model": "A100-40GB", "count": 1, "mig": "none"}, "kai") as node:
        pod["spec"]["nodeSelector"] = {**(pod["spec"].get("nodeSelector") or {}), "kubernetes.io/hostname": node}
        try:
            plane.apply([claim, pod], namespace=namespace)
            [running] = until("the migrated KAI pod running", lambda: [
                p for p in core.list_namespaced_pod(namespace).items if p.status.phase == "Running"], timeout=90)
            status = resource.read_namespaced_resource_claim(claim["metadata"]["name"], namespace).status
            [device] = status.allocation.devices.results
            assert (device.driver, device.pool) == ("gpu.nvidia.com", node)
            assert status.allocation.devices.config[0].opaque.parameters["sharing"] == {"strategy": "TimeSlicing"}
            assert [r.name for r in status.reserved_for] == [running.metadata.name]
        finally:
            core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
            until("the pod to go", lambda: not core.list_namespaced_pod(namespace).items)
            resource.delete_collection_namespaced_resource_claim(namespace)
