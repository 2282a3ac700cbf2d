"""List-typed device attributes (DRAListTypeAttributes, the experimental variant): selectors
see lists whatever the gate; matchAttribute and distinctAttribute compare sets with it and
find no value to compare in a list without it (upstream allocator_experimental.go,
constraint.go; the oracle differential covers them too)."""

from __future__ import annotations

from draguard.dra.devices import Attr, slice_from
from support.oracle import FEATURES, GPU, draguard_outcome
from support.dra import manifest


def _device(attributes: dict, name: str = "dev-0"):
    [device] = slice_from(manifest("ResourceSlice", "s", {
        "driver": GPU, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeName": "node-0",
        "devices": [{"name": name, "attributes": attributes}]})).devices
    return device


def test_lists_are_parsed_before_scalars_and_null_is_not_set():
    device = _device({"numa": {"ints": [0, 1]}, "links": {"strings": []}, "index": {"ints": None, "int": 3}})
    assert device.attribute(f"{GPU}/numa") == Attr("ints", (0, 1))
    assert device.attribute(f"{GPU}/links") == Attr("strings", ())  # an empty list is set (Go's non-nil slice)
    assert device.attribute(f"{GPU}/index") == Attr("int", 3)


def test_selectors_see_lists():
    from draguard.cel.env import compile_selector

    device = _device({"numa": {"ints": [0, 1]}, "links": {"strings": ["nvl0", "nvl1"]},
                      "fw": {"versions": ["1.0.0", "1.2.0"]}})
    for expression, expected in [(f"device.attributes['{GPU}'].numa.exists(n, n == 1)", True),
                                 (f"device.attributes['{GPU}'].numa.exists(n, n == 2)", False),
                                 (f"'nvl1' in device.attributes['{GPU}'].links", True),
                                 (f"device.attributes['{GPU}'].numa == [0, 1]", True),
                                 (f"device.attributes['{GPU}'].fw.exists(v, v.isGreaterThan(semver('1.1.0')))", True)]:
        assert compile_selector(expression).evaluate(device) is expected, expression


def _two_of(devices: list[dict], constraint: dict, **features) -> list | str:
    """The devices a claim for two with `constraint` gets, or the outcome's kind."""
    s = {"id": "lists", "resourceSlices": [{
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": GPU, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "nodeName": "node-0", "devices": devices}}],
         "deviceClasses": [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                            "spec": {}}],
         "claims": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": "c", "namespace": "default"},
                     "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                         "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}}],
                         "constraints": [constraint]}}}],
         "allocatedDevices": [], "allocatedShared": [], "node": {"metadata": {"name": "node-0", "labels": {}}},
         "features": dict(FEATURES, **features)}
    outcome = draguard_outcome(s)
    if outcome.kind != "allocated":
        return outcome.kind
    return [r["device"] for r in outcome.devices[0]["devices"]["results"]]


NUMA = [{"name": "dev-0", "attributes": {"numa": {"ints": [0, 1]}}},
        {"name": "dev-1", "attributes": {"numa": {"ints": [2, 3]}}},
        {"name": "dev-2", "attributes": {"numa": {"int": 1}}},
        {"name": "dev-3", "attributes": {"numa": {"strings": ["1"]}}}]


def test_match_attribute_wants_an_element_in_common_with_the_gate():
    match = {"matchAttribute": f"{GPU}/numa"}
    assert _two_of(NUMA, match, ListTypeAttributes=True) == ["dev-0", "dev-2"]  # {0,1} and {1}; "1" is a string
    assert _two_of(NUMA, match, ConsumableCapacity=True) == "unschedulable"  # a list has no value to compare
    assert _two_of([dict(NUMA[2], name="a"), dict(NUMA[2], name="b")], match) == ["a", "b"]  # scalars: equal


def test_distinct_attribute_wants_disjoint_sets_with_the_gate():
    distinct = {"distinctAttribute": f"{GPU}/numa"}
    assert _two_of(NUMA, distinct, ListTypeAttributes=True) == ["dev-0", "dev-1"]  # {0,1} and {2,3}
    # without it, a list after any other value collides: the first device's list, then a scalar
    assert _two_of(NUMA, distinct, ConsumableCapacity=True) == ["dev-0", "dev-2"]
