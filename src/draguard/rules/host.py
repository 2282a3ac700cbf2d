"""host-sharing: GPUs and CUDA state shared through the host instead of allocated."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..core.fixes import Applicability, Fix, FixAvailability, remove, remove_items, set_value
from ..dra.gpuclasses import uses_gpu
from ..model.gpu import HOST_GPU_PATH_RE2, host_gpu_path, host_shm_path
from ..model.pods import PodSite, named, pod_sites
from ..model.values import YamlList, YamlMap
from ..model.workloads import POD_TARGETS, node_agent
from ..model.manifest import edit_path
from .base import Admission, Needs, Rule
from .examples import COMPLIANT_POD
from .registry import register

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from .context import Context

_MPS_CONTROL = "nvidia-cuda-mps-control"
_DAEMONSET = ("apps", "DaemonSet")


def _drop_volume(site: PodSite, volumes: YamlList, volume: YamlMap) -> Fix:
    """Remove the volume and every mount of it (a mount of a missing volume is invalid)."""
    name = volume.get("name")
    edits = list(remove_items(edit_path(volumes), [volumes.index(volume)], len(volumes)))
    for c in site.containers:
        mounts = c.container.get("volumeMounts")
        mounts = mounts if isinstance(mounts, list) else []
        hits = [i for i, mount in enumerate(mounts) if isinstance(mount, dict) and mount.get("name") == name]
        if hits:
            edits.extend(remove_items(edit_path(mounts), hits, len(mounts)))
    return Fix(f"remove volume '{name}' and its mounts", Applicability.UNSAFE, tuple(edits))


def _drop_key(container: YamlMap, key: str, title: str) -> Fix:
    return Fix(title, Applicability.UNSAFE, (remove(edit_path(container, key)),))


def _private_shm(volume: YamlMap) -> Fix:
    """The volume becomes the pod's own memory-backed emptyDir: /dev/shm stays as large as the
    pod's memory allows, and no other pod sees it (shm-size-limit then asks for a bound)."""
    at = edit_path(volume)
    return Fix(f"give volume '{volume.get('name')}' the pod's own memory-backed emptyDir", Applicability.UNSAFE,
               (remove(at + ("hostPath",)), set_value(at + ("emptyDir",), {"medium": "Memory"})))


@register
class HostDeviceMount(Rule):
    id = "host-device-mount"
    name = "GPU device nodes or driver state mounted from the host"
    category = "host-sharing"
    severity = Severity.ERROR
    targets = POD_TARGETS
    fixable = FixAvailability.ALWAYS
    admission = Admission(
        "!has(s.volumes) || s.volumes.all(v, !has(v.hostPath) || "
        f"!has(v.hostPath.path) || !v.hostPath.path.matches(r'{HOST_GPU_PATH_RE2}'))",
        "a hostPath volume mounts GPU device nodes or driver state; let a DRA driver inject the device",
        over="podSpecs")
    summary = ("A hostPath volume onto /dev/nvidia*, /dev/dri, /dev/char, /tmp/nvidia-mps, /var/run/nvidia*, "
               "/run/nvidia*, the CDI specs or the NVIDIA container toolkit's config, a folder holding them (/, /dev, "
               "/tmp, /run, /var, /etc, /usr) or /proc (the host's root), however the path is spelled.")
    rationale = """
        Mounting the host's device nodes hands the container every GPU on the node (and the
        MPS pipes or driver sockets of every other tenant), whatever the scheduler
        allocated. DRA drivers inject only the allocated devices through CDI; nothing needs
        a hostPath. Node-level DaemonSets (drivers, device plugins, exporters) do need these
        mounts: lint reports them by `daemonset-host-access` instead. Admission judges a
        DaemonSet as any workload: the platform's node agents run in the namespaces the
        install exempts, so one in a judged namespace is a tenant's."""
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

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if node_agent(obj, ctx.config):
            return
        for site in pod_sites(obj):
            for volume in site.volumes:
                path = host_gpu_path(volume)
                if path is not None:
                    yield ctx.finding(self, obj, f"{named('volume', volume.get('name'))} mounts {path} from the host: "
                                      "every tenant on the node can reach these devices", volume["hostPath"], "path",
                                      value=True, help="drop the hostPath and let a DRA driver inject the allocated "
                                      "device", fix=_drop_volume(site, site.spec["volumes"], volume))


@register
class HostIpc(Rule):
    id = "host-ipc"
    name = "Host IPC or host shared memory in a GPU pod"
    category = "host-sharing"
    severity = Severity.ERROR
    fixable = FixAvailability.ALWAYS
    targets = POD_TARGETS
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
    summary = "A pod that uses GPUs shares the host's IPC namespace."
    rationale = """
        CUDA IPC handles and MPS live in shared memory: with `hostIPC: true` a tenant can
        attach to another tenant's GPU memory or MPS server. DRA sharing (one claim
        referenced by several containers, or the driver's MPS/time-slicing config) shares a
        device without opening the host's IPC namespace. A hostPath volume onto the host's
        `/dev/shm` (or `/run/shm`) is the same opening by another door, common in training
        jobs (PyTorchJob and MPIJob workers that want a large /dev/shm for NCCL and data
        loaders): NCCL's and the data loaders' shared-memory segments of every pod on the
        node that mounts it land in one directory, readable and writable by each. The fix
        gives the pod its own memory-backed `emptyDir` instead, which is as large as the
        pod's memory allows."""
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

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if node_agent(obj, ctx.config):
            return
        for site in pod_sites(obj):
            shared = [(volume, path) for volume in site.volumes if (path := host_shm_path(volume))]
            if not (site.spec.get("hostIPC") is True or shared) or not uses_gpu(site, ctx.objects):
                continue
            if site.spec.get("hostIPC") is True:
                yield ctx.finding(self, obj, "pod uses GPUs and shares the host's IPC namespace (hostIPC: true)",
                                  site.spec, "hostIPC", help="remove hostIPC; share a device through one ResourceClaim",
                                  fix=_drop_key(site.spec, "hostIPC", "remove hostIPC"))
            for volume, path in shared:
                yield ctx.finding(self, obj, f"pod uses GPUs and {named('volume', volume.get('name'))} mounts the "
                                  f"host's shared memory ({path}): every pod of the node that mounts it shares "
                                  "its NCCL and CUDA IPC segments", volume["hostPath"], "path", value=True,
                                  help="use an emptyDir with medium: Memory (and a sizeLimit) for /dev/shm",
                                  fix=_private_shm(volume))


@register
class PrivilegedGpuContainer(Rule):
    id = "privileged-gpu-container"
    name = "Privileged container in a GPU pod"
    category = "host-sharing"
    severity = Severity.ERROR
    fixable = FixAvailability.ALWAYS
    targets = POD_TARGETS
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
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

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if node_agent(obj, ctx.config):
            return
        for site in pod_sites(obj):
            if not uses_gpu(site, ctx.objects):
                continue
            for c in site.containers:
                security = c.security_context
                if security.get("privileged") is True:
                    yield ctx.finding(self, obj, f"{c.label} is privileged in a pod that uses GPUs: it "
                                      "sees every device of the node", security, "privileged",
                                      help="drop privileged; the DRA driver injects the allocated device",
                                      fix=_drop_key(security, "privileged", "remove privileged: true"))


@register
class MpsDaemonInTenantPod(Rule):
    id = "mps-daemon-in-tenant-pod"
    name = "MPS control daemon started by a tenant"
    category = "host-sharing"
    severity = Severity.ERROR
    targets = POD_TARGETS
    admission = Admission(
        f"!(has(c.command) && c.command.exists(a, string(a).contains('{_MPS_CONTROL}'))) && "
        f"!(has(c.args) && c.args.exists(a, string(a).contains('{_MPS_CONTROL}')))",
        "a tenant workload starts the MPS control daemon; use the DRA driver's MPS sharing", over="containers")
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

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if node_agent(obj, ctx.config):
            return
        for site in pod_sites(obj):
            for c in site.containers:
                for key in ("command", "args"):
                    value = c.container.get(key)
                    text = " ".join(map(str, value)) if isinstance(value, list) else str(value or "")
                    if _MPS_CONTROL in text:
                        yield ctx.finding(self, obj, f"{c.label} starts the MPS control daemon inside a "
                                          "tenant workload", c.container, key,
                                          help="use the DRA driver's MPS sharing config on the claim")
                        break


@register
class DaemonSetHostAccess(Rule):
    id = "daemonset-host-access"
    name = "Node agent with host access to GPUs"
    category = "host-sharing"
    severity = Severity.INFO
    targets = frozenset({_DAEMONSET})
    summary = "A DaemonSet mounts GPU device nodes or driver state from the host, runs privileged or shares hostIPC."
    rationale = """
        GPU drivers, device plugins, DRA kubelet plugins, MPS control daemons and exporters
        run on every node and need the host's devices: for them this is expected, which is
        why the tenant rules (`host-device-mount`, `host-ipc`, `privileged-gpu-container`,
        `mps-daemon-in-tenant-pod`) skip DaemonSets. It is still worth one note per
        DaemonSet: any tenant who can create a DaemonSet gets every GPU of every node this
        way. Keep node agents in infrastructure namespaces tenants cannot write to, and
        suppress this note there with the reason. Admission never says it: there, a DaemonSet
        in a judged namespace is a tenant's, and the tenant rules deny what it takes."""
    reference = "https://kubernetes.io/docs/concepts/security/pod-security-standards/"
    noncompliant = """
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: gpu-exporter, namespace: monitoring}
        spec:
          selector: {matchLabels: {app: gpu-exporter}}
          template:
            metadata: {labels: {app: gpu-exporter}}
            spec:
              containers:
              - name: exporter
                image: nvcr.io/nvidia/k8s/dcgm-exporter
                securityContext: {privileged: true}
              volumes:
              - name: nvidia
                hostPath: {path: /run/nvidia}
        """
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if not node_agent(obj, ctx.config):  # a tenant's DaemonSet (admission): the tenant rules judge it
            return
        for site in pod_sites(obj):
            access = [f"mounts {path}" for v in site.volumes if (path := host_gpu_path(v))]
            access += [f"runs {c.label} privileged" for c in site.containers if c.security_context.get("privileged") is True]
            if site.spec.get("hostIPC") is True:
                access.append("shares the host's IPC namespace")
            if access:
                yield ctx.finding(self, obj, f"node agent {obj.name or 'DaemonSet'} {', '.join(access)}: expected for "
                                  "GPU drivers, device plugins and exporters, and a way to every GPU of every node for "
                                  "anyone who can create it", site.spec, None,
                                  help="run it in an infrastructure namespace tenants cannot write to, and suppress "
                                       "this note there with the reason")
