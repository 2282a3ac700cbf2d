"""Derived attributes (DRADerivedAttributes): the output types upstream's compiler accepts,
the values valToDeviceAttribute makes, and constraints that read them in the allocator. The
differential against upstream is tests/integration/test_oracle.py (regressions and generator)."""

import pytest

from draguard.dra.allocator import AllocationError, Allocator, Features
from draguard.cel.env import CelRuntimeError
from draguard.dra.derived import compile_derived
from draguard.dra.devices import Attr, Node, claim_from, device_class_from, device_from, slice_from
from draguard.model.manifest import Manifest
from draguard.sources.loader import Source

GPU = "gpu.example.com"
DEVICE = device_from({"name": "g0", "attributes": {"index": {"int": 3}, "model": {"string": "a"},
                                                   "version": {"version": "1.2.3"}, "numa": {"ints": [0, 1]}},
                      "capacity": {"memory": {"value": "40Gi"}}}, GPU, "p")


@pytest.mark.parametrize("expression, value", [
    (f"device.attributes['{GPU}'].index / 2", Attr("int", 1)),
    (f"device.attributes['{GPU}'].model + '-x'", Attr("string", "a-x")),
    (f"device.attributes['{GPU}'].index > 2", Attr("bool", True)),
    (f"device.attributes['{GPU}'].version", Attr("version", "1.2.3")),  # semver, as its text
    ("semver('1.2.3-rc.1+build.5')", Attr("version", "1.2.3-rc.1+build.5")),  # build metadata kept
    (f"device.attributes['{GPU}'].numa", Attr("ints", (0, 1))),
    (f"[device.attributes['{GPU}'].model, dyn('b')]", Attr("strings", ("a", "b"))),
    ("[]", Attr("strings", ())),  # an empty list is a list of strings
    (f"dyn(device.attributes['{GPU}'].index)", Attr("int", 3)),  # dyn compiles; the value decides
])
def test_values_become_device_attributes(expression, value):
    compiled = compile_derived(expression)
    assert compiled.error is None and compiled.evaluate(DEVICE) == value


@pytest.mark.parametrize("expression, type_name", [
    ("1.5", "double"),
    ("1u", "uint"),
    (f"device.capacity['{GPU}'].memory", "kubernetes.Quantity"),
    ("[[1]]", "list(list(int))"),
    ("{'a': 1}", "map(string, int)"),
])
def test_other_output_types_do_not_compile(expression, type_name):
    error = compile_derived(expression).error
    assert error is not None and error.message == (
        "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of these scalars, "
        f"not {type_name}")


@pytest.mark.parametrize("expression, message", [
    ("dyn(2.5)", "unsupported CEL return type"),
    ("dyn([2.5])", "unsupported list element type"),
    ("[dyn(1), dyn('a')]", "expected list element at index 1 to be int"),
    (f"device.attributes['{GPU}'].missing", "missing"),
])
def test_values_of_other_types_fail_when_evaluated(expression, message):
    with pytest.raises(CelRuntimeError, match=message):
        compile_derived(expression).evaluate(DEVICE)


def _manifest(kind: str, spec: dict) -> Manifest:
    return Manifest(Source("(test)", ""), 0, {"apiVersion": "resource.k8s.io/v1", "kind": kind,
                                              "metadata": {"name": kind.lower(), "namespace": "default"},
                                              "spec": spec})


def _allocate(expression: str, constraint: str, derived: bool = True):
    """Two of four GPUs (index 0-3, model a a b b) for one request deriving bucket/x."""
    devices = [{"name": f"g{i}", "attributes": {"index": {"int": i}, "model": {"string": "ab"[i // 2]}}}
               for i in range(4)]
    slices = [slice_from(_manifest("ResourceSlice", {"driver": GPU, "nodeName": "n", "devices": devices,
                                                     "pool": {"name": "p", "generation": 1,
                                                              "resourceSliceCount": 1}}))]
    gpu = device_class_from(_manifest("DeviceClass", {"selectors": [{"cel": {"expression": "true"}}]}))
    claim = claim_from(_manifest("ResourceClaim", {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "deviceclass", "count": 2, "derivedAttributes": [
            {"name": "bucket/x", "expression": expression}]}}],
        "constraints": [{constraint: "bucket/x"}]}}))
    allocator = Allocator(slices, {"deviceclass": gpu}, set(),
                          features=Features(derived_attributes=derived, variant="experimental"))
    results = allocator.allocate([claim], Node("n", {}))
    return None if results is None else [d["device"] for d in results[0].as_json()["devices"]["results"]]


def test_constraints_read_the_derived_attribute():
    assert _allocate(f"device.attributes['{GPU}'].index / 2", "matchAttribute") == ["g0", "g1"]
    assert _allocate(f"device.attributes['{GPU}'].index >= 3", "matchAttribute") == ["g0", "g1"]
    assert _allocate(f"device.attributes['{GPU}'].model", "distinctAttribute") == ["g0", "g2"]
    assert _allocate("'one'", "distinctAttribute") is None


def test_a_derived_attribute_that_fails_ends_the_allocation():
    with pytest.raises(AllocationError, match="evaluate derived attribute bucket/x on device gpu.example.com/p/g1"):
        _allocate(f"device.attributes['{GPU}'].index == 0 ? 1 : dyn(2.5)", "matchAttribute")
    with pytest.raises(AllocationError, match="compile derived attribute bucket/x failed: must evaluate"):
        _allocate("1.5", "matchAttribute")
    with pytest.raises(AllocationError, match="the feature is disabled"):
        _allocate("1", "matchAttribute", derived=False)
