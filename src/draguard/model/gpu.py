"""What marks a pod as a GPU consumer, shared by the rules that only apply to GPU pods.

A pod uses GPUs when it holds a GPU claim, asks for a device-plugin GPU resource, selects
devices by environment, or mounts GPU device nodes or driver state from the host. A bare
`/dev` mount (CSI node plugins, node exporters) or a privileged flag alone does not make a
GPU pod, nor do claims that hold no GPU (IMEX channels, NICs, admin-access monitoring)."""

from __future__ import annotations

import re

from .claims import device_requests
from .classes import is_gpu_class
from .objectset import ObjectSet
from .pods import ContainerSite, PodSite, mapping, text

#: Device-plugin extended resources for accelerators (NVIDIA, AMD, Intel GPUs and Gaudi).
LEGACY_RESOURCE = re.compile(r"^(nvidia\.com/(gpu(\..+)?|mig-.+)|amd\.com/gpu|gpu\.intel\.com/.+|habana\.ai/gaudi)$")

#: Variables that select devices inside the container runtime or the CUDA/ROCm/oneAPI stack.
DEVICE_ENV_VARS = frozenset({
    "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "NVIDIA_MIG_CONFIG_DEVICES",
    "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ZE_AFFINITY_MASK",
})

#: Host paths that expose GPU device nodes or driver/MPS state (trailing slashes allowed);
#: RE2 syntax, so admission policies use the same pattern. `/dev` exposes them all.
HOST_GPU_PATH = re.compile(r"^(/dev|/dev/nvidia.*|/dev/dri(/.*)?|/tmp/nvidia-mps(/.*)?|/var/run/nvidia.*|/run/nvidia.*)/*$")
#: ... of which these name GPUs specifically (a `/dev` mount alone does not make a GPU pod)
GPU_SPECIFIC_PATH = re.compile(r"^(/dev/nvidia.*|/dev/dri(/.*)?|/tmp/nvidia-mps(/.*)?|/var/run/nvidia.*|/run/nvidia.*)/*$")


def legacy_resources(resources: dict, aliases: tuple = ()):
    """Yield ('limits' or 'requests', that mapping, resource name) for each legacy
    accelerator resource (and each of the CRD's own `aliases` for one)."""
    for section in ("limits", "requests"):
        values = resources.get(section)
        if isinstance(values, dict):
            for name in values:
                if isinstance(name, str) and (LEGACY_RESOURCE.match(name) or name in aliases):
                    yield section, values, name


def device_env(container: ContainerSite):
    """Yield (env entry, variable name) for each device-selecting variable set inline."""
    for entry in container.env:
        if text(entry.get("name")) in DEVICE_ENV_VARS:
            yield entry, entry["name"]


def host_gpu_path(volume: dict) -> str | None:
    """The host path of a hostPath volume onto GPU device nodes or driver state, else None."""
    path = mapping(volume.get("hostPath")).get("path")
    return path if isinstance(path, str) and HOST_GPU_PATH.match(path) else None


def holds_gpu(objects: ObjectSet, namespace: str, entry: dict) -> bool:
    """Whether a pod's resourceClaims entry holds GPU devices: its claim or template (in the
    set) requests a GPU class without admin access. A claim outside the set may: it counts."""
    target = objects.claims.referenced(namespace, entry)
    if target is None:
        return True
    return any(is_gpu_class(objects, r.class_name) and r.admin_access is not True for r in device_requests(target))


def gpu_claim_entries(site: PodSite, objects: ObjectSet) -> list[dict]:
    return [entry for entry in site.claims if holds_gpu(objects, site.owner.namespace, entry)]


def uses_gpu(site: PodSite, objects: ObjectSet) -> bool:
    if gpu_claim_entries(site, objects):
        return True
    for c in site.containers:
        if any(True for _ in legacy_resources(c.resources, c.gpu_aliases)) or any(True for _ in device_env(c)):
            return True
    return any(isinstance(path := host_gpu_path(v), str) and GPU_SPECIFIC_PATH.match(path) for v in site.volumes)
