"""The NVIDIA device plugin's own config file, as a ConfigMap holds it: which resources it
shares, and how. Mirrors NVIDIA/k8s-device-plugin api/config/v1 (sharing.go: `sharing` holds
`timeSlicing` and `mps`, each ReplicatedResources; replicas.go: `resources[]` of `name` and
`replicas`). A replica count above 1 hands one GPU to that many pods: time-slicing shares its
memory and fault domain with no isolation, MPS its memory with per-client limits."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from .manifest import Manifest
from .pods import mapping, mappings

#: a data value longer than this is not read as a config (the API server caps a whole
#: ConfigMap at 1 MiB)
MAX_CONFIG_CHARS = 1 << 20


@dataclass(frozen=True)
class Sharing:
    """One resource the plugin shares: in ConfigMap key `key`, under `strategy`
    ('timeSlicing' or 'mps'), `replicas` pods per GPU; `offset` is where the strategy's key
    starts in the data value."""

    key: str
    strategy: str
    resource: str
    replicas: int
    offset: int


class _NoAliases(yaml.SafeLoader):
    """A config read from tenant input: aliases (which can expand without bound) are refused."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("aliases are not read in a device plugin config")
        return super().compose_node(parent, index)


def _config(text: str) -> dict:
    if len(text) > MAX_CONFIG_CHARS or "sharing" not in text:
        return {}
    try:
        return mapping(yaml.load(text, Loader=_NoAliases))  # noqa: S506 (a SafeLoader)
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
