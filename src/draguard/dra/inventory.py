"""Inventories: the devices claims are allocated from.

`Inventory.from_manifests` turns linted or given objects (ResourceSlices, Nodes,
DeviceClasses, DeviceTaintRules, allocated ResourceClaims) into what the allocator needs;
`dra.generate` writes such objects from a short spec."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache

from ..facts.shipped import device_classes
from .allocator import Allocator, Features, SharedUse
from .devices import DeviceClass, ModelError, Node, device_class_from, device_taint_rule_from, node_from, slice_from
from .nodeselector import NodeSelectorError
from ..core.quantity import QuantityError, parse_quantity_text
from ..model.pods import items, mapping


class InventoryError(ValueError):
    """An inventory or inventory spec draguard cannot use; `container`/`key` locate the
    offending field of a spec read with positions."""

    def __init__(self, message: str, container=None, key=None):
        super().__init__(message)
        self.container, self.key = container, key


# --- inventories for the allocator -----------------------------------------------------------

#: (group, kind) of what describes devices, without the claims that hold them: a cluster's
#: inventory for "could this claim ever fit" (the audit, the webhook's cache)
DEVICE_KINDS = frozenset({("resource.k8s.io", "ResourceSlice"), ("", "Node"), ("resource.k8s.io", "DeviceClass"),
                          ("resource.k8s.io", "DeviceTaintRule")})

@dataclass
class Inventory:
    slices: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    classes: dict = field(default_factory=dict)
    allocated: set = field(default_factory=set)
    shared: SharedUse = field(default_factory=SharedUse)  # shares of devices (results with a shareID)
    taint_rules: list = field(default_factory=list)

    @classmethod
    def from_manifests(cls, manifests, with_builtin_classes: bool = True) -> "Inventory":
        """InventoryError (with file:line:column) for an object the allocator cannot model."""
        inventory = cls()
        if with_builtin_classes:
            inventory.classes.update(builtin_classes())
        for m in manifests:
            try:
                inventory._add(m)
            except ModelError as exc:
                where = m.location(exc.container, exc.key, value=True) if exc.container is not None \
                    else m.location()
                position = f":{where.line}:{where.column}" if where.line else ""
                raise InventoryError(f"{where.file}{position}: {m.kind} '{m.name}': {exc}") from None
        inventory.apply_taint_rules()
        known = {n.name for n in inventory.nodes}
        for s in inventory.slices:  # nodes that publish slices exist, even if not listed
            for name in [s.node_name] + [d.node_name for d in s.devices]:
                if name and name not in known:
                    inventory.nodes.append(Node(name, {"kubernetes.io/hostname": name}))
                    known.add(name)
        inventory.nodes.sort(key=lambda n: n.name)
        return inventory

    def allocator(self, features: Features, **options) -> Allocator:
        """An allocator over these devices and classes, with what allocated claims hold (whole
        devices and shares); `options` as Allocator takes them (budget, pool_order)."""
        return Allocator(self.slices, self.classes, self.allocated, features, shared=self.shared, **options)

    def _add(self, m) -> None:
        if m.group == "resource.k8s.io" and m.kind == "ResourceSlice":
            self.slices.append(_checked(slice_from(m), m))
        elif m.group == "resource.k8s.io" and m.kind == "DeviceClass":
            self.classes[m.name] = device_class_from(m)
        elif m.group == "" and m.kind == "Node":
            self.nodes.append(node_from(m))
        elif m.group == "resource.k8s.io" and m.kind == "ResourceClaim":
            self.allocated.update(allocated_devices(m.data))
            for device_id, consumed in allocated_shares(m.data):
                self.shared.add(device_id, consumed)
        elif m.group == "resource.k8s.io" and m.kind == "DeviceTaintRule":
            self.taint_rules.append(device_taint_rule_from(m))

    def apply_taint_rules(self) -> None:
        """Devices as the scheduler sees them: their published taints plus every
        DeviceTaintRule's that selects them (KEP-5055). A device whose taints change is
        replaced by a copy, and its slice by one holding it: inventories copied from one
        another share their devices (a simulation's world, a re-run for a remedy), so none
        is changed in place."""
        slices = []
        for s in self.slices:
            devices = [d.tainted(d.published_taints + tuple(rule.taint for rule in self.taint_rules
                                                             if rule.selects(d, self.classes))) for d in s.devices]
            slices.append(s if all(new is old for new, old in zip(devices, s.devices))
                          else dataclasses.replace(s, devices=devices))
        self.slices = slices


def _checked(s, manifest):
    """A slice whose node selectors parse: upstream would fail every allocation that meets
    one that does not, so an inventory holding one is refused at its position."""
    spec = mapping(manifest.data.get("spec"))
    if isinstance(s.parsed_selector, NodeSelectorError):
        raise ModelError(f"nodeSelector: {s.parsed_selector}", spec, "nodeSelector")
    devices = items(spec.get("devices"))
    for device, raw in zip(s.devices, devices):
        if isinstance(device.parsed_selector, NodeSelectorError):
            raise ModelError(f"device {device.name} nodeSelector: {device.parsed_selector}", raw, "nodeSelector")
    return s


def _results(claim: dict) -> list:
    """The device results of a ResourceClaim's status.allocation that hold a device
    (adminAccess results excluded, as the scheduler excludes them)."""
    status = mapping(claim.get("status"))
    allocation = mapping(status.get("allocation"))
    devices = mapping(allocation.get("devices"))
    return [r for r in devices.get("results") or [] if isinstance(r, dict) and not r.get("adminAccess")]


def _device_id(result: dict) -> tuple:
    return str(result.get("driver")), str(result.get("pool")), str(result.get("device"))


def allocated_devices(claim: dict) -> set:
    """Device ids a ResourceClaim's status.allocation holds whole (results without a shareID)."""
    return {_device_id(r) for r in _results(claim) if r.get("shareID") is None}


def allocated_shares(claim: dict) -> list:
    """(device id, consumed capacity or None) of each share the allocation holds (a result
    with a shareID: DRAConsumableCapacity; allocateddevices.go foreachAllocatedDevice)."""
    shares = []
    for result in _results(claim):
        if result.get("shareID") is None:
            continue
        consumed = result.get("consumedCapacity")
        try:
            amounts = {str(k): parse_quantity_text(v) for k, v in consumed.items()} if isinstance(consumed, dict) \
                else None
        except QuantityError:
            amounts = None  # the API server does not store such a result
        shares.append((_device_id(result), amounts))
    return shares


@lru_cache(maxsize=None)
def _builtin_classes() -> tuple:
    return tuple(DeviceClass(name, [entry["selector"]]) for name, entry in device_classes().items())


def builtin_classes() -> dict:
    return {c.name: c for c in _builtin_classes()}

