"""What marks a pod as a GPU consumer, shared by the rules that only apply to GPU pods.

A pod uses GPUs when it holds a GPU claim, asks for a device-plugin GPU resource, selects
devices by environment, or mounts GPU device nodes or driver state from the host. A bare
`/dev` mount (CSI node plugins, node exporters) or a privileged flag alone does not make a
GPU pod, nor do claims that hold no GPU (IMEX channels, NICs, admin-access monitoring)."""

from __future__ import annotations

import re

from .pods import ContainerSite, PodSite, mapping, text

#: Device-plugin extended resources for accelerators (NVIDIA, AMD, Intel GPUs and Gaudi).
LEGACY_RESOURCE = re.compile(r"^(nvidia\.com/(gpu(\..+)?|mig-.+)|amd\.com/gpu|gpu\.intel\.com/.+|habana\.ai/gaudi)$")

#: Variables that select devices inside the container runtime or the CUDA/ROCm/oneAPI stack.
DEVICE_ENV_VARS = frozenset({
    "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "NVIDIA_MIG_CONFIG_DEVICES",
    "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ZE_AFFINITY_MASK",
})

#: Host paths that expose GPU device nodes or driver/MPS state (trailing slashes allowed);
#: RE2 syntax, so admission policies use the same pattern. `/dev` exposes them all. Python
#: reads it with fullmatch: its `$` also matches before a final newline, RE2's does not.
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
                if isinstance(name, str) and (LEGACY_RESOURCE.fullmatch(name) or name in aliases):
                    yield section, values, name


def device_env(container: ContainerSite):
    """Yield (env entry, variable name) for each device-selecting variable set inline."""
    for entry in container.env:
        if text(entry.get("name")) in DEVICE_ENV_VARS:
            yield entry, entry["name"]


def host_gpu_path(volume: dict) -> str | None:
    """The host path of a hostPath volume onto GPU device nodes or driver state, else None."""
    path = mapping(volume.get("hostPath")).get("path")
    return path if isinstance(path, str) and HOST_GPU_PATH.fullmatch(path) else None


def required_node_labels(site: PodSite) -> dict[str, set[str]]:
    """Node label -> the values the pod requires it to have: its nodeSelector, and the `In`
    requirements of a required node affinity with one term (of several terms, any may hold:
    none is certain)."""
    required: dict[str, set[str]] = {}
    for key, value in mapping(site.spec.get("nodeSelector")).items():
        if isinstance(key, str) and isinstance(value, str):
            required.setdefault(key, set()).add(value)
    affinity = mapping(mapping(mapping(site.spec.get("affinity")).get("nodeAffinity"))
                       .get("requiredDuringSchedulingIgnoredDuringExecution"))
    terms = affinity.get("nodeSelectorTerms")
    if isinstance(terms, list) and len(terms) == 1:
        for expression in mapping(terms[0]).get("matchExpressions") or []:
            expression = mapping(expression)
            values = expression.get("values")
            if expression.get("operator") == "In" and isinstance(expression.get("key"), str) and \
                    isinstance(values, list) and values and all(isinstance(v, str) for v in values):
                required.setdefault(expression["key"], set()).update(values)
    return required


#: GPU Feature Discovery's product label: `<model>-MIG-<profile>` under the single MIG
#: strategy, `-SHARED` appended where time-slicing or MPS replicas keep the resource name
#: (NVIDIA/k8s-device-plugin README, "shared access to GPUs", renameByDefault=false)
_PRODUCT_MIG = re.compile(r"-MIG-(\d+g\.\d+gb(?:\+me)?)(?:-SHARED)?$")
#: GKE's node labels for GPU sharing and partitions (the GPU sharing and MIG docs of GKE)
_GKE_SHARING = ("cloud.google.com/gke-gpu-sharing-strategy", "cloud.google.com/gke-max-shared-clients-per-gpu")
_GKE_PARTITION = "cloud.google.com/gke-gpu-partition-size"


def gpu_share_selected(labels: dict[str, set[str]]) -> str | None:
    """`label=value` where a pod that requires these node `labels` (required_node_labels)
    selects nodes whose nvidia.com/gpu is a shared replica (time-slicing or MPS), not a GPU
    of its own; None otherwise."""
    for key in _GKE_SHARING:
        if key in labels:
            return f"{key}={','.join(sorted(labels[key]))}"
    products = labels.get("nvidia.com/gpu.product", set())
    if products and all(p.endswith("-SHARED") for p in products):
        return f"nvidia.com/gpu.product={','.join(sorted(products))}"
    replicas = labels.get("nvidia.com/gpu.replicas", set())
    if replicas and all(r.isascii() and r.isdigit() and int(r) > 1 for r in replicas):
        return f"nvidia.com/gpu.replicas={','.join(sorted(replicas))}"
    return None


def mig_profile_selected(labels: dict[str, set[str]]) -> tuple[str, str] | None:
    """(MIG profile, `label=value`) where a pod that requires these node `labels` selects
    nodes whose nvidia.com/gpu is one MIG slice of that profile (the single MIG strategy, a
    GKE GPU partition); None otherwise."""
    partition = labels.get(_GKE_PARTITION, set())
    if len(partition) == 1:
        [profile] = partition
        return profile, f"{_GKE_PARTITION}={profile}"
    products = labels.get("nvidia.com/gpu.product", set())
    found = [_PRODUCT_MIG.search(p) for p in products]
    profiles = {m.group(1) for m in found if m}
    if len(profiles) == 1 and all(found):  # every product the pod may land on is a slice of that profile
        [profile] = profiles
        return profile, f"nvidia.com/gpu.product={','.join(sorted(products))}"
    return None
