"""What a run judges claims against: an inventory, or the built-in inventory of every GPU model
(one node per model, the whole GPU and every MIG profile at every placement), with the
allocator, its visible devices and explanations built once per run."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .. import __version__
from ..core.usercache import cached_json, source_stamp
from ..facts.shipped import DATA, gpu_models
from ..model.manifest import Manifest
from ..sources.loader import Source
from .allocator import Allocator, Features
from .devices import device_class_from
from .explain import explain_request, visible_devices
from .inventory import Inventory
from .storage import as_stored


@lru_cache(maxsize=1)
def builtin_manifests() -> tuple:
    """The built-in inventory's objects, generated once into the per-user cache (generating
    them cost a one-file lint about as much as judging it), keyed by the files they are
    generated from."""
    here = Path(__file__)
    sources = (here, here.with_name("generate.py"), Path(DATA, "gpus.yaml"), Path(DATA, "driver-attributes.yaml"))
    objects = cached_json("inventory", f"built-in {__version__} {source_stamp(*sources)}", _generate_builtin)
    source = Source("(built-in inventory)", "")
    # generated, not read: no positions to keep (a finding never points into it)
    return tuple(Manifest(source, i, obj, has_paths=False) for i, obj in enumerate(objects))


def _generate_builtin() -> list[dict]:
    from .generate import generate

    spec = {"nodes": [{"namePrefix": name.lower(), "count": 1, "gpus": {"model": name, "count": 1, "mig": "dynamic"}}
                      for name in gpu_models()]}
    return list(generate(spec))


@lru_cache(maxsize=4)
def _builtin_inventory(features: Features, disabled: frozenset) -> tuple[Inventory, list]:
    """The built-in inventory as a cluster with the `disabled` gates stores it, and its
    visible devices, built once per process and setting: a run only adds its own
    DeviceClasses, which change no device."""
    inventory = as_stored(Inventory.from_manifests(list(builtin_manifests())), disabled)
    allocator = inventory.allocator(features)
    return inventory, list(visible_devices(allocator, inventory.nodes).values())


@dataclass
class Target:
    inventory: Inventory
    is_builtin: bool
    allocator: Allocator
    devices: list
    explained: dict = field(default_factory=dict)

    @classmethod
    def build(cls, inventory: Inventory | None, set_classes: list[Manifest],
              features: Features = Features(), disabled: frozenset = frozenset()) -> "Target":
        """`inventory` as given (the engine adds the set's DeviceClasses to it), or the
        built-in GPU inventory with the set's DeviceClasses; stored as a cluster with the `disabled` gates
        stores slices, allocated with the cluster's `features`."""
        if inventory is not None:
            inventory = as_stored(inventory, disabled)
            allocator = inventory.allocator(features)
            return cls(inventory, False, allocator, list(visible_devices(allocator, inventory.nodes).values()))
        builtin, devices = _builtin_inventory(features, disabled)
        classes = dict(builtin.classes)
        classes.update((m.name, device_class_from(m)) for m in set_classes)
        inventory = dataclasses.replace(builtin, classes=classes)
        return cls(inventory, True, inventory.allocator(features), devices)

    @classmethod
    def for_release(cls, inventory: Inventory | None, set_classes: list[Manifest], kube_version: str,
                    gates: dict) -> "Target":
        """`build` as a cluster of `kube_version` with the feature `gates` set differently
        from its defaults allocates and stores."""
        from .variants import disabled_gates, variant_for

        return cls.build(inventory, set_classes, variant_for(kube_version, gates).features(),
                         disabled_gates(kube_version, gates))

    def with_allocated(self, allocated: set) -> "Target":
        """The same devices with `allocated` in use (their slices are shared, not copied)."""
        inventory = dataclasses.replace(self.inventory, allocated=set(allocated))
        allocator = inventory.allocator(self.allocator.features)
        return Target(inventory, self.is_builtin, allocator, self.devices)

    def explain(self, request, name: str):
        """The funnel of one request, computed once per request shape (replicated manifests
        repeat the same requests)."""
        key = (request.class_name, request.selectors, request.mode, request.count, request.admin_access,
               request.tolerations)
        if key not in self.explained:
            self.explained[key] = explain_request(self.allocator, request, name, self.devices)
        return self.explained[key].named(name)
