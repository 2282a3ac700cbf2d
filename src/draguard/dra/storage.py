"""Slices as a cluster stores them. Where a feature gate is off, the API server drops that
gate's fields when a ResourceSlice is written (dropDisabledFields in
pkg/registry/resource/resourceslice/strategy.go, listed in facts/data/feature-gates.yaml): a
slice written with shared counters is stored without them while DRAPartitionableDevices is off,
so its partitions can then be allocated together. draguard allocates from an inventory as such
a cluster would hold it."""

from __future__ import annotations

import dataclasses

from ..facts.gates import gated_fields
from .devices import Device, Slice
from .inventory import Inventory

# the gates whose dropped slice fields change what the allocator can do
STORAGE_GATES = ("DRAPartitionableDevices", "DRADeviceTaints", "DRADeviceBindingConditions", "DRAConsumableCapacity",
                 "DRADeviceCompatibilityGroups")


def as_stored(inventory: Inventory, disabled: frozenset) -> Inventory:
    """`inventory` with the fields of the `disabled` gates dropped, as the API server would
    store its slices (DeviceTaintRules take no effect either while DRADeviceTaints is off)."""
    if not disabled & set(STORAGE_GATES):
        return inventory
    stored = dataclasses.replace(inventory, slices=[_slice(s, disabled) for s in inventory.slices],
                                 taint_rules=[] if "DRADeviceTaints" in disabled else inventory.taint_rules)
    stored.apply_taint_rules()
    return stored


def dropped(inventory: Inventory, disabled: frozenset) -> list[str]:
    """What storing the inventory changes, a sentence per gate that drops fields it has."""
    present = {
        "DRAPartitionableDevices": any(s.shared_counters or s.per_device_node_selection or
                                       any(d.consumes_counters or d.node_name or d.node_selector or d.all_nodes
                                           for d in s.devices) for s in inventory.slices),
        "DRADeviceTaints": bool(inventory.taint_rules) or any(d.published_taints for s in inventory.slices
                                                              for d in s.devices),
        "DRADeviceBindingConditions": any(d.binding_conditions or d.binds_to_node for s in inventory.slices
                                          for d in s.devices),
        "DRAConsumableCapacity": any(d.allow_multiple_allocations for s in inventory.slices for d in s.devices),
        "DRADeviceCompatibilityGroups": any(s.uses_compatibility_groups for s in inventory.slices),
    }
    effects: dict[str, str] = {}
    for entry in gated_fields("slice"):
        effects.setdefault(entry.gate, entry.effect)
    return [f"{gate} is off, so the API server stores these slices without its fields: {effects[gate]}"
            for gate in STORAGE_GATES if gate in disabled and present[gate]]


def _slice(s: Slice, disabled: frozenset) -> Slice:
    partitionable = "DRAPartitionableDevices" not in disabled
    return dataclasses.replace(
        s, devices=[_device(d, disabled) for d in s.devices],
        shared_counters=s.shared_counters if partitionable else {},
        per_device_node_selection=s.per_device_node_selection and partitionable,
        uses_compatibility_groups=(s.uses_compatibility_groups and partitionable
                                   and "DRADeviceCompatibilityGroups" not in disabled))


def _device(d: Device, disabled: frozenset) -> Device:
    changes: dict = {"_cel": None, "_content": None}
    if "DRAPartitionableDevices" in disabled:
        changes.update(consumes_counters=[], node_name=None, node_selector=None, all_nodes=False)
    if "DRADeviceTaints" in disabled:
        changes["taints"] = ()
    else:
        changes["taints"] = d.published_taints  # the rules' taints are applied again
    if "DRADeviceBindingConditions" in disabled:
        changes.update(binding_conditions=(), binding_failure_conditions=(), binds_to_node=False)
    if "DRAConsumableCapacity" in disabled:
        changes["allow_multiple_allocations"] = False
    return dataclasses.replace(d, **changes)
