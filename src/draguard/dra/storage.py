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

# gate -> the slice and device fields it carries, each with the value a slice stored without
# it has (dropDisabledFields); a device's published taints stand for its `taints` field
_SLICE_FIELDS: dict[str, dict[str, object]] = {
    "DRAPartitionableDevices": {"shared_counters": (), "per_device_node_selection": None,
                                "uses_compatibility_groups": False},  # named inside consumesCounters
    "DRADeviceCompatibilityGroups": {"uses_compatibility_groups": False},
}
_DEVICE_FIELDS: dict[str, dict[str, object]] = {
    "DRAPartitionableDevices": {"consumes_counters": [], "node_name": None, "node_selector": None, "all_nodes": False},
    "DRADeviceTaints": {"published_taints": ()},
    "DRADeviceBindingConditions": {"binding_conditions": (), "binding_failure_conditions": (), "binds_to_node": False},
    "DRAConsumableCapacity": {"allow_multiple_allocations": False},
}
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
    effects: dict[str, str] = {}
    for entry in gated_fields("slice"):
        effects.setdefault(entry.gate, entry.effect)
    return [f"{gate} is off, so the API server stores these slices without its fields: {effects[gate]}"
            for gate in STORAGE_GATES if gate in disabled and _has_fields(inventory, gate)]


def _has_fields(inventory: Inventory, gate: str) -> bool:
    if gate == "DRADeviceTaints" and inventory.taint_rules:
        return True
    slice_fields, device_fields = _SLICE_FIELDS.get(gate, {}), _DEVICE_FIELDS.get(gate, {})
    return any(any(getattr(s, f) != empty for f, empty in slice_fields.items()) or
               any(getattr(d, f) != empty for d in s.devices for f, empty in device_fields.items())
               for s in inventory.slices)


def _dropping(table: dict, disabled: frozenset) -> dict:
    return {f: empty for gate in STORAGE_GATES if gate in disabled for f, empty in table.get(gate, {}).items()}


def _slice(s: Slice, disabled: frozenset) -> Slice:
    devices = [_device(d, disabled) for d in s.devices]
    changes = _dropping(_SLICE_FIELDS, disabled)
    if all(new is old for new, old in zip(devices, s.devices)) and _holds_none(s, changes):
        return s  # nothing to drop: the same slice (a large inventory is not copied)
    return dataclasses.replace(s, devices=devices, **changes)


def _holds_none(obj, changes: dict) -> bool:
    return all(getattr(obj, f) == empty for f, empty in changes.items())


def _device(d: Device, disabled: frozenset) -> Device:
    changes = _dropping(_DEVICE_FIELDS, disabled)
    if _holds_none(d, changes):
        return d
    # `taints` is what the scheduler sees: the published ones (gone with the gate), and the
    # rules' applied again by as_stored; the memo caches belong to the old device
    return dataclasses.replace(d, taints=changes.pop("published_taints", d.published_taints), _cel=None,
                               _content=None, **changes)
