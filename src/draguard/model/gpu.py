"""What marks a pod as a GPU consumer, shared by the rules that only apply to GPU pods.

A pod uses GPUs when it holds a GPU claim, asks for a device-plugin GPU resource, selects
devices by environment, or mounts GPU device nodes or driver state from the host. A bare
`/dev` mount (CSI node plugins, node exporters) or a privileged flag alone does not make a
GPU pod, nor do claims that hold no GPU (IMEX channels, NICs, admin-access monitoring)."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Iterator

from .pods import ContainerSite, PodSite, mapping, text
from .values import Yaml, YamlMap
from ..core.patterns import Lazy

#: Device-plugin extended resources for accelerators (NVIDIA, AMD, Intel GPUs and Gaudi).
LEGACY_RESOURCE = Lazy(r"^(nvidia\.com/(gpu(\..+)?|mig-.+)|amd\.com/gpu|gpu\.intel\.com/.+|habana\.ai/gaudi)$")

#: Variables that select devices inside the container runtime (NVIDIA's, AMD's and Habana's
#: container toolkits, IMEX channels included) or the CUDA/ROCm/OpenCL/oneAPI stack.
DEVICE_ENV_VARS = frozenset({
    "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "NVIDIA_MIG_CONFIG_DEVICES", "NVIDIA_IMEX_CHANNELS",
    "AMD_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "HABANA_VISIBLE_DEVICES", "HABANA_VISIBLE_MODULES", "ZE_AFFINITY_MASK", "ONEAPI_DEVICE_SELECTOR",
})

#: values of a device variable that hide every device from the container (not a selection)
HIDING_VALUES = frozenset({"void", "none"})
#: what CEL's trim() strips (Unicode White_Space, Go's unicode.IsSpace), for the check to read a
#: value as admission's CEL `value.trim().lowerAscii()` does: Python's str.isspace() minus
#: U+001C..U+001F, written out (deriving it walked 12,289 characters at every start;
#: tests/unit/model/test_gpu_space.py derives it and compares)
CEL_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
             "\u2028\u2029\u202f\u205f\u3000")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def hides_devices(value: Yaml) -> bool:
    """The value hides the devices: `value.trim().lowerAscii()` is one of HIDING_VALUES."""
    return isinstance(value, str) and value.strip(CEL_SPACE).translate(_ASCII_LOWER) in HIDING_VALUES


def hides_devices_cel(entry: str) -> str:
    """CEL: env entry `entry` has a value that hides the devices (hides_devices)."""
    return (f"(has({entry}.value) && type({entry}.value) == string && "
            f"{entry}.value.trim().lowerAscii() in {sorted(HIDING_VALUES)})")


#: How a host path may spell one separator: `/`, `//`, `/./` ... (a `.` component and an
#: empty one name the same directory). The API server refuses `..` in a hostPath
#: (core/validation validatePathNoBacksteps), so these are every spelling a Pod can reach.
_SEP = r"(/\.?)*/"
_END = r"(/\.?)*$"
#: A `..` component: refused in a Pod, but a custom resource holding a pod template is not
#: validated by the API server, and `..` can lead anywhere: it counts as a GPU path.
_BACKSTEP = r".*(^|/)\.\.(/|$).*"


class _OnFirstUse:
    """A pattern compiled when first matched: the host-path patterns spell every component
    every way a path may be written, and compiling them cost each run 10 ms, a third of all
    the regular expressions a one-file lint compiles, whether or not a pod mounts a host path."""

    def __init__(self, text: str):
        self.text = text

    @cached_property
    def _compiled(self) -> re.Pattern[str]:
        return re.compile(self.text)

    def match(self, string: str) -> re.Match[str] | None:
        return self._compiled.match(string)


def _host_path_pattern(exact: tuple[str, ...], prefixed: tuple[str, ...], subtrees: tuple[str, ...],
                       root: bool) -> tuple[_OnFirstUse, str]:
    """An RE2-compatible pattern (admission policies use it as it is) for host paths, each
    given as its components: `exact` ones, components ending in a name `prefixed` by the last
    one (`/dev/nvidia0`), or anything inside `subtrees`, whatever the spelling (_SEP); with
    `root`, the host root and any path with `..` too.
    Returns the pattern, compiled on first use (read with `match`: CEL's `matches` finds, and the
    pattern anchors at the start) and the RE2 text for admission."""
    def spelled(components: str) -> str:
        return _SEP + _SEP.join(re.escape(c) for c in components.split("/"))
    alternatives = [spelled(p) + _END for p in exact + subtrees]
    alternatives += [spelled(p) + ".*" for p in prefixed]
    alternatives += [spelled(p) + "/.*" for p in subtrees]
    alternatives += [r"(/\.?)+$", _BACKSTEP] * root
    pattern = "^(" + "|".join(f"({a})" for a in alternatives) + ")"
    # RE2's `$` is the end of the text; Python's also matches before a final newline
    return _OnFirstUse(pattern.replace("$", r"\Z")), pattern


#: Host paths that name GPU device nodes or driver/MPS state.
GPU_SPECIFIC_PATH, _ = _host_path_pattern(exact=(), prefixed=("dev/nvidia", "var/run/nvidia", "run/nvidia"),
                                          subtrees=("dev/dri", "tmp/nvidia-mps"), root=False)
#: ... and what reaches them otherwise: the folders that hold them (`/dev` exposes every device
#: node, `/` everything), the host's root under /proc, the device links of /dev/char, and what
#: decides what the runtime injects (CDI specs, the NVIDIA container toolkit's config and
#: install). A bare `/dev` mount (CSI node plugins, node exporters) does not make a GPU pod.
HOST_GPU_PATH, HOST_GPU_PATH_RE2 = _host_path_pattern(
    exact=("dev", "tmp", "var", "var/run", "run", "etc", "usr", "usr/local"),
    prefixed=("dev/nvidia", "var/run/nvidia", "run/nvidia"),
    # /dev/char/195:N links to /dev/nvidiaN; /proc/<pid>/root is the host's root; the CDI
    # specs and the container toolkit's config decide what a container's claim injects
    subtrees=("dev/dri", "dev/char", "tmp/nvidia-mps", "proc", "var/run/cdi", "run/cdi", "etc/cdi",
              "etc/nvidia-container-runtime", "etc/nvidia-container-toolkit", "usr/local/nvidia"),
    root=True)
#: The host's POSIX shared memory, however spelt: NCCL and CUDA IPC keep their buffers there,
#: so a hostPath onto it shares them with every pod of the node that mounts it too (like hostIPC)
HOST_SHM_PATH, _ = _host_path_pattern(exact=("dev/shm", "run/shm"), prefixed=(), subtrees=(), root=False)


def legacy_resources(resources: YamlMap, aliases: tuple[str, ...] = ()) -> Iterator[tuple[str, YamlMap, str]]:
    """Yield ('limits' or 'requests', that mapping, resource name) for each legacy
    accelerator resource (and each of the CRD's own `aliases` for one)."""
    for section in ("limits", "requests"):
        values = resources.get(section)
        if isinstance(values, dict):
            for name in values:
                if isinstance(name, str) and (LEGACY_RESOURCE.fullmatch(name) or name in aliases):
                    yield section, values, name


def device_env(container: ContainerSite) -> Iterator[tuple[YamlMap, str]]:
    """Yield (env entry, variable name) for each device-selecting variable set inline."""
    for entry in container.env:
        if text(entry.get("name")) in DEVICE_ENV_VARS:
            yield entry, entry["name"]


def host_gpu_path(volume: YamlMap) -> str | None:
    """The host path of a hostPath volume onto GPU device nodes or driver state, else None."""
    return _host_path(volume, HOST_GPU_PATH)


def host_shm_path(volume: YamlMap) -> str | None:
    """The host path of a hostPath volume onto the host's shared memory (HOST_SHM_PATH), else None."""
    return _host_path(volume, HOST_SHM_PATH)


def _host_path(volume: YamlMap, pattern: _OnFirstUse) -> str | None:
    path = mapping(volume.get("hostPath")).get("path")
    return path if isinstance(path, str) and pattern.match(path) else None


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
_PRODUCT_MIG = Lazy(r"-MIG-(\d+g\.\d+gb(?:\+me)?)(?:-SHARED)?$")
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


def unshared_node_selector(site: PodSite) -> dict[str, str | None]:
    """The pod's nodeSelector entries that pick nodes for the device plugin's shared replicas,
    each with what it becomes once the sharing is one DRA claim's (None: the entry goes):
    GPU Feature Discovery's `-SHARED` product names the same model without the suffix (the
    label it sets once the plugin no longer shares the GPU), and the sharing labels
    (`nvidia.com/gpu.replicas`, GKE's) go, as no node keeps them for a DRA driver's GPUs.
    A required node affinity that says the same is left as written (the caller says so)."""
    entries: dict[str, str | None] = {}
    for key, value in mapping(site.spec.get("nodeSelector")).items():
        if not isinstance(value, str):
            continue
        if key == "nvidia.com/gpu.product" and value.endswith("-SHARED"):
            entries[key] = value.removesuffix("-SHARED")
        elif key in _GKE_SHARING or key == "nvidia.com/gpu.replicas":
            entries[key] = None
    return entries


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
