"""Consumable capacity (dra.capacity and the allocator's shared devices), case by case as
upstream's consumable_capacity.go decides them; the differential over generated scenarios is
tests/integration/test_oracle.py."""

from fractions import Fraction

import pytest
import yaml

from draguard.dra import capacity
from draguard.dra.allocator import Allocator, Features
from draguard.dra.devices import Node, claim_from, device_class_from, slice_from
from draguard.dra.inventory import Inventory, allocated_shares
from draguard.core.quantity import canonical_text, parse_quantity_text
from draguard.dra.state import ClusterState
from draguard.model.manifest import Manifest
from draguard.sources.loader import Source

GI = 2**30
CONSUMABLE = Features(consumable_capacity=True, variant="incubating")


def memory(value="40Gi", **policy):
    return capacity.device_capacities({"memory": {"value": value, **({"requestPolicy": policy} if policy else {})}})


@pytest.mark.parametrize("asked, policy, consumed", [
    (None, {}, 40 * GI),  # nothing asked, no default: the whole capacity
    (None, {"default": "8Gi"}, 8 * GI),
    ("15.5Gi", {"default": "4Gi", "validRange": {"min": "4Gi", "step": "4Gi"}}, 16 * GI),  # up to the next step
    ("1Gi", {"default": "4Gi", "validRange": {"min": "4Gi", "step": "4Gi"}}, 4 * GI),  # up to the minimum
    ("9Gi", {"default": "8Gi", "validValues": ["8Gi", "16Gi", "32Gi"]}, 16 * GI),  # up to the next valid value
    ("33Gi", {"default": "8Gi", "validValues": ["8Gi", "16Gi", "32Gi"]}, 33 * GI),  # none: as asked (then refused)
])
def test_what_a_request_consumes(asked, policy, consumed):
    [cap] = memory(**policy)
    assert capacity.consumed_by(None if asked is None else capacity.requested_capacities({"m": asked})["m"],
                                cap, False).value == consumed


@pytest.mark.parametrize("policy", [{}, {"default": "8Gi"}, {"validValues": ["10Gi", "20Gi"]}])
def test_what_a_request_asking_no_capacity_consumes_of_a_device_alone_is_remembered_as_computed(policy):
    """`alone` answers as consumption() with nothing asked and nothing consumed; the answer is
    a copy, so a caller adding to it changes no later answer."""
    capacities = memory(**policy)
    expected = capacity.consumption({}, None, capacities, None, False)
    first = capacity.alone(capacities, False)
    assert first == expected
    if expected is None:  # the whole 40Gi is none of the valid values: the device does not fit
        assert policy.get("validValues") and capacity.alone(capacities, False) is None
        return
    first["memory"] = None
    assert capacity.alone(capacities, False) == expected


def test_devices_writing_the_same_capacities_share_them_once_parsed():
    raw = {"memory": {"value": "10Gi"}, "multiprocessors": {"value": "16"}}
    a, b, c = (slice_from(Manifest.from_data({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                                "metadata": {"name": f"s-{i}"}, "spec": {
                                                    "driver": "gpu.example.com", "nodeName": "n",
                                                    "pool": {"name": f"p-{i}", "generation": 1, "resourceSliceCount": 1},
                                                    "devices": [{"name": "d", "capacity": dict(raw, **extra)}]}}))
                .devices[0] for i, extra in enumerate([{}, {}, {"memory": {"value": "20Gi"}}]))
    assert capacity.of_device(a) is capacity.of_device(b)
    assert capacity.of_device(c) != capacity.of_device(a)


def test_fractional_steps_use_milli_values_only_with_their_gate():
    [cores] = capacity.device_capacities({"cores": {"value": "8", "requestPolicy": {
        "default": "1", "validRange": {"min": "0.5", "step": "0.25"}}}})
    asked = parse_quantity_text("1.3")
    assert str(capacity.consumed_by(asked, cores, True)) == "1500m"  # in the step's format
    assert str(capacity.consumed_by(asked, cores, False)) == "2"  # Value() rounds each part up: 1 + 1 * 1


def test_fits_beside_what_others_consume():
    caps = memory(default="8Gi", validRange={"min": "4Gi", "step": "4Gi"})
    asked = {"memory": parse_quantity_text("20Gi")}
    assert capacity.fits({}, asked, caps, {}, False)
    assert capacity.fits({"memory": Fraction(12 * GI)}, asked, caps, {"memory": Fraction(8 * GI)}, False)
    assert not capacity.fits({"memory": Fraction(12 * GI)}, asked, caps, {"memory": Fraction(9 * GI)}, False)
    assert not capacity.fits({}, {"cores": parse_quantity_text("1")}, caps, {}, False)  # a capacity the device lacks
    steps = memory(default="8Gi", validRange={"min": "4Gi", "max": "16Gi", "step": "4Gi"})
    assert not capacity.fits({}, asked, steps, {}, False)  # over the range's max


@pytest.mark.parametrize("text, shown", [
    ("12.5Gi", "12800Mi"), ("16Gi", "16Gi"), ("1.5", "1500m"), ("1500m", "1500m"), ("1000", "1k"),
    ("1024", "1024"), ("1e3", "1e3"), ("0.5", "500m"), ("2000k", "2M"), ("0", "0"),
])
def test_quantities_read_as_upstream_prints_them(text, shown):
    """Quantity.String: the input kept when ParseQuantity finds it canonical, else
    CanonicalizeBytes (binary suffixes for whole BinarySI values, powers of 1000 otherwise)."""
    assert str(parse_quantity_text(text)) == shown


def test_canonical_text_of_new_quantities():
    assert canonical_text(Fraction(16 * GI), "BinarySI") == "16Gi"
    assert canonical_text(Fraction(1000), "BinarySI") == "1k"  # below 1Ki: decimal
    assert canonical_text(Fraction(3, 2), "DecimalExponent") == "1500e-3"  # powers of 1000 there too


def test_a_request_past_int64_aborts():
    with pytest.raises(capacity.CapacityError, match="exceeds MaxInt64"):
        capacity.fits({}, {"memory": parse_quantity_text("20E")}, memory("20Ei", default="4Gi",
                                                               validRange={"min": "4Gi", "step": "4Gi"}), {}, False)


SOURCE = Source("(test)", "")
SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                  "nodeName": "n", "devices": [{"name": "gpu-0", "allowMultipleAllocations": True, "capacity": {
                      "memory": {"value": "40Gi", "requestPolicy": {"default": "10Gi"}}}}]}}
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}


def claim_manifest(name: str, asked: str | None = None, count: int = 1) -> dict:
    body = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}
    if asked:
        body["capacity"] = {"requests": {"memory": asked}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "t"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": body}]}}}


def claim(name: str, asked: str | None = None, count: int = 1):
    return claim_from(Manifest(SOURCE, 0, claim_manifest(name, asked, count)))


def allocator(features=CONSUMABLE) -> Allocator:
    return Allocator([slice_from(Manifest(SOURCE, 0, SLICE))], {"gpu": device_class_from(Manifest(SOURCE, 1, CLASS))},
                     features=features)


def test_a_shared_device_serves_several_claims_until_its_capacity_is_spent():
    node = Node("n", {})
    results = allocator().allocate([claim("a", "20Gi"), claim("b"), claim("c")], node)
    shares = [r.results[0] for r in results]
    assert [s.device for s in shares] == ["gpu-0"] * 3 and len({s.share_id for s in shares}) == 3
    assert [s.as_json()["consumedCapacity"] for s in shares] == [{"memory": "20Gi"}, {"memory": "10Gi"},
                                                                {"memory": "10Gi"}]
    assert allocator().allocate([claim("a", "20Gi"), claim("b", "21Gi")], node) is None
    assert allocator().allocate([claim("a", count=2)], node) is None  # one request never takes one device twice
    stable = allocator(Features()).allocate([claim("a"), claim("b")], node)
    assert stable is None  # without the gate the device is not shared


def test_shares_held_by_allocated_claims_are_read_and_released():
    allocated = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "x", "namespace": "t"},
                 "status": {"allocation": {"devices": {"results": [
                     {"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": "gpu-0",
                      "shareID": "5f0e8f8e-0000-4000-8000-000000000000", "consumedCapacity": {"memory": "30Gi"}}]}}}}
    [(device, consumed)] = allocated_shares(allocated)
    assert device == ("gpu.example.com", "p", "gpu-0") and consumed["memory"].value == 30 * GI
    inventory = Inventory.from_manifests([Manifest(SOURCE, i, o) for i, o in enumerate([SLICE, CLASS, allocated])])
    assert not inventory.allocated  # a share, not the whole device
    state = ClusterState(inventory, CONSUMABLE)
    gpu = ("gpu.example.com", "p", "gpu-0")
    assert gpu in state.held and gpu not in state.in_use  # held (views count it), yet open to more shares
    node = inventory.nodes[0]
    assert state.attempt([claim("a", "10Gi")], node).allocated
    assert not state.attempt([claim("a", "11Gi")], node).allocated
    outcome = state.attempt([claim("a", "10Gi")], node)
    state.commit("t/a", outcome.results[0])
    assert not state.attempt([claim("b", "1Gi")], node).allocated
    state.release("t/a")
    assert state.attempt([claim("b", "10Gi")], node).allocated


def test_allocate_shows_shares_and_says_when_capacity_is_what_is_missing(tmp_path, cli):
    inventory, claims = tmp_path / "inventory.yaml", tmp_path / "claims.yaml"
    inventory.write_text(yaml.safe_dump_all([SLICE, CLASS]))
    claims.write_text(yaml.safe_dump_all([claim_manifest("a", "30Gi"), claim_manifest("b", "20Gi")]))
    done = cli("allocate", claims, "--inventory", inventory)
    assert done.code == 1
    assert "t/a: allocated on n: gpu=p/gpu-0 (share: memory 30Gi)" in done.out
    assert "capacity left for what it asks: 0; nothing left after capacity left for what it asks" in done.out


def test_a_capacity_written_as_true_or_a_list_is_refused_whatever_was_read_before():
    """parse_quantity_text is remembered by value and type: `true` read after `1` (one key to
    an untyped memo) was read as 1, and a list was a TypeError rather than a refusal."""
    from draguard.core.quantity import QuantityError

    assert str(parse_quantity_text(1)) == "1"
    for odd in (True, [1], {"value": 1}):
        with pytest.raises(QuantityError):
            parse_quantity_text(odd)
