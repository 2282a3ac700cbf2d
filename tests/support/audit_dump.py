"""A generated cluster as `draguard audit --save-dump` writes it: H100 nodes of the fake
driver, whole GPUs or static MIG, and Deployments of pods that each hold one device (a GPU,
or a 1g.10gb MIG device) through a claim generated from their template, allocated and
reserved as the scheduler leaves them. Healthy by construction: an audit of it reports no
fault. Used by the audit benchmark (5,000 nodes x 8 GPUs, 40,000 pods) and the report tests
(a few nodes)."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from pathlib import Path

from draguard.cluster.dump import write_bundle
from draguard.cluster.snapshot import RESOURCES, Snapshot
from draguard.dra.generate import generate
from draguard.facts.shipped import device_classes

CAPTURED = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
LAYOUT = ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
PROFILE = "1g.10gb"
_CREATED = "2026-12-01T10:00:00Z"


def _uid(*parts) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, "/".join(map(str, parts))))


def _meta(name: str, namespace: str | None = None, **extra) -> dict:
    meta = {"name": name, "uid": _uid(namespace, name), "creationTimestamp": _CREATED, **extra}
    if namespace:
        meta["namespace"] = namespace
    return meta


def cluster(nodes: int, gpus: int, pods: int, deployments: int = 40, mig: bool = True) -> dict[str, list[dict]]:
    """Resource name -> objects, for `pods` pods spread over `nodes` x `gpus` H100s (static
    MIG with LAYOUT, each pod on a 1g.10gb device; or whole GPUs with `mig=False`)."""
    gpu_spec = {"model": "H100-80GB", "count": gpus, "mig": "static", "layout": LAYOUT} if mig else \
        {"model": "H100-80GB", "count": gpus, "mig": "none"}
    objects = generate({"nodes": [{"namePrefix": "gpu-node", "count": nodes, "labels": {"karpenter.sh/nodepool": "h100"},
                                   "gpus": gpu_spec}]})
    raw: dict[str, list[dict]] = {"nodes": [], "resourceslices.resource.k8s.io": []}
    free = []
    for o in objects:
        o["metadata"].update(uid=_uid(o["kind"], o["metadata"]["name"]), creationTimestamp=_CREATED)
        if o["kind"] == "Node":
            o["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
            raw["nodes"].append(o)
        else:
            raw["resourceslices.resource.k8s.io"].append(o)
            free += [(o["spec"]["nodeName"], o["spec"]["pool"]["name"], d["name"]) for d in o["spec"]["devices"]
                     if not mig or d["attributes"]["profile"]["string"] == PROFILE]
    if pods > len(free):
        raise ValueError(f"{pods} pods need {pods} devices; the nodes have {len(free)}")
    selector = f"device.attributes['gpu.nvidia.com'].profile == '{PROFILE}'" if mig else \
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
    raw["deviceclasses.resource.k8s.io"] = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": _meta(name),
         "spec": {"selectors": [{"cel": {"expression": entry["selector"]}}]}}
        for name, entry in device_classes().items() if entry["driver"] == "gpu.nvidia.com"]
    request = {"name": "gpu", "exactly": {"deviceClassName": "mig.nvidia.com" if mig else "gpu.nvidia.com",
                                          "allocationMode": "ExactCount",
                                          "count": 1, "selectors": [{"cel": {"expression": selector}}]}}
    raw.update({r.name: [] for r in RESOURCES if r.name not in raw})
    raw["namespaces"] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": _meta("serving")}]
    per = -(-pods // deployments)
    for d in range(deployments):
        replicas = min(per, pods - d * per)
        if replicas <= 0:
            break
        _workload(raw, f"infer-{d}", replicas, request, free[d * per:d * per + replicas])
    return raw


def _workload(raw: dict, name: str, replicas: int, request: dict, devices: list) -> None:
    ns, labels = "serving", {"app": name}
    template_name = f"{name}-gpu"
    raw["resourceclaimtemplates.resource.k8s.io"].append({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": _meta(template_name, ns),
        "spec": {"spec": {"devices": {"requests": [request]}}}})
    pod_spec = {"terminationGracePeriodSeconds": 60,
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template_name}],
                "containers": [{"name": "server", "image": "vllm/vllm-openai", "args": ["--shutdown-timeout", "30"],
                                "resources": {"claims": [{"name": "gpu"}]},
                                "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 10"]}}}}]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(name, ns),
                  "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                           "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
                           "template": {"metadata": {"labels": labels}, "spec": pod_spec}}}
    replica_set = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": _meta(f"{name}-7d9f8c", ns, ownerReferences=[
        _owner("apps/v1", "Deployment", deployment)]), "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                                                                 "template": deployment["spec"]["template"]}}
    raw["deployments.apps"].append(deployment)
    raw["replicasets.apps"].append(replica_set)
    raw["poddisruptionbudgets.policy"].append({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": _meta(name, ns),
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}}})
    for i, (node, pool, device) in enumerate(devices):
        pod_name, claim_name = f"{name}-7d9f8c-{i:05d}", f"{name}-7d9f8c-{i:05d}-gpu-x"
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": _meta(pod_name, ns, labels=labels, ownerReferences=[_owner("apps/v1", "ReplicaSet",
                                                                                     replica_set)]),
               "spec": dict(pod_spec, nodeName=node),
               "status": {"phase": "Running", "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim_name}]}}
        raw["pods"].append(pod)
        raw["resourceclaims.resource.k8s.io"].append({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": _meta(claim_name, ns, annotations={"resource.kubernetes.io/pod-claim-name": "gpu"},
                              finalizers=["resource.kubernetes.io/delete-protection"],
                              ownerReferences=[_owner("v1", "Pod", pod)]),
            "spec": {"devices": {"requests": [request]}},
            "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com",
                                                               "pool": pool, "device": device}]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                       "reservedFor": [{"resource": "pods", "name": pod_name, "uid": pod["metadata"]["uid"]}]}})


def _owner(api_version: str, kind: str, owner: dict) -> dict:
    return {"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def write(folder: Path, nodes: int, gpus: int, pods: int, mig: bool = True) -> Path:
    """The bundle of `cluster(...)` in `folder`, captured at CAPTURED."""
    raw = cluster(nodes, gpus, pods, mig=mig)
    write_bundle(str(folder), Snapshot([], CAPTURED, "v1.34.2", "generated"), raw)
    return folder
