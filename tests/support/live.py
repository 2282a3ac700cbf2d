"""Live cluster state as `kubectl get pods,resourceclaims -A -o yaml|json` returns it: a
`kind: List` of running Pods (status, uid, managedFields, resourceClaimStatuses naming the
claims generated from their templates) and those generated ResourceClaims, allocated."""

from __future__ import annotations

import json
import uuid

import yaml


def live_pod(i: int) -> dict:
    uid = str(uuid.UUID(int=i))
    name, ns, node = f"infer-{i}-abcde", f"team-{i % 20}", f"gpu-node-{i % 50}"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns, "uid": uid, "resourceVersion": str(1000 + i),
            "creationTimestamp": "2026-11-30T10:00:00Z", "generateName": f"infer-{i}-",
            "labels": {"app": "infer", "pod-template-hash": "7d9f8c"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"infer-{i}", "uid": uid,
                                 "controller": True, "blockOwnerDeletion": True}],
            "managedFields": [{
                "apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kube-controller-manager",
                "operation": "Update", "time": "2026-11-30T10:00:00Z",
                "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}},
                             "f:spec": {"f:containers": {'k:{"name":"server"}': {
                                 ".": {}, "f:image": {}, "f:name": {}, "f:resources": {".": {}, "f:claims": {}}}},
                                 "f:resourceClaims": {".": {}, 'k:{"name":"gpu"}': {
                                     ".": {}, "f:name": {}, "f:resourceClaimTemplateName": {}}}}}}]},
        "spec": {
            "containers": [{"name": "server", "image": "vllm/vllm-openai:v0.6.0",
                            "resources": {"claims": [{"name": "gpu"}]},
                            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                            "imagePullPolicy": "IfNotPresent",
                            "volumeMounts": [{"name": "kube-api-access-x", "readOnly": True,
                                              "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "mig-1g"}],
            "nodeName": node, "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access-x", "projected": {
                "defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]},
        "status": {
            "phase": "Running", "podIP": "10.0.0.1", "hostIP": "10.1.0.1", "qosClass": "BestEffort",
            "startTime": "2026-11-30T10:00:01Z",
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": "2026-11-30T10:00:05Z"}
                           for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{"name": "server", "ready": True, "restartCount": 0, "started": True,
                                   "image": "vllm/vllm-openai:v0.6.0", "imageID": "docker.io/vllm@sha256:abc",
                                   "containerID": "containerd://abc",
                                   "state": {"running": {"startedAt": "2026-11-30T10:00:04Z"}}}],
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": f"{name}-gpu-xyz"}]},
    }


def live_claim(i: int) -> dict:
    pod, node = f"infer-{i}-abcde", f"gpu-node-{i % 50}"
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": f"{pod}-gpu-xyz", "namespace": f"team-{i % 20}", "uid": str(uuid.UUID(int=10**9 + i)),
                     "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod,
                                          "uid": str(uuid.UUID(int=i)), "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "mig.nvidia.com", "allocationMode": "ExactCount", "count": 1,
            "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.18gb'"}}]}}]}},
        "status": {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": node,
                                     "device": f"gpu-{i % 8}-mig-1g-18gb-{i % 7}-1"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                                     "values": [node]}]}]}},
            "reservedFor": [{"resource": "pods", "name": pod, "uid": str(uuid.UUID(int=i))}]},
    }


def live_list(pods: int, fmt: str = "yaml") -> str:
    """The List kubectl prints for `pods` running pods and their claims."""
    items = [obj for i in range(pods) for obj in (live_pod(i), live_claim(i))]
    document = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    if fmt == "json":
        return json.dumps(document, indent=4)
    return yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=True, default_flow_style=False)
