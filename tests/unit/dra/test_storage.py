"""Slices as a cluster with gates off stores them (the API server drops those gates' fields)."""

from draguard.dra.inventory import Inventory
from draguard.dra.storage import as_stored, dropped

from support.dra import dev, slice_


def test_fields_of_disabled_gates_are_dropped_and_nothing_else():
    device = dev("gpu-0", {"model": "a"}, consumesCounters=[{"counterSet": "gpu", "counters": {"memory": {"value": "1"}}}],
                 bindingConditions=["attached"], bindsToNode=True)
    original = slice_("s", [device], sharedCounters=[{"name": "gpu", "counters": {"memory": {"value": "8"}}}])
    inventory = Inventory(slices=[original])
    stored = as_stored(inventory, frozenset({"DRAPartitionableDevices", "DRADeviceBindingConditions"}))
    [s] = stored.slices
    [d] = s.devices
    assert s.shared_counters == () and d.consumes_counters == [] and d.binding_conditions == () and not d.binds_to_node
    [before] = original.devices
    assert d.id == before.id and d.attributes == before.attributes
    assert original.shared_counters and before.consumes_counters  # the inventory given is untouched
    assert as_stored(inventory, frozenset()) is inventory
    lines = dropped(inventory, frozenset({"DRAPartitionableDevices", "DRADeviceTaints"}))
    assert [line.split(" is off")[0] for line in lines] == ["DRAPartitionableDevices"]  # no taints to drop
