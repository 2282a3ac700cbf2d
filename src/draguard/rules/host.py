"""host-sharing: GPUs and CUDA state shared through the host instead of allocated."""

from __future__ import annotations

import re

from ..findings import Severity
from ..model.gpu import HOST_GPU_PATH, uses_gpu
from ..model.workloads import POD_KINDS, pod_sites
from .base import Rule, register
from .examples import COMPLIANT_POD

_MPS_CONTROL = re.compile(r"nvidia-cuda-mps-control")


@register
class HostDeviceMount(Rule):
    id = "host-device-mount"
    name = "GPU device nodes or driver state mounted from the host"
    category = "host-sharing"
    severity = Severity.ERROR
    kinds = POD_KINDS
    summary = "A hostPath volume onto /dev, /dev/nvidia*, /dev/dri, /tmp/nvidia-mps, /var/run/nvidia* or /run/nvidia*."
    rationale = """
        Mounting the host's device nodes hands the container every GPU on the node (and the
        MPS pipes or driver sockets of every other tenant), whatever the scheduler
        allocated. DRA drivers inject only the allocated devices through CDI; nothing needs
        a hostPath. Driver and device-plugin DaemonSets do need these mounts: suppress the
        rule on them with a reason."""
    reference = "https://kubernetes.io/docs/concepts/storage/volumes/#hostpath"
    noncompliant = """
        apiVersion: v1
        kind: Pod
        metadata: {name: tenant}
        spec:
          containers:
          - {name: server, image: vllm/vllm-openai}
          volumes:
          - name: dev
            hostPath: {path: /dev}
        """
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            volumes = site.spec.get("volumes")
            for volume in volumes if isinstance(volumes, list) else []:
                host = volume.get("hostPath") if isinstance(volume, dict) else None
                path = host.get("path") if isinstance(host, dict) else None
                if isinstance(path, str) and HOST_GPU_PATH.match(path.rstrip("/") or "/"):
                    yield ctx.finding(self, obj, f"volume '{volume.get('name')}' mounts {path} from the host: "
                                      "every tenant on the node can reach these devices", host, "path", value=True,
                                      fix="drop the hostPath and let a DRA driver inject the allocated device")


@register
class HostIpc(Rule):
    id = "host-ipc"
    name = "hostIPC in a GPU pod"
    category = "host-sharing"
    severity = Severity.ERROR
    kinds = POD_KINDS
    summary = "A pod that uses GPUs shares the host's IPC namespace."
    rationale = """
        CUDA IPC handles and MPS live in shared memory: with `hostIPC: true` a tenant can
        attach to another tenant's GPU memory or MPS server. DRA sharing (one claim
        referenced by several containers, or the driver's MPS/time-slicing config) shares a
        device without opening the host's IPC namespace."""
    reference = "https://kubernetes.io/docs/concepts/security/pod-security-standards/"
    noncompliant = """
        apiVersion: v1
        kind: Pod
        metadata: {name: tenant}
        spec:
          hostIPC: true
          containers:
          - name: server
            image: vllm/vllm-openai
            resources: {limits: {nvidia.com/gpu: 1}}
        """
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            if site.spec.get("hostIPC") is True and uses_gpu(site):
                yield ctx.finding(self, obj, "pod uses GPUs and shares the host's IPC namespace (hostIPC: true)",
                                  site.spec, "hostIPC", fix="remove hostIPC; share a device through one ResourceClaim")


@register
class PrivilegedGpuContainer(Rule):
    id = "privileged-gpu-container"
    name = "Privileged container in a GPU pod"
    category = "host-sharing"
    severity = Severity.ERROR
    kinds = POD_KINDS
    summary = "A container of a pod that uses GPUs runs privileged."
    rationale = """
        A privileged container sees every device node of the host, so the allocation the
        scheduler made (or the device plugin's count) no longer bounds what the tenant can
        use. DRA drivers inject the allocated devices into unprivileged containers."""
    reference = "https://kubernetes.io/docs/concepts/security/pod-security-standards/"
    noncompliant = """
        apiVersion: v1
        kind: Pod
        metadata: {name: tenant}
        spec:
          containers:
          - name: server
            image: vllm/vllm-openai
            securityContext: {privileged: true}
            resources: {limits: {nvidia.com/gpu: 1}}
        """
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            if not uses_gpu(site):
                continue
            for c in site.containers:
                security = c.container.get("securityContext")
                if isinstance(security, dict) and security.get("privileged") is True:
                    yield ctx.finding(self, obj, f"container '{c.name}' is privileged in a pod that uses GPUs: it "
                                      "sees every device of the node", security, "privileged",
                                      fix="drop privileged; the DRA driver injects the allocated device")


@register
class MpsDaemonInTenantPod(Rule):
    id = "mps-daemon-in-tenant-pod"
    name = "MPS control daemon started by a tenant"
    category = "host-sharing"
    severity = Severity.ERROR
    kinds = POD_KINDS - {"DaemonSet"}
    summary = "A workload other than a node-level DaemonSet starts nvidia-cuda-mps-control."
    rationale = """
        An MPS control daemon started inside a tenant pod serves every process that can reach
        its pipe directory, usually through a shared hostPath, and its limits are set by
        the tenant itself. MPS sharing belongs to the node (the GPU operator's DaemonSet) or
        to the DRA driver, which starts a per-claim MPS server from the claim's opaque
        config (`GpuConfig` with `sharing.strategy: MPS`)."""
    reference = "https://docs.nvidia.com/deploy/mps/index.html"
    noncompliant = """
        apiVersion: v1
        kind: Pod
        metadata: {name: tenant}
        spec:
          containers:
          - name: mps
            image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
            command: [nvidia-cuda-mps-control, -d]
        """
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            for c in site.containers:
                for key in ("command", "args"):
                    value = c.container.get(key)
                    text = " ".join(map(str, value)) if isinstance(value, list) else str(value or "")
                    if _MPS_CONTROL.search(text):
                        yield ctx.finding(self, obj, f"container '{c.name}' starts the MPS control daemon inside a "
                                          "tenant workload", c.container, key,
                                          fix="use the DRA driver's MPS sharing config on the claim")
                        break
