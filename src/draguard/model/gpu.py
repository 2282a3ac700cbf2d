"""What marks a pod as a GPU consumer, shared by the rules that only apply to GPU pods."""

from __future__ import annotations

import re

from .workloads import PodSite

#: Device-plugin extended resources for accelerators (NVIDIA, AMD, Intel).
LEGACY_RESOURCE = re.compile(r"^(nvidia\.com/(gpu(\..+)?|mig-.+)|amd\.com/gpu|gpu\.intel\.com/.+)$")

#: Variables that select devices inside the container runtime or the CUDA/ROCm/oneAPI stack.
DEVICE_ENV_VARS = frozenset({
    "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "NVIDIA_MIG_CONFIG_DEVICES",
    "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ZE_AFFINITY_MASK",
})

#: Host paths that expose GPU device nodes or driver/MPS state.
HOST_GPU_PATH = re.compile(r"^(/dev/?|/dev/nvidia.*|/dev/dri(/.*)?|/tmp/nvidia-mps(/.*)?|/var/run/nvidia.*|/run/nvidia.*)$")


def legacy_resources(resources: dict):
    """Yield ('limits' or 'requests', that mapping, resource name) for each legacy
    accelerator resource."""
    for section in ("limits", "requests"):
        values = resources.get(section)
        if isinstance(values, dict):
            for name in values:
                if isinstance(name, str) and LEGACY_RESOURCE.match(name):
                    yield section, values, name


def device_env(container: dict):
    """Yield (env entry, variable name) for each device-selecting variable set inline."""
    env = container.get("env")
    if isinstance(env, list):
        for entry in env:
            if isinstance(entry, dict) and entry.get("name") in DEVICE_ENV_VARS:
                yield entry, entry["name"]


def uses_gpu(site: PodSite) -> bool:
    """A pod uses accelerators if it asks for them by claim, by device-plugin resource,
    by device-selecting environment, or by mounting GPU device nodes from the host."""
    if site.spec.get("resourceClaims"):
        return True
    for c in site.containers:
        if any(True for _ in legacy_resources(c.resources)) or any(True for _ in device_env(c.container)):
            return True
    volumes = site.spec.get("volumes")
    for volume in volumes if isinstance(volumes, list) else []:
        host = volume.get("hostPath") if isinstance(volume, dict) else None
        if isinstance(host, dict) and isinstance(host.get("path"), str) and HOST_GPU_PATH.match(host["path"].rstrip("/") or "/"):
            return True
    return False
