"""Snapshot examples shared by the cluster rules' documentation and tests: a small healthy
cluster (one GPU node, its driver's slices, a running pod holding one GPU through a claim
generated from its template) captured at a fixed time. Each failing example is this
snapshot with one fault, so it differs from the clean one in one place; both are audited
with `draguard audit --from`, as a support case would be.

The texts keep a 4-space base indentation (docs and tests dedent them)."""

from __future__ import annotations

SNAPSHOT_HEADER = """
    apiVersion: draguard.dev/v1alpha1
    kind: Snapshot
    capturedAt: "2026-12-01T12:00:00Z"
    serverVersion: v1.34.2
"""

NODE = """
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: gpu-node-0, uid: 9d1e4c02-0000-4000-8000-000000000001}
    status:
      conditions: [{type: Ready, status: "True"}]
"""

DEVICE_CLASS = """
    ---
    apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: gpu.nvidia.com, uid: 9d1e4c02-0000-4000-8000-000000000002}
    spec:
      selectors:
      - cel: {expression: device.driver == 'gpu.nvidia.com'}
"""


def gpu(index: int) -> str:
    """One whole 80 GiB GPU as the slice lists it."""
    return f"""
      - name: gpu-{index}
        attributes:
          type: {{string: gpu}}
          uuid: {{string: GPU-6f6b6b1c-000{index}}}
        capacity: {{memory: {{value: 80Gi}}}}"""


def slice_(devices: str = "", node: str = "gpu-node-0", count: int = 1, generation: int = 1,
           name: str = "gpu-node-0-gpu.nvidia.com") -> str:
    devices = devices or gpu(0) + gpu(1)
    return f"""
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {{name: {name}, uid: 9d1e4c02-0000-4000-8000-000000000003}}
    spec:
      driver: gpu.nvidia.com
      nodeName: {node}
      pool: {{name: {node}, generation: {generation}, resourceSliceCount: {count}}}
      devices:{devices}
"""


TEMPLATE = """
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: one-gpu, namespace: team-a, uid: 9d1e4c02-0000-4000-8000-000000000004}
    spec:
      spec:
        devices:
          requests:
          - name: gpu
            exactly:
              deviceClassName: gpu.nvidia.com
              allocationMode: ExactCount
              count: 1
              selectors:
              - cel:
                  expression: device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0
"""


def pod(status: str = """
    status:
      phase: Running
      resourceClaimStatuses: [{name: gpu, resourceClaimName: infer-0-gpu-7xk2p}]""",
        metadata: str = "", node: str = "\n      nodeName: gpu-node-0") -> str:
    return f"""
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: infer-0
      namespace: team-a
      uid: 9d1e4c02-0000-4000-8000-00000000000a
      creationTimestamp: "2026-12-01T11:00:00Z"{metadata}
    spec:{node}
      terminationGracePeriodSeconds: 60
      resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
      containers:
      - name: server
        image: vllm/vllm-openai
        args: [--shutdown-timeout, '30']
        resources:
          claims: [{{name: gpu}}]
        lifecycle:
          preStop:
            exec: {{command: [sh, -c, sleep 10]}}{status}
"""


def claim(status: str = """
    status:
      allocation:
        devices:
          results: [{request: gpu, driver: gpu.nvidia.com, pool: gpu-node-0, device: gpu-0}]
        nodeSelector:
          nodeSelectorTerms:
          - matchFields: [{key: metadata.name, operator: In, values: [gpu-node-0]}]
      reservedFor: [{resource: pods, name: infer-0, uid: 9d1e4c02-0000-4000-8000-00000000000a}]""",
          metadata: str = "", name: str = "infer-0-gpu-7xk2p", owner: str = "9d1e4c02-0000-4000-8000-00000000000a",
          uid: str = "9d1e4c02-0000-4000-8000-00000000000b") -> str:
    return f"""
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata:
      name: {name}
      namespace: team-a
      uid: {uid}
      creationTimestamp: "2026-12-01T11:00:01Z"
      annotations: {{resource.kubernetes.io/pod-claim-name: gpu}}
      finalizers: [resource.kubernetes.io/delete-protection]
      ownerReferences:
      - {{apiVersion: v1, kind: Pod, name: infer-0, uid: {owner}, controller: true, blockOwnerDeletion: true}}{metadata}
    spec:
      devices:
        requests:
        - name: gpu
          exactly: {{deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 1}}{status}
"""


def snapshot(*parts: str) -> str:
    """The header and the given objects, as one dump file."""
    return SNAPSHOT_HEADER + "".join(part.lstrip("\n") for part in parts) + "    "


BASE = (NODE, DEVICE_CLASS, slice_(), TEMPLATE)
HEALTHY = snapshot(*BASE, pod(), claim())
