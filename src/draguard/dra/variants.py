"""Which upstream allocator a cluster runs. kube-scheduler turns its feature gates into
structured.Features (AllocatorFeatures in pkg/scheduler/framework/plugins/dynamicresources,
kubernetes v1.37.2), and structured.NewAllocator takes the first variant (stable,
incubating, experimental) whose SupportedFeatures cover every enabled feature.

draguard's allocator is the stable variant, with its four features switchable, and follows
the incubating variant's additions when the cluster runs it: its pool gathering and search
order, binding conditions, and consumable capacity (shared devices, capacity requests,
distinctAttribute); and the experimental variant's: list-typed attributes (constraints over
sets), optional node operations, compatibility groups and derived attributes."""

from __future__ import annotations

from dataclasses import dataclass

from ..facts.gates import gate_enabled
from .allocator import Features
from .storage import STORAGE_GATES

# structured.Features field -> the gates that must all be on for it
ALLOCATOR_FEATURES = {
    "AdminAccess": ("DRAAdminAccess",),
    "PrioritizedList": ("DRAPrioritizedList",),
    "PartitionableDevices": ("DRAPartitionableDevices",),
    "DeviceTaints": ("DRADeviceTaints",),
    "DeviceBindingAndStatus": ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
    "ConsumableCapacity": ("DRAConsumableCapacity",),
    "FractionalCapacityRange": ("DRAFractionalCapacityRange",),
    "ListTypeAttributes": ("DRAListTypeAttributes",),
    "OptionalNodeOperations": ("DRAOptionalNodeOperations",),
    "DerivedAttributes": ("DRADerivedAttributes",),
    "CompatibilityGroups": ("DRADeviceCompatibilityGroups",),
}
_STABLE = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})
_INCUBATING = _STABLE | {"DeviceBindingAndStatus", "ConsumableCapacity", "FractionalCapacityRange"}
VARIANTS = (("stable", _STABLE), ("incubating", _INCUBATING), ("experimental", frozenset(ALLOCATOR_FEATURES)))


@dataclass(frozen=True)
class Variant:
    name: str  # stable, incubating, experimental
    enabled: frozenset  # structured.Features fields that are on

    def features(self) -> Features:
        """draguard's allocator features: the stable ones as the cluster has them, and the
        variant (whose pool gathering draguard follows)."""
        return Features(admin_access="AdminAccess" in self.enabled, prioritized_list="PrioritizedList" in self.enabled,
                        partitionable_devices="PartitionableDevices" in self.enabled,
                        device_taints="DeviceTaints" in self.enabled, variant=self.name,
                        device_binding_and_status="DeviceBindingAndStatus" in self.enabled,
                        consumable_capacity="ConsumableCapacity" in self.enabled,
                        fractional_capacity_range="FractionalCapacityRange" in self.enabled,
                        list_type_attributes="ListTypeAttributes" in self.enabled,
                        optional_node_operations="OptionalNodeOperations" in self.enabled,
                        compatibility_groups="CompatibilityGroups" in self.enabled,
                        derived_attributes="DerivedAttributes" in self.enabled)


def disabled_gates(kube_version: str, overrides: dict | None = None) -> frozenset:
    """The gates (of those whose slice fields matter to allocation) off in this cluster: the
    API server stores slices without their fields (dra.storage)."""
    return frozenset(g for g in STORAGE_GATES if not gate_enabled(g, kube_version, overrides or {}))


def variant_for(kube_version: str, overrides: dict | None = None) -> Variant:
    overrides = overrides or {}
    return variant_of(feature for feature, gates in ALLOCATOR_FEATURES.items()
                      if all(gate_enabled(g, kube_version, overrides) for g in gates))


def variant_of(enabled) -> Variant:
    """The variant structured.NewAllocator picks for these enabled structured.Features."""
    enabled = frozenset(enabled)
    return Variant(next(name for name, supported in VARIANTS if enabled <= supported), enabled)
