"""Allocation scenarios with the outcomes of the upstream structured allocator (stable
variant), written from the facts of its shared test cases (k8s.io/dynamic-resource-allocation
structured/internal/allocatortesting): same inputs, same success or failure, same devices."""

import pytest

from draguard.dra.allocator import AllocationError, Features

from support.dra import allocator, claim, dev, device_class, devices_of, first, node, req, slice_

N1 = node("node-1")
TWO = [dev("gpu-0", {"model": "a", "memory-gb": 40}), dev("gpu-1", {"model": "b", "memory-gb": 80})]


def test_simple_allocation_with_node_selector():
    [result] = allocator([slice_("s", TWO)]).allocate([claim("c", req())], N1)
    assert devices_of([result]) == [["req=node-1/gpu-0"]]
    assert result.node_selector == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}


def test_other_node_and_too_many_devices():
    a = allocator([slice_("s", TWO)])
    assert a.allocate([claim("c", req())], node("node-2")) is None
    assert a.allocate([claim("c", req(count=3))], N1) is None


def test_devices_are_not_shared_between_claims_or_with_allocated_ones():
    a = allocator([slice_("s", TWO)], allocated={("gpu.example.com", "node-1", "gpu-0")})
    assert devices_of(a.allocate([claim("c", req())], N1)) == [["req=node-1/gpu-1"]]
    assert a.allocate([claim("a", req()), claim("b", req())], N1) is None


def test_request_selectors_and_class_selectors_both_apply():
    classes = [device_class("big", "device.attributes['gpu.example.com']['memory-gb'] >= 80")]
    a = allocator([slice_("s", TWO)], classes)
    assert devices_of(a.allocate([claim("c", req(device_class="big"))], N1)) == [["req=node-1/gpu-1"]]
    assert a.allocate([claim("c", req(device_class="big", selectors=["device.attributes['gpu.example.com'].model == 'a'"]))], N1) is None


def test_cel_runtime_error_aborts_the_allocation():
    with pytest.raises(AllocationError, match="CEL runtime error"):
        allocator([slice_("s", TWO)]).allocate([claim("c", req(selectors=["device.attributes['gpu.example.com'].nope == 1"]))], N1)


def test_missing_class_is_an_error():
    with pytest.raises(AllocationError, match="could not retrieve device class missing"):
        allocator([slice_("s", TWO)]).allocate([claim("c", req(device_class="missing"))], N1)


def test_all_mode_takes_every_matching_device_and_fails_if_one_is_taken():
    a = allocator([slice_("s", TWO)])
    assert devices_of(a.allocate([claim("c", req(mode="All"))], N1)) == [["req=node-1/gpu-0", "req=node-1/gpu-1"]]
    taken = allocator([slice_("s", TWO)], allocated={("gpu.example.com", "node-1", "gpu-1")})
    assert taken.allocate([claim("c", req(mode="All"))], N1) is None
    assert allocator([slice_("s", [])]).allocate([claim("c", req(mode="All"))], N1) is None


def test_all_mode_on_an_incomplete_pool_is_an_error():
    with pytest.raises(AllocationError, match="currently being updated"):
        allocator([slice_("s", TWO, count=2)]).allocate([claim("c", req(mode="All"))], N1)


def test_admin_access_may_use_allocated_devices_but_not_twice_in_one_claim():
    a = allocator([slice_("s", TWO[:1])], allocated={("gpu.example.com", "node-1", "gpu-0")})
    assert devices_of(a.allocate([claim("c", req(admin=True))], N1)) == [["req=node-1/gpu-0"]]
    assert a.allocate([claim("c", req(admin=True), req("r2", admin=True))], N1) is None
    [result] = a.allocate([claim("c", req(admin=True))], N1)
    assert result.results[0].admin_access is True


def test_match_attribute_constraint_with_backtracking():
    devices = [dev("gpu-0", {"numa": 0}), dev("gpu-1", {"numa": 1}), dev("gpu-2", {"numa": 1})]
    a = allocator([slice_("s", devices)])
    c = claim("c", req("a"), req("b"), constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    assert devices_of(a.allocate([c], N1)) == [["a=node-1/gpu-1", "b=node-1/gpu-2"]]
    only_a = claim("c", req("a"), req("b"), constraints=[{"requests": ["b"], "matchAttribute": "numa"}])
    assert devices_of(a.allocate([only_a], N1)) == [["a=node-1/gpu-0", "b=node-1/gpu-1"]]


def test_match_attribute_missing_on_device_fails():
    c = claim("c", req(), constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    assert allocator([slice_("s", TWO)]).allocate([c], N1) is None


def test_distinct_attribute_constraint_with_the_consumable_capacity_gate():
    """The incubating variant's distinctAttribute (upstream constraint.go): no two devices with
    one value, values of different types never collide; the stable variant has no such
    constraint and reports it empty."""
    devices = [dev("gpu-0", {"numa": 0}), dev("gpu-1", {"numa": 0}), dev("gpu-2", {"numa": 1}),
               dev("gpu-3", {"numa": True})]
    gated = Features(consumable_capacity=True, variant="incubating")
    c = claim("c", req(count=2), constraints=[{"distinctAttribute": "gpu.example.com/numa"}])
    assert devices_of(allocator([slice_("s", devices)], features=gated).allocate([c], N1)) == [
        ["req=node-1/gpu-0", "req=node-1/gpu-2"]]
    three = claim("c", req(count=3), constraints=[{"distinctAttribute": "numa"}])  # 0, 1 and the bool True
    assert devices_of(allocator([slice_("s", devices)], features=gated).allocate([three], N1)) == [
        ["req=node-1/gpu-0", "req=node-1/gpu-2", "req=node-1/gpu-3"]]
    assert allocator([slice_("s", devices[:2])], features=gated).allocate([c], N1) is None
    with pytest.raises(AllocationError, match="empty constraint"):
        allocator([slice_("s", devices)]).allocate([c], N1)


def test_first_available_takes_the_first_subrequest_that_fits():
    a = allocator([slice_("s", TWO)])
    c = claim("c", first("gpu", req("two", count=2), req("one", count=1)))
    assert devices_of(a.allocate([c], N1)) == [["gpu/two=node-1/gpu-0", "gpu/two=node-1/gpu-1"]]
    busy = allocator([slice_("s", TWO)], allocated={("gpu.example.com", "node-1", "gpu-0")})
    assert devices_of(busy.allocate([c], N1)) == [["gpu/one=node-1/gpu-1"]]


def test_first_available_needs_the_feature():
    c = claim("c", first("gpu", req("one")))
    with pytest.raises(AllocationError, match="DRAPrioritizedList"):
        allocator([slice_("s", TWO)], features=Features(prioritized_list=False)).allocate([c], N1)


@pytest.mark.parametrize("effect, tolerations, fits", [
    ("NoSchedule", None, False),
    ("NoExecute", None, False),
    ("NoSchedule", [{"key": "maintenance", "operator": "Exists"}], True),
    ("NoSchedule", [{"key": "maintenance", "operator": "Equal", "value": "other"}], False),
    ("NoSchedule", [{"key": "maintenance", "value": "now", "effect": "NoSchedule"}], True),
])
def test_device_taints_and_tolerations(effect, tolerations, fits):
    tainted = dev("gpu-0", taints=[{"key": "maintenance", "value": "now", "effect": effect}])
    result = allocator([slice_("s", [tainted])]).allocate([claim("c", req(tolerations=tolerations))], N1)
    assert (result is not None) is fits


def test_shared_counters_limit_partitions():
    counters = slice_("counters", [], sharedCounters=[{"name": "mem", "counters": {"slices": {"value": "4"}}}], count=2)
    parts = slice_("parts", [dev(f"part-{i}", consumesCounters=[{"counterSet": "mem", "counters": {"slices": {"value": "2"}}}])
                             for i in range(3)], count=2)
    a = allocator([counters, parts])
    assert devices_of(a.allocate([claim("a", req()), claim("b", req())], N1)) == [["req=node-1/part-0"], ["req=node-1/part-1"]]
    assert a.allocate([claim("a", req()), claim("b", req()), claim("c", req())], N1) is None
    used = allocator([counters, parts], allocated={("gpu.example.com", "node-1", "part-2")})
    assert used.allocate([claim("a", req()), claim("b", req())], N1) is None


def test_counters_that_do_not_exist_make_the_pool_invalid():
    parts = slice_("parts", [dev("p", consumesCounters=[{"counterSet": "nope", "counters": {"x": {"value": "1"}}}])])
    with pytest.raises(AllocationError, match="invalid resource pools"):
        allocator([parts]).allocate([claim("c", req())], N1)


def test_duplicate_device_names_make_the_pool_invalid():
    with pytest.raises(AllocationError, match="invalid resource pools"):
        allocator([slice_("a", [dev("gpu-0")], count=2), slice_("b", [dev("gpu-0")], count=2)]).allocate(
            [claim("c", req())], N1)


def test_only_the_newest_generation_counts_and_incomplete_pools_are_skipped():
    old = slice_("old", [dev("old-gpu")], generation=1)
    new = slice_("new", [dev("new-gpu")], generation=2)
    assert devices_of(allocator([old, new]).allocate([claim("c", req())], N1)) == [["req=node-1/new-gpu"]]
    assert allocator([slice_("half", TWO, count=2)]).allocate([claim("c", req())], N1) is None


def test_network_attached_slices_by_node_selector_and_all_nodes():
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    net = slice_("net", [dev("nic-0")], node=None, pool="fabric", nodeSelector=selector)
    a = allocator([net])
    [result] = a.allocate([claim("c", req())], node("n", rack="r1"))
    assert result.node_selector == {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    assert a.allocate([claim("c", req())], node("n", rack="r2")) is None
    everywhere = allocator([slice_("all", [dev("x")], node=None, pool="p", allNodes=True)])
    [result] = everywhere.allocate([claim("c", req())], node("any"))
    assert result.node_selector is None


def test_per_device_node_selection():
    s = slice_("s", [dev("a", nodeName="node-2"), dev("b", nodeName="node-1")], node=None, pool="p",
               perDeviceNodeSelection=True)
    [result] = allocator([s]).allocate([claim("c", req())], N1)
    assert devices_of([result]) == [["req=p/b"]] and result.node_selector["nodeSelectorTerms"][0]["matchFields"][0][
        "values"] == ["node-1"]


def test_config_from_class_then_claim():
    class_config = [{"opaque": {"driver": "gpu.example.com", "parameters": {"sharing": "timeSlicing"}}}]
    claim_config = [{"requests": ["req"], "opaque": {"driver": "gpu.example.com", "parameters": {"x": 1}}}]
    a = allocator([slice_("s", TWO)], [device_class("gpu", config=class_config)])
    [result] = a.allocate([claim("c", req(), config=claim_config)], N1)
    assert [c["source"] for c in result.config] == ["FromClass", "FromClaim"]
    assert all(c["requests"] == [] for c in result.config)  # they apply to every request


def test_results_are_capped_at_32_devices():
    many = [dev(f"gpu-{i}") for i in range(40)]
    with pytest.raises(AllocationError, match="exceeds the claim limit of 32"):
        allocator([slice_("s", many)]).allocate([claim("c", req(count=33))], N1)


def test_devices_with_binding_conditions_are_not_selectable():
    bound = dev("gpu-0", bindingConditions=["attached"], bindingFailureConditions=["failed"])
    assert allocator([slice_("s", [bound])]).allocate([claim("c", req())], N1) is None


def test_deterministic_pool_order():
    a = slice_("a", [dev("x")], pool="b-pool")
    b = slice_("b", [dev("x")], pool="a-pool")
    assert devices_of(allocator([a, b]).allocate([claim("c", req())], N1)) == [["req=a-pool/x"]]
    assert devices_of(allocator([b, a]).allocate([claim("c", req())], N1)) == [["req=a-pool/x"]]
