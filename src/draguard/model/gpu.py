"""What marks a pod as a GPU consumer, shared by the rules that only apply to GPU pods."""

from __future__ import annotations

import re

from .pods import ContainerSite, PodSite, mapping, text

#: Device-plugin extended resources for accelerators (NVIDIA, AMD, Intel).
LEGACY_RESOURCE = re.compile(r"^(nvidia\.com/(gpu(\..+)?|mig-.+)|amd\.com/gpu|gpu\.intel\.com/.+)$")

#: Variables that select devices inside the container runtime or the CUDA/ROCm/oneAPI stack.
DEVICE_ENV_VARS = frozenset({
    "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "NVIDIA_MIG_CONFIG_DEVICES",
    "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ZE_AFFINITY_MASK",
})

#: Host paths that expose GPU device nodes or driver/MPS state (trailing slashes allowed);
#: RE2 syntax, so admission policies use the same pattern.
HOST_GPU_PATH = re.compile(r"^(/dev|/dev/nvidia.*|/dev/dri(/.*)?|/tmp/nvidia-mps(/.*)?|/var/run/nvidia.*|/run/nvidia.*)/*$")


def legacy_resources(resources: dict):
    """Yield ('limits' or 'requests', that mapping, resource name) for each legacy
    accelerator resource."""
    for section in ("limits", "requests"):
        values = resources.get(section)
        if isinstance(values, dict):
            for name in values:
                if isinstance(name, str) and LEGACY_RESOURCE.match(name):
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


def uses_gpu(site: PodSite) -> bool:
    """A pod uses accelerators if it asks for them by claim, by device-plugin resource,
    by device-selecting environment, or by mounting GPU device nodes from the host."""
    if site.claims:
        return True
    for c in site.containers:
        if any(True for _ in legacy_resources(c.resources)) or any(True for _ in device_env(c)):
            return True
    return any(host_gpu_path(volume) for volume in site.volumes)
