"""What `draguard fix --unsafe-fixes` makes of the corpus, judged by the real control
plane: every object of every fixed file that the apiserver knows is accepted by a
server-side dry-run create (unless it already refused the unfixed object), and a sample,
really created, gets its claims allocated by the real scheduler on the fake NVIDIA inventory
and runs."""

from __future__ import annotations

import json

import pytest
import yaml
from kubernetes import client, dynamic
from kubernetes.dynamic.exceptions import ApiException, ResourceNotFoundError, ResourceNotUniqueError

from draguard.core.config import Config
from draguard.fix.files import read
from draguard.fix.run import Choice, FileText, fix_texts
from support.cluster import extra_gpu_node, until
from support.paths import corpus

pytestmark = pytest.mark.cluster
FIXABLE = sorted(p for folder in ("legacy", "dra") for p in (corpus() / folder).glob("*") if p.suffix in (".yaml", ".yml"))
SAMPLE = corpus() / "legacy" / "container-engine-accelerators__demo__serving__tensorflow-serving.yaml"


def fixed_text(path) -> str:
    file = FileText(path.name, read(str(path), path.name).text)
    fix_texts([file], Config(), Choice(unsafe=True))
    return file.text


def objects(text: str) -> list[dict]:
    try:
        return [json.loads(json.dumps(d, default=str)) for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    except yaml.YAMLError:
        return []


class DryRun:
    def __init__(self, plane):
        self.dyn = dynamic.DynamicClient(plane.api())
        self.core = client.CoreV1Api(plane.api())
        self.namespaces: set[str] = set()

    def judge(self, obj: dict) -> str | None:
        """None when the server accepts the object, else its message; 'unknown kind' for kinds
        this apiserver does not serve (custom resources)."""
        if not obj.get("apiVersion") or not obj.get("kind"):
            return "unknown kind"  # a patch or fragment: not an object to create
        try:
            resource = self.dyn.resources.get(api_version=obj.get("apiVersion"), kind=obj.get("kind"))
        except (ResourceNotFoundError, ResourceNotUniqueError, ValueError):
            return "unknown kind"
        namespace = None
        if resource.namespaced:
            namespace = (obj.get("metadata") or {}).get("namespace") or "default"
            if namespace not in self.namespaces:
                try:
                    self.core.create_namespace({"metadata": {"name": namespace}})
                except ApiException as exc:
                    if exc.status != 409:
                        return f"namespace {namespace}: {exc.reason}"
                self.namespaces.add(namespace)
        try:
            resource.create(body=obj, namespace=namespace, dry_run="All")
        except ApiException as exc:
            if exc.status == 409:
                return None  # it exists (a namespace made for an earlier object): validated before the store said so
            return json.loads(exc.body or "{}").get("message", str(exc.status))
        return None


def _identity(obj: dict) -> tuple:
    meta = obj.get("metadata") or {}
    return obj.get("kind"), meta.get("namespace"), meta.get("name")


def test_the_apiserver_accepts_the_fixed_corpus(bare_plane):
    """The legacy corpus migrated to DRA, and the DRA corpus moved to resource.k8s.io/v1 (and
    the rest of its fixes)."""
    judge, refused, judged, unknown = DryRun(bare_plane), [], 0, 0
    for path in FIXABLE:
        before = {_identity(o): judge.judge(o) for o in objects(path.read_text())}
        for obj in objects(fixed_text(path)):
            verdict = judge.judge(obj)
            if verdict == "unknown kind":
                unknown += 1
                continue
            judged += 1
            if verdict is not None and before.get(_identity(obj)) is None:
                refused.append((path.name, obj.get("kind"), verdict[:300]))
    print(f"\n{judged} fixed objects judged, {unknown} of kinds this apiserver does not serve")
    assert judged >= 250 and refused == []


def test_a_fixed_sample_is_scheduled_with_its_claims_allocated(plane):
    # the file's HorizontalPodAutoscaler is autoscaling/v2beta1, which Kubernetes removed
    # (the fix does not touch it): the workload and what the fix added are created
    documents = [d for d in objects(fixed_text(SAMPLE))
                 if d["kind"] in ("Deployment", "ResourceClaimTemplate", "PodDisruptionBudget", "Service")]
    kinds = [d["kind"] for d in documents]
    assert "ResourceClaimTemplate" in kinds and "Deployment" in kinds
    namespace = "fixed-sample"
    plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    with extra_gpu_node(plane, {"model": "H100-80GB", "count": 1, "mig": "none"}, "fix-node"):
        plane.apply(documents, namespace=namespace)
        core, resource = client.CoreV1Api(plane.api()), client.ResourceV1Api(plane.api())
        running = until("the fixed sample running", lambda: [
            p for p in core.list_namespaced_pod(namespace).items if p.status.phase == "Running"], timeout=90)
        claim = running[0].status.resource_claim_statuses[0].resource_claim_name
        allocation = resource.read_namespaced_resource_claim(claim, namespace).status.allocation
        assert allocation.devices.results[0].driver == "gpu.nvidia.com"
        apps = client.AppsV1Api(plane.api())
        apps.delete_collection_namespaced_deployment(namespace)
        apps.delete_collection_namespaced_replica_set(namespace)
        core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
        until("the sample's pods to go", lambda: not core.list_namespaced_pod(namespace).items)


def test_a_migrated_init_container_shares_the_app_s_device_and_fits_where_the_legacy_pod_did(plane):
    """A pod whose init container and app container each asked for nvidia.com/gpu: 1 holds
    one GPU under the device plugin (the init container's is handed on). Migrated, it
    still asks for one device, and the real scheduler places it on a node with one GPU."""
    namespace = "fixed-init"
    plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    with extra_gpu_node(plane, {"model": "H100-80GB", "count": 1, "mig": "none"}, "init-node") as node:
        legacy = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "warm-then-serve"},
                  "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                           "initContainers": [{"name": "warm", "image": "busybox",
                                               "resources": {"limits": {"nvidia.com/gpu": 1}}}],
                           "containers": [{"name": "serve", "image": "busybox",
                                           "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
        file = FileText("pod.yaml", yaml.safe_dump(legacy))
        fix_texts([file], Config(), Choice(unsafe=True))
        documents = objects(file.text)
        assert [d["kind"] for d in documents] == ["Pod", "ResourceClaimTemplate"]
        plane.apply(documents, namespace=namespace)
        core = client.CoreV1Api(plane.api())
        placed = until("the migrated pod scheduled", lambda: [
            p for p in core.list_namespaced_pod(namespace).items if p.spec.node_name == node], timeout=90)
        assert len(placed[0].status.resource_claim_statuses) == 1
        core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
        until("the pod to go", lambda: not core.list_namespaced_pod(namespace).items)
