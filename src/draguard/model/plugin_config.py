"""The NVIDIA device plugin's own config file, as a ConfigMap holds it: which resources it
shares, and how. Mirrors NVIDIA/k8s-device-plugin api/config/v1 (sharing.go: `sharing` holds
`timeSlicing` and `mps`, each ReplicatedResources; replicas.go: `resources[]` of `name` and
`replicas`). A replica count above 1 hands one GPU to that many pods: time-slicing shares its
memory and fault domain with no isolation, MPS its memory with per-client limits."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Iterable

from .manifest import Manifest
from .pods import mapping, mappings
from .values import YamlMap
from ..core.patterns import Lazy
from ..core.value import Value
from ..sources.blockyaml import read_whole

if TYPE_CHECKING:
    from yaml.nodes import Node

#: a data value longer than this is not read as a config (the API server caps a whole
#: ConfigMap at 1 MiB)
MAX_CONFIG_CHARS = 1 << 20
#: what PyYAML's safe loader reads otherwise than the block reader's resolver (sources.resolver):
#: a timestamp (`2024-01-31`: a date to it, text to the API server and draguard), and `=` or
#: `<<` as a value (no constructor: an error, so no config). A text holding any is PyYAML's
_READ_APART = Lazy(r"[0-9]{4}-|=|<<")


class Sharing(Value):
    """One resource the plugin shares: in ConfigMap key `key`, under `strategy`
    ('timeSlicing' or 'mps'), `replicas` pods per GPU; `offset` is where the strategy's key
    starts in the data value."""

    __slots__ = ("key", "strategy", "resource", "replicas", "offset")

    def __init__(self, key: str, strategy: str, resource: str, replicas: int, offset: int):
        self.key = key
        self.strategy = strategy
        self.resource = resource
        self.replicas = replicas
        self.offset = offset


@lru_cache(maxsize=None)
def _loaders() -> tuple[type, type]:
    """(libyaml's safe loader where PyYAML has it (its pure-Python twin otherwise: the same
    values), one that refuses aliases). Made at the first config read: a ConfigMap that holds
    none (nearly every one) does without PyYAML, whose import was 16 to 25 ms of a lint."""
    import yaml

    class NoAliases(yaml.SafeLoader):
        """A config read from tenant input: aliases (which can expand without bound) are refused."""

        def compose_node(self, parent: Node | None, index: int) -> Node | None:
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("aliases are not read in a device plugin config")
            return super().compose_node(parent, index)

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader), NoAliases


def _config(text: str) -> YamlMap:
    """The config a data value holds ({} where it holds none, or is not YAML), as PyYAML's
    safe loader reads it. A block-style text (nearly every config) is read by the block
    reader (sources.blockyaml), with the values the loader gives, without importing PyYAML
    (16 to 25 ms of each part of a lint); the rest by the loader: libyaml's C one for a text
    without `*`, which holds no alias (the pure-Python one cost a tenth of a second for the
    476 ConfigMaps of a 20,000-object lint), one that refuses aliases otherwise."""
    if len(text) > MAX_CONFIG_CHARS or "sharing" not in text:
        return {}
    read = None if _READ_APART.search(text) else read_whole(text)
    if read is not None:
        return mapping(read[0].data) if len(read) == 1 else {}  # more than one document: PyYAML's error
    import yaml

    safe, no_aliases = _loaders()
    try:
        return mapping(yaml.load(text, Loader=no_aliases if "*" in text else safe))  # noqa: S506 (safe loaders)
    except (yaml.YAMLError, RecursionError):
        return {}


def shared_resources(config_map: Manifest) -> list[Sharing]:
    """Each resource a device plugin config in the ConfigMap's `data` shares with replicas > 1."""
    found = []
    for key, text in mapping(config_map.data.get("data")).items():
        if not isinstance(key, str) or not isinstance(text, str):
            continue
        sharing = mapping(_config(text).get("sharing"))
        for strategy in ("timeSlicing", "mps"):
            for resource in mappings(mapping(sharing.get(strategy)).get("resources")):
                replicas, name = resource.get("replicas"), resource.get("name")
                if type(replicas) is int and replicas > 1 and isinstance(name, str):
                    found.append(Sharing(key, strategy, name, replicas, max(text.find(strategy), 0)))
    return found


#: GKE's node label for the GPU sharing strategy and the DRA driver's name for each
#: (GKE "share GPUs with multiple workloads": time-sharing, mps)
GKE_STRATEGY = "cloud.google.com/gke-gpu-sharing-strategy"
_GKE_STRATEGIES = {"time-sharing": "TimeSlicing", "mps": "MPS"}
#: the device plugin's config key for each strategy -> NVIDIA's GpuConfig sharing.strategy
_PLUGIN_STRATEGIES = {"timeSlicing": "TimeSlicing", "mps": "MPS"}


def gpu_shares(objects: Iterable[Manifest]) -> set[tuple[str, str]]:
    """(GpuConfig sharing strategy, where it was read) of each way the NVIDIA device plugin's
    configs in the ConfigMaps of `objects` share nvidia.com/gpu: what sharing_strategy
    reads, which a run finds once (ObjectSet.plugin_gpu_shares), not once per pod that asks."""
    return {(_PLUGIN_STRATEGIES[s.strategy], f"ConfigMap '{m.name}' key '{s.key}'") for m in objects
            if (m.group, m.kind) == ("", "ConfigMap") for s in m.derive(shared_resources)
            if s.resource == "nvidia.com/gpu"}


def sharing_strategy(labels: dict[str, set[str]], found: set[tuple[str, str]]) -> tuple[str, str] | str:
    """(the GpuConfig sharing strategy, where it was read) for pods that require node
    `labels` selecting shared nvidia.com/gpu replicas: GKE's strategy label, else the one
    strategy the NVIDIA device plugin's configs share nvidia.com/gpu with (`found`:
    gpu_shares). Otherwise the reason it is not known (a str)."""
    gke = labels.get(GKE_STRATEGY, set())
    if gke:
        strategies = {_GKE_STRATEGIES.get(value, "") for value in gke}
        if len(strategies) == 1 and "" not in strategies:
            [strategy] = strategies
            return strategy, f"{GKE_STRATEGY}={','.join(sorted(gke))}"
        return f"{GKE_STRATEGY} names {', '.join(sorted(gke))}, not one of time-sharing, mps"
    strategies = {strategy for strategy, _ in found}
    if len(strategies) == 1:
        return min(found)
    if not strategies:
        return "no NVIDIA device plugin config in the input says whether the replicas are time-sliced or MPS"
    return "the device plugin configs in the input share nvidia.com/gpu both ways (time-slicing and MPS)"
